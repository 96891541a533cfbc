//! `DotGeneral` → Transpose + Reshape + MatMul; `FusedMatMulBiasAct` → MatMul + Binary Add + Unary
//! (§2.6.2–2.6.3).

use crate::infer::linalg::free_axes;
use crate::op::{BinaryOp, DotGeneralAttrs, UnaryOp};
use crate::{bail, GraphBuilder, Result, Value};

/// Product of the dims of `axes`, checked.
fn prod(dims: &[usize], axes: &[usize]) -> Result<i64> {
    let mut p: usize = 1;
    for &a in axes {
        let Some(&d) = dims.get(a) else { bail!(Axis, "DotGeneral axis {a} out of range for {dims:?}") };
        match p.checked_mul(d) {
            Some(n) => p = n,
            None => bail!(Shape, "DotGeneral: the product of dims {dims:?} over {axes:?} overflows"),
        }
    }
    match i64::try_from(p) {
        Ok(n) => Ok(n),
        Err(_) => bail!(Shape, "DotGeneral: {p} elements do not fit a Reshape entry"),
    }
}

/// `DotGeneral(lhs, rhs)` built from Transpose, Reshape and a batched MatMul: each operand is
/// permuted to (batch, free, contracting) order, flattened to `[B, M, K]` / `[B, K, N]`, multiplied,
/// and the product reshaped to the op's output dims.
pub fn dot_general(g: &mut GraphBuilder, lhs: Value, rhs: Value, a: &DotGeneralAttrs) -> Result<Value> {
    let (lt, rt) = (g.value_type(lhs)?.clone(), g.value_type(rhs)?.clone());
    let (Some(ld), Some(rd)) = (lt.shape.as_static(), rt.shape.as_static()) else {
        bail!(Unsupported, "the DotGeneral decomposition needs static dims; got {lt} and {rt}")
    };
    let lfree: Vec<usize> = free_axes(ld.len(), &a.lhs_batch, &a.lhs_contract).collect();
    let rfree: Vec<usize> = free_axes(rd.len(), &a.rhs_batch, &a.rhs_contract).collect();
    let lperm: Vec<i64> = a.lhs_batch.iter().chain(&lfree).chain(&a.lhs_contract).map(|&x| x as i64).collect();
    let rperm: Vec<i64> = a.rhs_batch.iter().chain(&a.rhs_contract).chain(&rfree).map(|&x| x as i64).collect();
    let (b, m, k, n) = (prod(&ld, &a.lhs_batch)?, prod(&ld, &lfree)?, prod(&ld, &a.lhs_contract)?, prod(&rd, &rfree)?);
    let l = g.transpose(lhs, &lperm)?;
    let l = g.reshape(l, &[b, m, k])?;
    let r = g.transpose(rhs, &rperm)?;
    let r = g.reshape(r, &[b, k, n])?;
    let out = g.matmul(l, r)?;
    let mut dims = Vec::with_capacity(a.lhs_batch.len() + lfree.len() + rfree.len());
    for (d, axes) in [(&ld, &a.lhs_batch), (&ld, &lfree), (&rd, &rfree)] {
        for &x in axes.iter() {
            dims.push(prod(d, &[x])?);
        }
    }
    g.reshape(out, &dims)
}

/// `act(MatMul(a, b) + bias)` from MatMul, Binary Add and Unary.
pub fn fused_matmul(g: &mut GraphBuilder, a: Value, b: Value, bias: Value, act: Option<UnaryOp>) -> Result<Value> {
    let mm = g.matmul(a, b)?;
    let s = g.binary(BinaryOp::Add, mm, bias)?;
    match act {
        Some(u) => g.unary(u, s),
        None => Ok(s),
    }
}
