//! MatMul, DotGeneral, FusedMatMulBiasAct (§2.6); GroupedMatMul in `linalg/grouped.rs`, the
//! quantised matmuls in `linalg/quant.rs`. Dot products accumulate in f64 and each output is
//! rounded once. DotGeneral is computed directly from its definition (not by decomposition into
//! Transpose + MatMul), so that it can check that decomposition.
//!
//! Indexing in the inner loops is in range by construction: every shape is checked against the
//! operands before the loops start, and a tensor's element count always matches its shape.

use super::elementwise::float_unary;
use crate::layout::{broadcast_map, broadcast_shape, broadcast_strides, count, for_each_index, offset, strides};
use crate::mem::try_vec;
use crate::value::{floats, from_floats};
use backend_api::op::{DotGeneralAttrs, UnaryOp};
use backend_api::{bail, Result, Tensor};

mod grouped;
mod quant;
pub use grouped::grouped_matmul;
pub use quant::{quant_grouped_matmul, quant_matmul};

/// `out[β, i, j] = Σ_k a[β_a, i, k] · b[β_b, k, j]` with broadcast batch dims.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (shape, v) = matmul_f64(a, b)?;
    from_floats(a.dtype(), &shape, &v)
}

/// `act(MatMul(a, b) + bias)`, kept in f64 until the single final rounding.
pub fn fused_matmul_bias_act(a: &Tensor, b: &Tensor, bias: &Tensor, act: Option<UnaryOp>) -> Result<Tensor> {
    let (shape, mut v) = matmul_f64(a, b)?;
    if bias.dtype() != a.dtype() || broadcast_shape(&[&shape, bias.shape()])? != shape {
        bail!(
            Shape,
            "bias {}{:?} must broadcast to the matmul output {shape:?} without enlarging it",
            bias.dtype(),
            bias.shape()
        );
    }
    let vb = floats(bias, "FusedMatMulBiasAct bias")?;
    let map = broadcast_map(bias.shape(), &shape)?;
    for (y, &i) in v.iter_mut().zip(&map) {
        *y += vb[i];
        if let Some(op) = act {
            *y = float_unary(op, *y)?;
        }
    }
    from_floats(a.dtype(), &shape, &v)
}

/// The matmul output shape and its exact-as-f64 values (unrounded).
fn matmul_f64(a: &Tensor, b: &Tensor) -> Result<(Vec<usize>, Vec<f64>)> {
    let (ad, bd) = (a.shape(), b.shape());
    if a.dtype() != b.dtype() || ad.len() < 2 || bd.len() < 2 || ad[ad.len() - 1] != bd[bd.len() - 2] {
        bail!(
            Shape,
            "MatMul of {}{ad:?} and {}{bd:?}: need equal float dtypes, rank >= 2 and matching K",
            a.dtype(),
            b.dtype()
        );
    }
    let (ra, rb) = (ad.len(), bd.len());
    let (m, k, n) = (ad[ra - 2], ad[ra - 1], bd[rb - 1]);
    let batch = broadcast_shape(&[&ad[..ra - 2], &bd[..rb - 2]])?;
    // Strides in whole matrices of each operand's batch dims, read under broadcasting.
    let (sa, sb) = (broadcast_strides(&ad[..ra - 2], &batch)?, broadcast_strides(&bd[..rb - 2], &batch)?);
    let mut shape = batch.clone();
    shape.extend([m, n]);
    let (va, vb) = (floats(a, "MatMul a")?, floats(b, "MatMul b")?);
    let len = count(&shape)?;
    if len == 0 {
        // No output element: no loop over the (maybe huge) batch around an empty matrix.
        return Ok((shape, Vec::new()));
    }
    let mut out = try_vec(len)?;
    for_each_index(&batch, |bi| {
        let (oa, ob) = (offset(bi, &sa) * m * k, offset(bi, &sb) * k * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0;
                for kk in 0..k {
                    acc += va[oa + i * k + kk] * vb[ob + kk * n + j];
                }
                out.push(acc);
            }
        }
        Ok(())
    })?;
    Ok((shape, out))
}

