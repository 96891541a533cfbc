//! FusedResidualLayerNorm / FusedResidualRmsNorm (§2.7.8–2.7.9) as one kernel per row: the
//! LayerNorm or RmsNorm row kernel (`shaders::norm::module_fused`) reading `x`, `residual` and
//! the broadcast `bias`, forming `s = (x + residual) + bias` rounded as the unfused Adds round it,
//! normalising `s` and writing `y` and, with `emit_sum`, `s`. No intermediate sum goes through
//! memory except the emitted output.

use super::{pick_source, rows, MAX_ELEMENTS};
use crate::lower::builder::{tensor_bytes, u32_of, vec4s, Kernel, Lower, Operand};
use crate::lower::{collapse, NodeIo};
use crate::pipelines::BindKind;
use backend_api::op::FusedResidualNormAttrs;
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, Result};
use shaders::norm::{module_fused, Fusion, NormKind, NormParams};
use shaders::params::Params;

/// The most collapsed axes of the bias broadcast the kernel's params hold.
const MAX_BIAS_RANK: usize = 8;

/// Lowers a fused residual norm node: `kind` is `LayerNorm` or `RmsNorm`; inputs x, residual,
/// [bias], gamma, [beta]; outputs y, [s].
pub fn fused_residual_norm(
    b: &mut Lower<'_>,
    kind: NormKind,
    a: &FusedResidualNormAttrs,
    io: &NodeIo<'_>,
) -> Result<()> {
    let (x, res) = (io.input(0)?, io.input(1)?);
    let bias = if a.has_bias { Some(io.input(2)?) } else { None };
    let gamma_at = 2 + usize::from(a.has_bias);
    let gamma = io.input(gamma_at)?;
    let beta = if a.has_beta { Some(io.input(gamma_at + 1)?) } else { None };
    let y = io.output(0)?;
    let sum = if a.emit_sum { Some(io.output(1)?) } else { None };
    let d = x.dtype;
    for (what, o) in [("residual", Some(res)), ("y", Some(y)), ("sum", sum)] {
        if let Some(o) = o {
            ensure!(
                o.dtype == d && o.dims == x.dims,
                Shape,
                "Fused{kind:?}: {what} {}{:?} must match x {d}{:?}",
                o.dtype,
                o.dims,
                x.dims
            );
        }
    }
    let (rows, len, _) = rows(kind, &x.dims, a.axis)?;
    let fusion = Fusion { bias: a.has_bias, emit_sum: a.emit_sum };
    let source = pick_source(b, kind, d, (len, 1), |held| module_fused(kind, d, a.has_beta, fusion, held))?;
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Fused{kind:?} input {:?} has more than 2^31 elements", x.dims);
    }
    let (bias_dims, bias_strides) = match bias {
        Some(t) => bias_broadcast(kind, &x.dims, t)?,
        None => (Vec::new(), Vec::new()),
    };
    check_windows(kind, [Some(x), Some(res), Some(y), sum], [Some(gamma), beta], bias, len)?;
    let p = NormParams {
        rows: u32_of(rows, "rows")?,
        len: u32_of(len, "row elements")?,
        inner: 1,
        eps: a.eps,
        bias_rank: u32_of(bias_dims.len(), "bias axes")?,
        bias_dims: vec4s(&bias_dims, "collapsed bias dims")?,
        bias_strides: vec4s(&bias_strides, "bias strides")?,
        ..NormParams::default()
    };
    let reads = [Some(x), Some(res), bias, Some(gamma), beta];
    let mut bindings: Vec<_> = reads.into_iter().flatten().map(|o| (o.window, BindKind::Read)).collect();
    for o in [Some(y), sum].into_iter().flatten() {
        bindings.push((o.window, BindKind::Write));
        b.zero_if_packed(o)?;
    }
    let grid = b.workgroups(rows)?;
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

/// The dims of `x` collapsed with the bias's broadcast strides (0 on the axes it stretches, and
/// right-aligned as §1.4 aligns shapes): at most [`MAX_BIAS_RANK`] axes.
fn bias_broadcast(kind: NormKind, dims: &[usize], bias: &Operand) -> Result<(Vec<usize>, Vec<usize>)> {
    let Some(lead) = dims.len().checked_sub(bias.dims.len()) else {
        bail!(Shape, "Fused{kind:?}: bias {:?} has a higher rank than x {dims:?}", bias.dims);
    };
    // element strides of the bias in its own (contiguous) layout, then 0 where it broadcasts
    let mut strides = vec![0; dims.len()];
    let mut step = 1usize;
    for (k, &bd) in bias.dims.iter().enumerate().rev() {
        let Some(&xd) = dims.get(lead + k) else { bail!(Shape, "Fused{kind:?}: bias axis {k} out of range") };
        ensure!(
            bd == xd || bd == 1,
            Shape,
            "Fused{kind:?}: bias {:?} does not broadcast to x {dims:?} without enlarging it",
            bias.dims
        );
        if let Some(s) = strides.get_mut(lead + k) {
            *s = if bd == 1 { 0 } else { step };
        }
        step = step.saturating_mul(bd);
    }
    let (cd, cs) = collapse(dims, &[strides]);
    let cs = cs.into_iter().next().unwrap_or_default();
    ensure!(
        cd.len() <= MAX_BIAS_RANK,
        DeviceLimit,
        "Fused{kind:?}: bias {:?} broadcast over x {dims:?} alternates over {} axes, more than the kernel's {MAX_BIAS_RANK}",
        bias.dims,
        cd.len()
    );
    Ok((cd, cs))
}

