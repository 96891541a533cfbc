//! Host tensors: an owned [`Tensor`] and a borrowed [`TensorView`], each a dtype, a static shape and
//! the little-endian bytes of the elements (§1.1).

use crate::shape::{nbytes, try_numel};
use crate::{bail, DType, Result};
use half::{bf16, f16};

/// One complex number of two F32 values, real part first (the layout of `C64`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Complex32 {
    /// Real part.
    pub re: f32,
    /// Imaginary part.
    pub im: f32,
}

/// A Rust type that stores one element of a dtype.
pub trait Element: Copy + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
    /// Appends the little-endian bytes of `self`.
    fn write_le(self, out: &mut Vec<u8>);
    /// Reads one element from `DTYPE.size()` little-endian bytes (missing bytes read as 0, extra
    /// bytes are ignored: never a panic).
    fn read_le(b: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.iter_mut().zip(b).for_each(|(d, s)| *d = *s);
                <$t>::from_le_bytes(a)
            }
        }
    };
}
element!(f32, F32);
element!(f64, F64);
element!(f16, F16);
element!(bf16, BF16);
element!(i64, I64);
element!(i32, I32);
element!(i8, I8);
element!(u32, U32);
element!(u8, U8);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    /// Any byte other than 0 reads as true (§1.1).
    fn read_le(b: &[u8]) -> Self {
        b.first().is_some_and(|&x| x != 0)
    }
}

impl Element for Complex32 {
    const DTYPE: DType = DType::C64;
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.re.to_le_bytes());
        out.extend_from_slice(&self.im.to_le_bytes());
    }
    fn read_le(b: &[u8]) -> Self {
        Complex32 { re: f32::read_le(b), im: f32::read_le(b.get(4..).unwrap_or_default()) }
    }
}

/// Checks that `len` bytes are exactly a `dtype` tensor of `shape`; a shape whose size overflows is
/// the `Shape` error of [`nbytes`], whatever `len` is (so `[2^62, 4]` with 0 bytes is refused).
fn check_len(dtype: DType, shape: &[usize], len: usize) -> Result<()> {
    let want = nbytes(dtype, shape).map_err(|e| e.context(format!("{dtype} tensor of shape {shape:?}")))?;
    if want != len {
        bail!(Input, "{dtype} tensor of shape {shape:?} needs {want} bytes, got {len}");
    }
    Ok(())
}