/// `out[b…, f…, g…] = Σ_c lhs[b, f, c] · rhs[b, g, c]` (§2.6.2).
pub fn dot_general(l: &Tensor, r: &Tensor, at: &DotGeneralAttrs) -> Result<Tensor> {
    let (ld, rd) = (l.shape(), r.shape());
    check_dot_general(ld, rd, at)?;
    let lfree: Vec<usize> =
        (0..ld.len()).filter(|a| !at.lhs_batch.contains(a) && !at.lhs_contract.contains(a)).collect();
    let rfree: Vec<usize> =
        (0..rd.len()).filter(|a| !at.rhs_batch.contains(a) && !at.rhs_contract.contains(a)).collect();
    let (ls, rs) = (strides(ld)?, strides(rd)?);
    // Per output axis: its size and the strides it advances in lhs and in rhs.
    let mut out = Vec::new();
    let (mut lo, mut ro) = (Vec::new(), Vec::new());
    for (&la, &ra) in at.lhs_batch.iter().zip(&at.rhs_batch) {
        out.push(ld[la]);
        lo.push(ls[la]);
        ro.push(rs[ra]);
    }
    for &la in &lfree {
        out.push(ld[la]);
        lo.push(ls[la]);
        ro.push(0);
    }
    for &ra in &rfree {
        out.push(rd[ra]);
        lo.push(0);
        ro.push(rs[ra]);
    }
    let cdims: Vec<usize> = at.lhs_contract.iter().map(|&a| ld[a]).collect();
    let lc: Vec<usize> = at.lhs_contract.iter().map(|&a| ls[a]).collect();
    let rc: Vec<usize> = at.rhs_contract.iter().map(|&a| rs[a]).collect();
    let (vl, vr) = (floats(l, "DotGeneral lhs")?, floats(r, "DotGeneral rhs")?);
    let len = count(&out)?;
    if len == 0 {
        return from_floats(l.dtype(), &out, &[]);
    }
    let mut v = try_vec(len)?;
    for_each_index(&out, |o| {
        let (lb, rb) = (offset(o, &lo), offset(o, &ro));
        let mut acc = 0.0;
        for_each_index(&cdims, |c| {
            acc += vl[lb + offset(c, &lc)] * vr[rb + offset(c, &rc)];
            Ok(())
        })?;
        v.push(acc);
        Ok(())
    })?;
    from_floats(l.dtype(), &out, &v)
}

