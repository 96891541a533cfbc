//! SoftmaxCrossEntropy (§2.7.3) and its backward (§2.16.3) along any class axis: one workgroup per
//! slice with tree max/sums (`shaders::ordering::loss_module`, on the norm family's helpers).

use super::super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::super::reduce::workgroup_grid;
use super::{around, check_size, shader};
use crate::pipelines::BindKind;
use backend_api::{bail, Result};
use bytemuck::{Pod, Zeroable};

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

/// Lowers the forward loss (`backward` false) or its gradient.
pub fn lower(ctx: &LowerCtx<'_>, axis: usize, backward: bool) -> Result<Lowered> {
    let (d, dims) = &ctx.inputs[0];
    let d = *d;
    let what = if backward { "SoftmaxCrossEntropyBackward" } else { "SoftmaxCrossEntropy" };
    let source = shader(what, shaders::ordering::loss_module(backward, d), d)?;
    check_size(what, dims)?;
    let (outer, len, inner) = around(dims, axis)?;
    let rows = outer * inner;
    let out_n = ctx.out_numel(0);
    if rows == 0 || out_n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    if len == 0 {
        bail!(Shape, "{what} class axis {axis} of {dims:?} is empty");
    }
    let p = Params { rows: rows as u32, len: len as u32, inner: inner as u32, pad0: 0, eps: 0.0, pad1: [0; 3] };
    let mut bindings: Vec<(Buf, BindKind)> = (0..ctx.inputs.len()).map(|k| (Buf::In(k), BindKind::Read)).collect();
    bindings.push((Buf::Out(0), BindKind::Write));
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, out_n)));
    }
    kernels.push(Kernel {
        source,
        bindings,
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: workgroup_grid(ctx, rows)?,
    });
    Ok(Lowered::Kernels { temps: vec![], kernels })
}