/// An owned tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl Tensor {
    /// A tensor from raw little-endian bytes; errs when the length does not match the shape.
    pub fn from_bytes(dtype: DType, shape: &[usize], data: Vec<u8>) -> Result<Tensor> {
        check_len(dtype, shape, data.len())?;
        Ok(Tensor { dtype, shape: shape.to_vec(), data })
    }

    /// A tensor from typed values; errs when `values.len()` does not match the shape.
    pub fn from_slice<T: Element>(shape: &[usize], values: &[T]) -> Result<Tensor> {
        let want = nbytes(T::DTYPE, shape).map_err(|e| e.context(format!("{} tensor of shape {shape:?}", T::DTYPE)))?;
        let n = try_numel(shape)?;
        if values.len() != n {
            bail!(Input, "shape {shape:?} holds {n} elements, got {} values", values.len());
        }
        let mut data = Vec::with_capacity(want);
        for v in values {
            v.write_le(&mut data);
        }
        Ok(Tensor { dtype: T::DTYPE, shape: shape.to_vec(), data })
    }

    /// A rank-0 tensor holding `v`.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        let mut data = Vec::new();
        v.write_le(&mut data);
        Tensor { dtype: T::DTYPE, shape: vec![], data }
    }

    /// An all-zero-bytes tensor (0, false, +0.0), for shapes known to be small (tests, literals).
    /// A shape whose byte size overflows gives an empty-data tensor here rather than wrapping;
    /// sizes from a graph, a file or a caller go through [`Tensor::try_zeros`].
    pub fn zeros(dtype: DType, shape: &[usize]) -> Tensor {
        Tensor::try_zeros(dtype, shape).unwrap_or(Tensor { dtype, shape: vec![0], data: Vec::new() })
    }

    /// An all-zero-bytes tensor, or a `Shape` error when its byte size exceeds
    /// [`MAX_TENSOR_BYTES`](crate::shape::MAX_TENSOR_BYTES), or a `Capacity` error when the host
    /// cannot allocate it.
    pub fn try_zeros(dtype: DType, shape: &[usize]) -> Result<Tensor> {
        let len = nbytes(dtype, shape).map_err(|e| e.context(format!("{dtype} tensor of shape {shape:?}")))?;
        let mut data = Vec::new();
        if data.try_reserve_exact(len).is_err() {
            bail!(Capacity, "cannot allocate {len} bytes for a {dtype} tensor of shape {shape:?}");
        }
        data.resize(len, 0);
        Ok(Tensor { dtype, shape: shape.to_vec(), data })
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The element count (the data length is checked against the shape at construction).
    pub fn numel(&self) -> usize {
        self.data.len() / self.dtype.size()
    }
    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }
    /// Consumes the tensor, returning its bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.data
    }
    /// A borrowed view.
    pub fn view(&self) -> TensorView<'_> {
        TensorView { dtype: self.dtype, shape: &self.shape, data: &self.data }
    }
    /// The values as `T`; errs when `T` is not this tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.view().to_vec()
    }
    /// The same bytes under another shape of equal element count.
    pub fn reshaped(mut self, shape: &[usize]) -> Result<Tensor> {
        if try_numel(shape)? != self.numel() {
            bail!(Shape, "cannot reshape {:?} to {shape:?}: element counts differ", self.shape);
        }
        self.shape = shape.to_vec();
        Ok(self)
    }
}

/// A borrowed tensor: what `run` and `set_param` take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorView<'a> {
    dtype: DType,
    shape: &'a [usize],
    data: &'a [u8],
}

impl<'a> TensorView<'a> {
    /// A view of raw little-endian bytes; errs when the length does not match the shape.
    pub fn new(dtype: DType, shape: &'a [usize], data: &'a [u8]) -> Result<TensorView<'a>> {
        check_len(dtype, shape, data.len())?;
        Ok(TensorView { dtype, shape, data })
    }
    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// The shape.
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }
    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }
    /// The element count (the data length is checked against the shape at construction).
    pub fn numel(&self) -> usize {
        self.data.len() / self.dtype.size()
    }
    /// An owned copy.
    pub fn to_owned(&self) -> Tensor {
        Tensor { dtype: self.dtype, shape: self.shape.to_vec(), data: self.data.to_vec() }
    }
    /// The values as `T`; errs when `T` is not this tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            bail!(DType, "tensor holds {}, asked for {}", self.dtype, T::DTYPE);
        }
        Ok(self.data.chunks_exact(self.dtype.size()).map(T::read_le).collect())
    }
    /// Every element converted to f64 (C64: the real part); for checks and statistics.
    pub fn to_f64_lossy(&self) -> Vec<f64> {
        let s = self.dtype.size();
        self.data.chunks_exact(s).map(|b| element_to_f64(self.dtype, b)).collect()
    }
}

/// One element's value as f64 (C64: the real part; I64/U64 beyond 2^53 round).
pub fn element_to_f64(dtype: DType, b: &[u8]) -> f64 {
    match dtype {
        DType::F32 => f32::read_le(b) as f64,
        DType::F16 => f16::read_le(b).to_f64(),
        DType::BF16 => bf16::read_le(b).to_f64(),
        DType::F64 => f64::read_le(b),
        DType::I64 => i64::read_le(b) as f64,
        DType::I32 => i32::read_le(b) as f64,
        DType::I8 => i8::read_le(b) as f64,
        DType::U32 => u32::read_le(b) as f64,
        DType::U8 => u8::read_le(b) as f64,
        DType::Bool => f64::from(u8::from(bool::read_le(b))),
        DType::C64 => f32::read_le(b) as f64,
    }
}