/// What the kernels index: x, residual, y and the sum hold every element; gamma and beta a row;
/// the bias its own elements (the largest broadcast index is one less).
fn check_windows(
    kind: NormKind,
    whole: [Option<&Operand>; 4],
    per_row: [Option<&Operand>; 2],
    bias: Option<&Operand>,
    len: usize,
) -> Result<()> {
    let dtype = whole.first().copied().flatten().map(|o| o.dtype);
    for o in whole.into_iter().chain(per_row).chain([bias]).flatten() {
        let need = tensor_bytes(o.dtype, &o.dims)?;
        ensure!(
            o.window.bytes >= need && Some(o.dtype) == dtype,
            Shape,
            "Fused{kind:?} operand {}{:?} has a window of {} bytes or another dtype than x",
            o.dtype,
            o.dims,
            o.window.bytes
        );
    }
    for o in per_row.into_iter().flatten() {
        ensure!(
            try_numel(&o.dims)? == len,
            Shape,
            "Fused{kind:?}: gamma/beta {:?} must have the {len} elements of a row",
            o.dims
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::Buf;

    fn op(dims: &[usize]) -> Operand {
        Operand::whole(Buf::In(2), backend_api::DType::F32, dims.to_vec()).unwrap()
    }

    /// The kernels a fused RmsNorm node of x `dims` lowers to, with a bias of `bias` dims.
    fn lowered(d: backend_api::DType, dims: &[usize], bias: &[usize], emit_sum: bool) -> Vec<(String, usize)> {
        let mut g = backend_api::GraphBuilder::new();
        let x = g.input("x", d, dims.to_vec()).unwrap();
        let r = g.input("r", d, dims.to_vec()).unwrap();
        let b = g.input("b", d, bias.to_vec()).unwrap();
        let gamma = g.input("g", d, vec![*dims.last().unwrap()]).unwrap();
        let (y, s) = g.fused_residual_rms_norm(x, (r, Some(b)), (gamma, None), -1, 1e-6, emit_sum).unwrap();
        g.output(y).unwrap();
        if let Some(s) = s {
            g.output(s).unwrap();
        }
        let graph = g.build().unwrap();
        let node = graph.nodes().iter().find(|n| matches!(n.op, backend_api::Op::FusedResidualRmsNorm(_))).unwrap();
        let whole = |buf: fn(usize) -> Buf, ds: Vec<Vec<usize>>| {
            ds.into_iter().enumerate().map(|(k, dims)| Operand::whole(buf(k), d, dims).unwrap()).collect()
        };
        let ins = vec![dims.to_vec(), dims.to_vec(), bias.to_vec(), vec![*dims.last().unwrap()]];
        let outs = if emit_sum { vec![dims.to_vec(); 2] } else { vec![dims.to_vec()] };
        let io = NodeIo { node, inputs: whole(Buf::In, ins), outputs: whole(Buf::Out, outs) };
        let mut caps = crate::device::DeviceCaps::for_tests();
        caps.limits.min_storage_buffer_offset_alignment = 32;
        let mut b = Lower::new(&caps, io.outputs.len());
        crate::lower::lower(&mut b, &io).unwrap();
        let l = b.finish();
        l.kernels().iter().map(|k| (k.source.clone(), k.bindings.len())).collect()
    }

    #[test]
    fn one_kernel_reads_every_input_and_writes_both_outputs() {
        // F32 rows of a multiple of 4: the four-wide single-pass form; x, residual, bias, gamma, y, s
        let k = lowered(backend_api::DType::F32, &[3, 40], &[40], true);
        assert_eq!(k.len(), 1);
        assert!(k[0].0.contains("ld4_x1") && k[0].0.contains("sm[j] = v"), "four-wide, emitting the sum");
        assert_eq!(k[0].1, 6);
        // long rows take the multi-pass form; without the sum one output
        let k = lowered(backend_api::DType::F32, &[2, 9000], &[2, 1], false);
        assert_eq!(k.len(), 1);
        assert!(!k[0].0.contains("var v0 ") && !k[0].0.contains("st_sm"));
        // packed F16 outputs are zeroed first, then one row kernel
        let k = lowered(backend_api::DType::F16, &[3, 5], &[], true);
        assert_eq!(k.len(), 3);
        assert!(k[2].0.contains("f32_to_f16_bits(v)") && k[2].0.contains("st_sm"));
    }

    #[test]
    fn bias_broadcast_collapses_runs() {
        let k = NormKind::RmsNorm;
        // a per-feature bias: rows broadcast, features contiguous
        assert_eq!(bias_broadcast(k, &[2, 3, 8], &op(&[8])).unwrap(), (vec![6, 8], vec![0, 1]));
        // the full shape is one flat axis; a scalar none
        assert_eq!(bias_broadcast(k, &[2, 3, 8], &op(&[2, 3, 8])).unwrap(), (vec![48], vec![1]));
        assert_eq!(bias_broadcast(k, &[2, 3, 8], &op(&[])).unwrap(), (vec![48], vec![0]));
        assert_eq!(bias_broadcast(k, &[2, 3, 8], &op(&[3, 1])).unwrap(), (vec![2, 3, 8], vec![0, 1, 0]));
        assert!(bias_broadcast(k, &[3, 8], &op(&[2, 3, 8])).is_err());
        assert!(bias_broadcast(k, &[3, 8], &op(&[4])).is_err());
        let alternating = [2usize; 10];
        let b: Vec<usize> = (0..10).map(|i| if i % 2 == 0 { 1 } else { 2 }).collect();
        let e = bias_broadcast(k, &alternating, &op(&b)).unwrap_err();
        assert_eq!(e.kind(), backend_api::ErrorKind::DeviceLimit);
    }
}
