//! Softmax, LogSoftmax (§2.7.1–2.7.2) along any axis and LayerNorm, RmsNorm (§2.7.4–2.7.5) over
//! the axes from `axis` to the end, with `shaders::norm`: one workgroup per row.
//!
//! A row is `len` elements at stride `inner` starting at `(o·len·inner + j)` for row `o·inner + j`:
//! Softmax along axis `a` has `len = dims[a]`, `inner = Π dims[a+1..]` (no transpose needed); the
//! norms have `len = H = Π dims[axis..]` and `inner = 1`.

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::reduce::workgroup_grid;
use crate::pipelines::BindKind;
use backend_api::op::Op;
use backend_api::spec::op_label;
use backend_api::{bail, Error, ErrorKind, Result};
use bytemuck::{Pod, Zeroable};
use shaders::norm::{module, NormKind};

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// `Params` of `norm_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    rows: u32,
    len: u32,
    inner: u32,
    pad0: u32,
    eps: f32,
    pad1: [u32; 3],
}

/// (kind, axis, eps) of a norm-family node.
fn kind(op: &Op) -> Result<(NormKind, usize, f32)> {
    Ok(match op {
        Op::Softmax { axis } => (NormKind::Softmax, *axis, 0.0),
        Op::LogSoftmax { axis } => (NormKind::LogSoftmax, *axis, 0.0),
        Op::LayerNorm(a) => (NormKind::LayerNorm, a.axis, a.eps),
        Op::RmsNorm(a) => (NormKind::RmsNorm, a.axis, a.eps),
        other => bail!(Unsupported, "{} is not in the norm family", op_label(other)),
    })
}

/// (rows, len, inner) of the workgroup rows.
fn rows(kind: NormKind, dims: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    if axis >= dims.len() {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}");
    }
    let outer: usize = dims[..axis].iter().product();
    Ok(if kind.has_gamma() {
        (outer, dims[axis..].iter().product(), 1)
    } else {
        let inner: usize = dims[axis + 1..].iter().product();
        (outer * inner, dims[axis], inner)
    })
}

/// Lowers a Softmax, LogSoftmax, LayerNorm or RmsNorm node.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    let (kind, axis, eps) = kind(&ctx.node.op)?;
    let (d, dims) = &ctx.inputs[0];
    let d = *d;
    let beta = kind.has_gamma() && ctx.inputs.len() == 3;
    let Some(src) = module(kind, d, beta) else {
        bail!(Unsupported, "no GPU kernel for {kind:?} on {d}");
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("norm shader: {e}")))?;
    let n: usize = dims.iter().product();
    if n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{kind:?} input {dims:?} has more than 2^31 elements");
    }
    let (rows, len, inner) = rows(kind, dims, axis)?;
    let p = Params { rows: rows as u32, len: len as u32, inner: inner as u32, pad0: 0, eps, pad1: [0; 3] };
    let mut bindings: Vec<(Buf, BindKind)> = (0..ctx.inputs.len()).map(|k| (Buf::In(k), BindKind::Read)).collect();
    bindings.push((Buf::Out(0), BindKind::Write));
    let main = Kernel { source, bindings, params: bytemuck::bytes_of(&p).to_vec(), grid: workgroup_grid(ctx, rows)? };
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, n)));
    }
    kernels.push(main);
    Ok(Lowered::Kernels { temps: vec![], kernels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_along_any_axis() {
        assert_eq!(rows(NormKind::Softmax, &[2, 3, 4], 1).unwrap(), (8, 3, 4));
        assert_eq!(rows(NormKind::Softmax, &[2, 3, 4], 2).unwrap(), (6, 4, 1));
        assert_eq!(rows(NormKind::LogSoftmax, &[5], 0).unwrap(), (1, 5, 1));
        assert_eq!(rows(NormKind::LayerNorm, &[2, 3, 4], 1).unwrap(), (2, 12, 1));
        assert_eq!(rows(NormKind::RmsNorm, &[2, 3, 4], 0).unwrap(), (1, 24, 1));
        assert!(rows(NormKind::RmsNorm, &[2], 1).is_err());
    }
}