/// The axis and pairing rules of §2.6.2, checked on concrete shapes.
fn check_dot_general(ld: &[usize], rd: &[usize], at: &DotGeneralAttrs) -> Result<()> {
    if at.lhs_batch.len() != at.rhs_batch.len() || at.lhs_contract.len() != at.rhs_contract.len() {
        bail!(Shape, "DotGeneral paired axis lists differ in length: {at:?}");
    }
    for (axes, d) in [([&at.lhs_batch, &at.lhs_contract], ld), ([&at.rhs_batch, &at.rhs_contract], rd)] {
        let all: Vec<usize> = axes.iter().flat_map(|v| v.iter().copied()).collect();
        for (i, &a) in all.iter().enumerate() {
            if a >= d.len() || all[..i].contains(&a) {
                bail!(Axis, "DotGeneral axes {at:?} invalid for shapes {ld:?} and {rd:?}");
            }
        }
    }
    let pairs = at.lhs_batch.iter().zip(&at.rhs_batch).chain(at.lhs_contract.iter().zip(&at.rhs_contract));
    for (&la, &ra) in pairs {
        if ld[la] != rd[ra] {
            bail!(Shape, "DotGeneral pairs lhs axis {la} ({}) with rhs axis {ra} ({})", ld[la], rd[ra]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn dg(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralAttrs {
        DotGeneralAttrs {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        }
    }

    #[test]
    fn matmul_by_hand() {
        // [[1,2,3],[4,5,6]] · [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
        let a = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let b = t(&[3, 2], &[7., 8., 9., 10., 11., 12.]);
        let y = matmul(&a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [58., 64., 139., 154.]);
    }

    #[test]
    fn matmul_broadcasts_batch_and_handles_k0() {
        let a = t(&[2, 1, 1, 2], &[1., 2., 3., 4.]);
        let b = t(&[3, 2, 1], &[1., 1., 1., 0., 0., 1.]);
        let y = matmul(&a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 3, 1, 1]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [3., 1., 2., 7., 3., 4.]);
        let z = matmul(&t(&[2, 0], &[]), &t(&[0, 3], &[])).unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), [0.0; 6]);
        assert!(matmul(&t(&[2, 3], &[0.; 6]), &t(&[2, 3], &[0.; 6])).is_err());
    }

    #[test]
    fn half_matmul_accumulates_wide() {
        let one = f16::ONE;
        let a = Tensor::from_slice(&[1, 3], &[f16::from_f32(2048.0), one, one]).unwrap();
        let b = Tensor::from_slice(&[3, 1], &[one, one, one]).unwrap();
        assert_eq!(matmul(&a, &b).unwrap().to_vec::<f16>().unwrap(), [f16::from_f32(2050.0)]);
    }

    #[test]
    fn dot_general_equals_transpose_then_matmul() {
        // lhs [K=3, B=2, M=2], rhs [N=2, B=2, K=3]: batch (1, 1), contract (0, 2).
        let l: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
        let r: Vec<f32> = (0..12).map(|i| (i * 7 % 5) as f32 - 1.5).collect();
        let (lt, rt) = (t(&[3, 2, 2], &l), t(&[2, 2, 3], &r));
        let y = dot_general(&lt, &rt, &dg(&[1], &[1], &[0], &[2])).unwrap();
        assert_eq!(y.shape(), &[2, 2, 2]);
        let a = crate::ops::movement::transpose(&lt, &[1, 2, 0]).unwrap(); // [B, M, K]
        let b = crate::ops::movement::transpose(&rt, &[1, 2, 0]).unwrap(); // [B, K, N]
        assert_eq!(y.to_vec::<f32>().unwrap(), matmul(&a, &b).unwrap().to_vec::<f32>().unwrap());
    }

    #[test]
    fn dot_general_outer_product_and_multi_contract() {
        let y = dot_general(&t(&[2], &[1., 2.]), &t(&[3], &[1., 10., 100.]), &dg(&[], &[], &[], &[])).unwrap();
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [1., 10., 100., 2., 20., 200.]);
        // Full contraction of two [2, 2] over both axes, paired crosswise: Σ l[i,j]·r[j,i].
        let l = t(&[2, 2], &[1., 2., 3., 4.]);
        let r = t(&[2, 2], &[5., 6., 7., 8.]);
        let y = dot_general(&l, &r, &dg(&[], &[], &[0, 1], &[1, 0])).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [1. * 5. + 2. * 7. + 3. * 6. + 4. * 8.]);
        let z = dot_general(&t(&[2, 0], &[]), &t(&[0, 2], &[]), &dg(&[], &[], &[1], &[0])).unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), [0.0; 4]);
    }

    #[test]
    fn fused_bias_and_activation() {
        let a = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let b = t(&[3, 2], &[7., 8., 9., 10., 11., 12.]);
        let bias = t(&[2], &[-100., -200.]);
        let y = fused_matmul_bias_act(&a, &b, &bias, Some(UnaryOp::Relu)).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [0., 0., 39., 0.]);
        let y = fused_matmul_bias_act(&a, &b, &bias, None).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [-42., -136., 39., -46.]);
        let k0 = fused_matmul_bias_act(&t(&[1, 0], &[]), &t(&[0, 2], &[]), &bias, Some(UnaryOp::Neg)).unwrap();
        assert_eq!(k0.to_vec::<f32>().unwrap(), [100., 200.]);
        assert!(fused_matmul_bias_act(&a, &b, &t(&[3, 2], &[0.; 6]), None).is_err());
    }
}
