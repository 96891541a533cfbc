//! The lowering builder: what a family's kernel builders take and produce.
//!
//! A builder takes [`Operand`]s — a byte [`Window`] of a buffer, a dtype and dims — never a node's
//! input positions, so one lowering can chain other families' builders on scratch memory
//! (GEMM → softmax → GEMM inside one node) by passing them [`Lower::temp`] operands. Kernels are
//! appended in execution order with [`Lower::push`]; outputs that are another operand's memory
//! unchanged (Reshape, an identity copy, a contiguous slice) are declared with [`Lower::alias`].
//!
//! Buffers are named relative to the node ([`Buf`]); `compile.rs` resolves them to byte ranges of
//! the memory plan once every node is lowered.

use super::Grid;
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::{bail, ensure, DType, Result};
use shaders::params::{Params, ZeroParams};

/// A buffer a kernel binds, named relative to the node being lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buf {
    /// The memory of the node's input `k`.
    In(usize),
    /// The memory of the node's output `k`.
    Out(usize),
    /// Scratch buffer `k` of this node, made by [`Lower::temp`] or [`Lower::temp_bytes`].
    Temp(usize),
}

/// A byte range inside a [`Buf`]. Windows of one value let a later step bind a tensor larger than
/// one binding piecewise, and let a lowering read a slice without a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    /// The buffer.
    pub buf: Buf,
    /// Byte offset from the start of the buffer's value (a multiple of 4).
    pub offset: u64,
    /// Byte length.
    pub bytes: u64,
}

/// A dense row-major tensor in a window: what kernel builders read and write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// Where its bytes are.
    pub window: Window,
    /// Element type.
    pub dtype: DType,
    /// Static dims.
    pub dims: Vec<usize>,
}

/// Bytes of `numel` elements of `dtype`, checked.
pub fn tensor_bytes(dtype: DType, dims: &[usize]) -> Result<u64> {
    let n = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let b = n.and_then(|n| n.checked_mul(dtype.size())).and_then(|b| u64::try_from(b).ok());
    match b {
        Some(b) => Ok(b),
        None => bail!(DeviceLimit, "a {dtype} tensor of dims {dims:?} has more bytes than fit 64 bits"),
    }
}

/// `v` as a kernel's u32 param, or a `DeviceLimit` error naming `what`.
pub fn u32_of(v: usize, what: &str) -> Result<u32> {
    match u32::try_from(v) {
        Ok(x) => Ok(x),
        Err(_) => bail!(DeviceLimit, "{v} {what} do not fit the kernel's 32-bit indices"),
    }
}

/// `v` zero-padded into `N` vec4s of u32 (a WGSL `array<vec4<u32>, N>` params field), or a
/// `DeviceLimit` error when it has more than `4·N` entries or one exceeds 32 bits.
pub fn vec4s<const N: usize>(v: &[usize], what: &str) -> Result<[[u32; 4]; N]> {
    ensure!(v.len() <= 4 * N, DeviceLimit, "{} {what} exceed the kernel's {}", v.len(), 4 * N);
    let mut out = [[0u32; 4]; N];
    for (k, &x) in v.iter().enumerate() {
        out[k / 4][k % 4] = u32_of(x, what)?;
    }
    Ok(out)
}

impl Operand {
    /// The whole value in `buf`.
    pub fn whole(buf: Buf, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        Ok(Operand { window: Window { buf, offset: 0, bytes }, dtype, dims })
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// Number of u32 words its bytes cover (1- and 2-byte dtypes are packed in words).
    pub fn words(&self) -> u64 {
        self.window.bytes.div_ceil(4)
    }

    /// The same window read as other dims with the same element count (a reshape).
    pub fn reshaped(&self, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(self.dtype, &dims)?;
        ensure!(bytes == self.window.bytes, Shape, "cannot view {:?} as {dims:?}", self.dims);
        Ok(Operand { window: self.window, dtype: self.dtype, dims })
    }

    /// The `dims`-shaped tensor starting `elems` elements into this one. Its byte offset must be
    /// a multiple of 4 (a packed dtype's window starts on a word).
    pub fn slice(&self, elems: usize, dims: Vec<usize>) -> Result<Operand> {
        let start = tensor_bytes(self.dtype, &[elems])?;
        let bytes = tensor_bytes(self.dtype, &dims)?;
        let end = start.checked_add(bytes);
        if end.is_none_or(|e| e > self.window.bytes) {
            bail!(Shape, "a {dims:?} slice at element {elems} exceeds the {:?} operand", self.dims);
        }
        ensure!(start % 4 == 0, Shape, "a {} slice at element {elems} does not start on a 4-byte word", self.dtype);
        let window = Window { buf: self.window.buf, offset: self.window.offset + start, bytes };
        Ok(Operand { window, dtype: self.dtype, dims })
    }
}

/// One dispatch of one kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Complete WGSL source (entry point `main`).
    pub source: String,
    /// Storage bindings 1.. in order (binding 0 is the params uniform).
    pub bindings: Vec<(Window, BindKind)>,
    /// Bytes of the params uniform (padded by the runtime to 16).
    pub params: Vec<u8>,
    /// Invocation grid.
    pub grid: Grid,
}

