//! Tensor infos: one GGUF tensor header, checked, and the op input it becomes.

use super::reader::Reader;
use super::types::{unsupported_name, GgmlKind, GgmlType};
use crate::op::QuantFormat;
use crate::shape::nbytes;
use crate::{bail, DType, Error, ErrorKind, Result, Slot};
use std::io::Read;

/// GGUF (like ggml) stores at most four dims per tensor.
pub const MAX_DIMS: usize = 4;

/// One tensor's header: its name, ggml type, dims as the file lists them and where its data is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufTensorInfo {
    name: String,
    ggml_type: GgmlType,
    ne: Vec<u64>,
    offset: u64,
    shape: Vec<usize>,
    nbytes: usize,
}

impl GgufTensorInfo {
    /// The tensor's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ggml type.
    pub fn ggml_type(&self) -> GgmlType {
        self.ggml_type
    }

    /// The dims as the file lists them, fastest-varying first (`ne[0]` is `K` of a weight).
    pub fn ne(&self) -> &[u64] {
        &self.ne
    }

    /// The data's offset from the start of the data section.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The quantisation format, for the block types (`None` for F32/F16/BF16).
    pub fn format(&self) -> Option<QuantFormat> {
        self.ggml_type.format()
    }

    /// The dtype of the op input: the float dtype, or U8 for the raw blocks of a block format.
    pub fn dtype(&self) -> DType {
        match self.ggml_type.kind() {
            GgmlKind::Float(d) => d,
            GgmlKind::Quant(_) => DType::U8,
        }
    }

    /// The shape of the op input, row-major: `ne` reversed; for a block format the last (`K`)
    /// becomes `K / QK · BB`, the bytes of one row of blocks (SPEC-ops §2.6.7). A weight with
    /// `ne = [K, N]` is `[N, K]`, or U8 `[N, K / QK · BB]`; one with `ne = [K, N, E]` (a stack of
    /// experts, §2.6.6) is `[E, N, …]`.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The data's length in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// Checks the op input this tensor becomes against a graph's param slot, with an error that
    /// names the tensor and its GGUF type and dims; nothing is read.
    pub fn check_param(&self, slot: &Slot) -> Result<()> {
        crate::check_value(slot, self.dtype(), &self.shape, &mut Vec::new()).map_err(|e| {
            e.context(format_args!(
                "GGUF tensor {:?} ({} with ne {:?}, given as {} {:?})",
                self.name,
                self.ggml_type,
                self.ne,
                self.dtype(),
                self.shape
            ))
        })
    }
}

/// Reads one tensor info (the `i`-th) and checks its type and dims; its offset is checked later,
/// once the data section's start is known.
pub(super) fn read_info<R: Read>(r: &mut Reader<R>, i: u64) -> Result<GgufTensorInfo> {
    let name = r.string(&format_args!("name of tensor {i}"))?;
    let what = format!("tensor {i} ({name:?})");
    let n_dims = r.u32(&format_args!("dim count of {what}"))?;
    if u64::from(n_dims) > MAX_DIMS as u64 {
        bail!(Input, "{what} has {n_dims} dims, GGUF allows at most {MAX_DIMS}");
    }
    let mut ne = Vec::with_capacity(MAX_DIMS);
    for d in 0..n_dims {
        ne.push(r.u64(&format_args!("ne[{d}] of {what}"))?);
    }
    let type_id = r.u32(&format_args!("type of {what}"))?;
    let Some(ggml_type) = GgmlType::from_id(type_id) else {
        let known = unsupported_name(type_id).map(|n| format!(" ({n})")).unwrap_or_default();
        bail!(
            Unsupported,
            "unsupported GGUF tensor type {type_id}{known} for tensor {name:?} (supported: F32, F16, BF16, \
             Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K)"
        );
    };
    let offset = r.u64(&format_args!("data offset of {what}"))?;
    let (shape, nbytes) = op_input_shape(ggml_type, &ne).map_err(|e| e.context(&what))?;
    Ok(GgufTensorInfo { name, ggml_type, ne, offset, shape, nbytes })
}

/// The op input's shape and byte length for a tensor of type `t` and file dims `ne`.
fn op_input_shape(t: GgmlType, ne: &[u64]) -> Result<(Vec<usize>, usize)> {
    let mut shape = Vec::with_capacity(ne.len());
    for &d in ne.iter().rev() {
        let Ok(d) = usize::try_from(d) else { bail!(Shape, "dim {d} (ne {ne:?}) does not fit this host") };
        shape.push(d);
    }
    let dtype = match t.kind() {
        GgmlKind::Float(d) => d,
        GgmlKind::Quant(f) => {
            let (qk, bb) = t.block();
            let Some(k) = shape.last_mut() else {
                bail!(Shape, "a {f:?} tensor needs at least one dim (ne[0] = K), the file lists none")
            };
            if !k.is_multiple_of(qk) {
                bail!(Shape, "{} needs ne[0] (K) a multiple of its block of {qk}, found ne {ne:?}", f.name());
            }
            *k = (*k / qk).checked_mul(bb).ok_or_else(|| {
                Error::new(ErrorKind::Shape, format!("{} row of ne {ne:?} overflows in bytes", f.name()))
            })?;
            DType::U8
        }
    };
    let n = nbytes(dtype, &shape).map_err(|e| e.context(format_args!("{t} ne {ne:?}")))?;
    Ok((shape, n))
}
