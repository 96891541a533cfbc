//! Unary, Binary, Compare, Where, Fma, Cast: one broadcasting map kernel (`elementwise.wgsl`)
//! with one expression per (op, dtype) from `shaders::elementwise`.

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::{collapse, push_u32_array, Grid};
use crate::pipelines::BindKind;
use backend_api::op::Op;
use backend_api::shape::broadcast_strides;
use backend_api::{bail, Result};
use shaders::elementwise::{module_indexed, ElemKind, Indexing};

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
    if kind == ElemKind::Cast && in_dtypes.first() == Some(out_dtype) {
        // Cast to the same dtype is the identity on the bits (NaN payloads included): no work.
        return Ok(Lowered::Alias(0));
    }
    let strides: Vec<Vec<usize>> = ctx.inputs.iter().map(|(_, d)| broadcast_strides(d, out_dims)).collect();
    let (dims, strides) = collapse(out_dims, &strides);
    // One collapsed axis means every operand is contiguous (stride 1) or a scalar (stride 0).
    let indexing = if dims.len() <= 1 { Indexing::Flat } else { Indexing::Strided };
    let Some(src) = module_indexed(kind, &in_dtypes, *out_dtype, indexing) else {
        bail!(Unsupported, "no GPU kernel for {kind:?} on {in_dtypes:?} -> {out_dtype}");
    };
    let source = src.map_err(|e| backend_api::Error::new(backend_api::ErrorKind::Device, e))?;
    let n = ctx.out_numel(0);
    if n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    let mut params = Vec::new();
    // Word 2 (`pad0`) must stay 0: the shaders use it as an opaque zero (see
    // `shaders::elementwise`), which keeps drivers from folding error-free transformations.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceCaps;
    use backend_api::op::BinaryOp;
    use backend_api::{DType, Node, NodeId, TensorType, Value};

    fn caps() -> DeviceCaps {
        DeviceCaps { description: "test".into(), f64: true, i64: true, limits: wgpu::Limits::default() }
    }

    fn lower_node(op: Op, ins: &[(DType, &[usize])], out: (DType, &[usize])) -> Lowered {
        let node = Node {
            op,
            inputs: (0..ins.len()).map(|k| Value::first(NodeId(k))).collect(),
            outputs: vec![TensorType::new(out.0, out.1)],
        };
        let caps = caps();
        let ctx = LowerCtx {
            node: &node,
            inputs: ins.iter().map(|(d, s)| (*d, s.to_vec())).collect(),
            outputs: vec![(out.0, out.1.to_vec())],
            caps: &caps,
        };
        lower(&ctx).unwrap()
    }

    fn words_of(params: &[u8]) -> Vec<u32> {
        params.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn same_dtype_cast_is_an_alias() {
        let l = lower_node(Op::Cast { to: DType::F16 }, &[(DType::F16, &[5])], (DType::F16, &[5]));
        assert!(matches!(l, Lowered::Alias(0)));
    }

    #[test]
    fn packed_outputs_are_zeroed_first_and_empty_outputs_do_nothing() {
        let Lowered::Kernels { kernels, .. } =
            lower_node(Op::Cast { to: DType::U8 }, &[(DType::F32, &[7])], (DType::U8, &[7]))
        else {
            panic!("expected kernels");
        };
        assert_eq!(kernels.len(), 2);
        assert_eq!(kernels[0].bindings, vec![(Buf::Out(0), BindKind::Write)]);
        let Lowered::Kernels { kernels, .. } =
            lower_node(Op::Cast { to: DType::U8 }, &[(DType::F32, &[0, 3])], (DType::U8, &[0, 3]))
        else {
            panic!("expected kernels");
        };
        assert!(kernels.is_empty());
    }

    #[test]
    fn broadcast_strides_and_the_opaque_zero() {
        let op = Op::Binary(BinaryOp::Add);
        let Lowered::Kernels { kernels, .. } =
            lower_node(op, &[(DType::F32, &[3, 1]), (DType::F32, &[4])], (DType::F32, &[3, 4]))
        else {
            panic!("expected kernels");
        };
        assert_eq!(kernels.len(), 1);
        let w = words_of(&kernels[0].params);
        // n, rank, pad0 (always 0: the shaders' opaque zero), pad1
        assert_eq!(&w[..4], &[12, 2, 0, 0]);
        assert_eq!(&w[4..6], &[3, 4]);
        assert_eq!(&w[12..14], &[1, 0]);
        assert_eq!(&w[20..22], &[0, 1]);
        assert_eq!(kernels[0].grid, Grid::Threads(12));
    }
}