/// What lowering one node produced.
#[derive(Clone, Debug, Default)]
pub struct Lowering {
    /// Scratch buffer sizes in bytes (`Buf::Temp(k)` is entry `k`).
    pub temps: Vec<u64>,
    /// Dispatches in order.
    pub kernels: Vec<Kernel>,
    /// For each output, the window whose memory it is, if it aliases one (no kernel writes it).
    pub aliases: Vec<Option<Window>>,
}

/// The builder one node is lowered with.
pub struct Lower<'a> {
    caps: &'a DeviceCaps,
    out: Lowering,
}

impl<'a> Lower<'a> {
    /// A builder for a node with `outputs` outputs.
    pub fn new(caps: &'a DeviceCaps, outputs: usize) -> Lower<'a> {
        Lower { caps, out: Lowering { aliases: vec![None; outputs], ..Lowering::default() } }
    }

    /// The device's capabilities and limits.
    pub fn caps(&self) -> &'a DeviceCaps {
        self.caps
    }

    /// A grid of `n` workgroups (one per row of a row kernel), folded into 2-D when `n` exceeds
    /// the device's per-dimension limit; the kernel skips the ids past `n`.
    pub fn workgroups(&self, n: usize) -> Result<Grid> {
        let max = (self.caps.limits.max_compute_workgroups_per_dimension as usize).max(1);
        let x = n.clamp(1, max);
        let y = n.div_ceil(x).max(1);
        if y > max {
            bail!(DeviceLimit, "{n} workgroups exceed the device's {max}x{max} grid");
        }
        Ok(Grid::Workgroups([u32_of(x, "workgroups")?, u32_of(y, "workgroups")?, 1]))
    }

    /// A scratch buffer of `bytes` bytes, live only while this node runs.
    pub fn temp_bytes(&mut self, bytes: u64) -> Window {
        self.out.temps.push(bytes);
        Window { buf: Buf::Temp(self.out.temps.len() - 1), offset: 0, bytes }
    }

    /// A scratch tensor, live only while this node runs.
    pub fn temp(&mut self, dtype: DType, dims: Vec<usize>) -> Result<Operand> {
        let bytes = tensor_bytes(dtype, &dims)?;
        Ok(Operand { window: self.temp_bytes(bytes), dtype, dims })
    }

    /// Appends a dispatch.
    pub fn push(&mut self, k: Kernel) {
        self.out.kernels.push(k);
    }

    /// Appends a kernel that zeroes `o`'s words: packed (1- and 2-byte) dtypes are stored with
    /// atomic ORs, which need zeroed memory.
    pub fn zero(&mut self, o: &Operand) -> Result<()> {
        self.push(zero_kernel(o.window, o.words())?);
        Ok(())
    }

    /// Zeroes `o` when its dtype is stored packed.
    pub fn zero_if_packed(&mut self, o: &Operand) -> Result<()> {
        if shaders::is_packed(o.dtype) {
            self.zero(o)?;
        }
        Ok(())
    }

    /// Declares that output `out` is `src`'s memory unchanged: no kernel writes it.
    pub fn alias(&mut self, out: &Operand, src: &Operand) -> Result<()> {
        let Buf::Out(k) = out.window.buf else { bail!(Shape, "only a node output can alias another operand") };
        ensure!(out.window.offset == 0, Shape, "an aliased output must be its value's whole window");
        ensure!(
            src.window.bytes == out.window.bytes,
            Shape,
            "output {k} of {} bytes cannot alias {} bytes",
            out.window.bytes,
            src.window.bytes
        );
        if matches!(src.window.buf, Buf::Temp(_)) {
            bail!(Shape, "output {k} cannot alias scratch memory, which is freed when the node ends");
        }
        match self.out.aliases.get_mut(k) {
            Some(slot) => *slot = Some(src.window),
            None => bail!(Arity, "the node has no output {k}"),
        }
        Ok(())
    }

    /// The finished lowering.
    pub fn finish(self) -> Lowering {
        self.out
    }
}

/// A kernel that zeroes `words` u32 words of `w`.
pub fn zero_kernel(w: Window, words: u64) -> Result<Kernel> {
    let Ok(n) = u32::try_from(words) else {
        bail!(DeviceLimit, "zeroing {words} words exceeds the kernel's u32 index")
    };
    let params = ZeroParams { n, ..ZeroParams::default() }.to_bytes();
    Ok(Kernel {
        source: shaders::zero_module(),
        bindings: vec![(w, BindKind::Write)],
        params,
        grid: Grid::Threads(words),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_and_reshapes_stay_inside_their_window() {
        let x = Operand::whole(Buf::In(0), DType::F32, vec![4, 8]).unwrap();
        let row = x.slice(8, vec![8]).unwrap();
        assert_eq!(row.window, Window { buf: Buf::In(0), offset: 32, bytes: 32 });
        assert!(x.slice(30, vec![8]).is_err(), "past the end");
        assert!(x.reshaped(vec![32]).is_ok() && x.reshaped(vec![31]).is_err());
        let h = Operand::whole(Buf::In(1), DType::F16, vec![8]).unwrap();
        assert!(h.slice(1, vec![2]).is_err(), "a packed slice must start on a word");
        assert!(h.slice(2, vec![2]).is_ok());
        assert!(Operand::whole(Buf::In(0), DType::F32, vec![1 << 62, 8]).is_err(), "byte count overflows");
    }
}
