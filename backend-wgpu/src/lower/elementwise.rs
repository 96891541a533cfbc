//! Unary, Binary, Compare, Where, Fma, Cast: one broadcasting map kernel (`elementwise.wgsl`)
//! with one expression per (op, dtype) from `shaders::elementwise`.

use super::{collapse, push_u32_array, words, zero_kernel, Buf, Grid, Kernel, LowerCtx, Lowered};
use crate::pipelines::BindKind;
use backend_api::op::Op;
use backend_api::shape::broadcast_strides;
use backend_api::{bail, Result};
use shaders::elementwise::{module, ElemKind};

fn kind(op: &Op) -> Result<ElemKind> {
    Ok(match op {
        Op::Unary(u) => ElemKind::Unary(*u),
        Op::Binary(b) => ElemKind::Binary(*b),
        Op::Compare(c) => ElemKind::Compare(*c),
        Op::Where => ElemKind::Where,
        Op::Fma => ElemKind::Fma,
        Op::Cast { .. } => ElemKind::Cast,
        other => bail!(Unsupported, "{} is not elementwise", backend_api::spec::op_label(other)),
    })
}

/// Lowers an elementwise node to (zero +) map.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    let kind = kind(&ctx.node.op)?;
    let (out_dtype, out_dims) = &ctx.outputs[0];
    let in_dtypes: Vec<_> = ctx.inputs.iter().map(|(d, _)| *d).collect();
    let Some(src) = module(kind, &in_dtypes, *out_dtype) else {
        bail!(Unsupported, "no GPU kernel for {kind:?} on {in_dtypes:?} -> {out_dtype}");
    };
    let source = src.map_err(|e| backend_api::Error::new(backend_api::ErrorKind::Device, e))?;
    let n = ctx.out_numel(0);
    if n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    let strides: Vec<Vec<usize>> = ctx.inputs.iter().map(|(_, d)| broadcast_strides(d, out_dims)).collect();
    let (dims, strides) = collapse(out_dims, &strides);
    let mut params = Vec::new();
    push_u32_array(&mut params, &[n, dims.len(), 0, 0], 1)?;
    push_u32_array(&mut params, &dims, 2)?;
    for k in 0..3 {
        push_u32_array(&mut params, strides.get(k).map_or(&[][..], |s| &s[..]), 2)?;
    }
    let mut bindings: Vec<(Buf, BindKind)> = (0..ctx.inputs.len()).map(|k| (Buf::In(k), BindKind::Read)).collect();
    bindings.push((Buf::Out(0), BindKind::Write));
    let map = Kernel { source, bindings, params, grid: Grid::Threads(n as u64) };
    let mut kernels = Vec::new();
    if shaders::is_packed(*out_dtype) {
        kernels.push(zero_kernel(Buf::Out(0), words(*out_dtype, n)));
    }
    kernels.push(map);
    Ok(Lowered::Kernels { temps: vec![], kernels })
}
