//! Lowering of the ordering family: ArgMax/ArgMin (§2.5.2–2.5.3) here, Cumsum/CumsumBackward
//! (§2.5.5–2.5.6) in `ordering/scan.rs`, SoftmaxCrossEntropy(+Backward) (§2.7.3, §2.16.3) in
//! `ordering/loss.rs`, TopK (§2.5.4) in `ordering/topk.rs`, with `shaders::ordering`.
//!
//! Every op works on rows along one axis: row `w = o·inner + j` is the `len` elements at stride
//! `inner` from `o·len·inner + j`, so any axis is addressed without a transpose.

mod loss;
mod scan;
mod topk;

use super::legacy::{Buf, Kernel, LowerCtx, Lowered};
use super::reduce::workgroup_grid;
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{ArgReduceAttrs, Op};
use backend_api::spec::op_label;
use backend_api::{bail, Error, ErrorKind, Result};
use bytemuck::{Pod, Zeroable};
use shaders::ordering::ArgLayout;

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;
/// Rows of at most this many elements are handled serially by one invocation (arg-ops, scans):
/// a workgroup per row would leave most of its 256 invocations idle.
const SHORT_ROW: usize = 64;

/// Lowers one node of this family.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    match &ctx.node.op {
        Op::ArgMax(a) => arg(ctx, a, true),
        Op::ArgMin(a) => arg(ctx, a, false),
        Op::Cumsum(a) => scan::lower(ctx, a.axis, a.exclusive, a.reverse),
        // the transpose of a prefix sum is the prefix sum in the other direction (§2.5.6)
        Op::CumsumBackward(a) => scan::lower(ctx, a.axis, a.exclusive, !a.reverse),
        Op::SoftmaxCrossEntropy(a) => loss::lower(ctx, a.axis, false),
        Op::SoftmaxCrossEntropyBackward(a) => loss::lower(ctx, a.axis, true),
        Op::TopK(a) => topk::lower(ctx, a),
        other => bail!(Unsupported, "{} is not in the ordering family", op_label(other)),
    }
}

/// (outer, len, inner) around `axis` of `dims`.
fn around(dims: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    if axis >= dims.len() {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}");
    }
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    Ok((outer, dims[axis], inner))
}

/// Rejects tensors the u32 indexing of the kernels cannot address.
fn check_size(what: &str, dims: &[usize]) -> Result<()> {
    let n: usize = dims.iter().product();
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{what} {dims:?} has more than 2^31 elements");
    }
    Ok(())
}

/// Maps a shader rendering error to a `Device` error.
fn shader(what: &str, src: Option<std::result::Result<String, String>>, d: backend_api::DType) -> Result<String> {
    match src {
        Some(s) => s.map_err(|e| Error::new(ErrorKind::Device, format!("{what} shader: {e}"))),
        None => bail!(Unsupported, "no GPU kernel for {what} on {d}"),
    }
}

/// `Params` of `ordering_arg.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ArgParams {
    rows: u32,
    len: u32,
    inner: u32,
    pad0: u32,
}

/// ArgMax (`max`) / ArgMin: one workgroup per row with a tree reduction of (value, index).
fn arg(ctx: &LowerCtx<'_>, a: &ArgReduceAttrs, max: bool) -> Result<Lowered> {
    let (d, dims) = &ctx.inputs[0];
    let what = if max { "ArgMax" } else { "ArgMin" };
    check_size(what, dims)?;
    let (outer, len, inner) = around(dims, a.axis)?;
    let layout = if len <= SHORT_ROW { ArgLayout::Threads } else { ArgLayout::Rows };
    let source = shader(what, shaders::ordering::arg_module(max, *d, a.index_dtype, layout), *d)?;
    let rows = outer * inner;
    if rows == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    if len == 0 {
        bail!(Shape, "{what} along an empty axis {} of {dims:?}", a.axis);
    }
    let p = ArgParams { rows: rows as u32, len: len as u32, inner: inner as u32, pad0: 0 };
    let kernel = Kernel {
        source,
        bindings: vec![(Buf::In(0), BindKind::Read), (Buf::Out(0), BindKind::Write)],
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: match layout {
            ArgLayout::Threads => Grid::Threads(rows as u64),
            ArgLayout::Rows => workgroup_grid(ctx, rows)?,
        },
    };
    Ok(Lowered::Kernels { temps: vec![], kernels: vec![kernel] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn around_any_axis() {
        assert_eq!(around(&[2, 3, 4], 0).unwrap(), (1, 2, 12));
        assert_eq!(around(&[2, 3, 4], 1).unwrap(), (2, 3, 4));
        assert_eq!(around(&[2, 3, 4], 2).unwrap(), (6, 4, 1));
        assert!(around(&[2], 1).is_err());
    }
}
