//! Linear algebra (§2.6): MatMul, DotGeneral, FusedMatMulBiasAct.

use super::{arity, dtype_in, same_dtype};
use crate::op::{DotGeneralAttrs, UnaryOp};
use crate::shape::broadcast_shapes;
use crate::{bail, DTypeSet, Dim, Result, Shape, TensorType};

pub(crate) fn matmul(ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "MatMul")?;
    matmul_type(&ins[0], &ins[1]).map(|t| vec![t])
}

fn matmul_type(a: &TensorType, b: &TensorType) -> Result<TensorType> {
    same_dtype(&[a.clone(), b.clone()], "MatMul")?;
    dtype_in(a, DTypeSet::FLOAT, "MatMul input a")?;
    if a.rank() < 2 || b.rank() < 2 {
        bail!(Shape, "MatMul needs rank >= 2 operands (reshape vectors to matrices), got a {a} and b {b}");
    }
    let (ra, rb) = (a.rank(), b.rank());
    let (m, ka) = (&a.shape.0[ra - 2], &a.shape.0[ra - 1]);
    let (kb, n) = (&b.shape.0[rb - 2], &b.shape.0[rb - 1]);
    if ka != kb {
        bail!(Shape, "MatMul contraction mismatch: a {a} has K = {ka}, b {b} has K = {kb}");
    }
    let batch = broadcast_shapes(&Shape(a.shape.0[..ra - 2].to_vec()), &Shape(b.shape.0[..rb - 2].to_vec()))
        .map_err(|e| e.context(format!("MatMul batch dims of a {a} and b {b}")))?;
    let mut dims = batch.0;
    dims.push(m.clone());
    dims.push(n.clone());
    Ok(TensorType { dtype: a.dtype, shape: Shape(dims) })
}

pub(crate) fn dot_general(at: &DotGeneralAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "DotGeneral")?;
    same_dtype(ins, "DotGeneral")?;
    dtype_in(&ins[0], DTypeSet::FLOAT, "DotGeneral input lhs")?;
    let (l, r) = (&ins[0], &ins[1]);
    if at.lhs_batch.len() != at.rhs_batch.len() || at.lhs_contract.len() != at.rhs_contract.len() {
        bail!(Shape, "DotGeneral paired axis lists differ in length: {at:?}");
    }
    check_axes(&at.lhs_batch, &at.lhs_contract, l.rank(), "lhs")?;
    check_axes(&at.rhs_batch, &at.rhs_contract, r.rank(), "rhs")?;
    let pairs = at.lhs_batch.iter().zip(&at.rhs_batch).chain(at.lhs_contract.iter().zip(&at.rhs_contract));
    for (&la, &ra) in pairs {
        if l.shape.0[la] != r.shape.0[ra] {
            bail!(Shape, "DotGeneral pairs lhs {l} axis {la} with rhs {r} axis {ra}, whose dims differ");
        }
    }
    let mut dims: Vec<Dim> = at.lhs_batch.iter().map(|&a| l.shape.0[a].clone()).collect();
    dims.extend(free_axes(l.rank(), &at.lhs_batch, &at.lhs_contract).map(|a| l.shape.0[a].clone()));
    dims.extend(free_axes(r.rank(), &at.rhs_batch, &at.rhs_contract).map(|a| r.shape.0[a].clone()));
    let t = TensorType { dtype: l.dtype, shape: Shape(dims) };
    super::rank_ok(&t)?;
    Ok(vec![t])
}

/// Axes of a DotGeneral operand that are neither batch nor contracting, ascending.
pub fn free_axes<'a>(rank: usize, batch: &'a [usize], contract: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    (0..rank).filter(move |a| !batch.contains(a) && !contract.contains(a))
}

fn check_axes(batch: &[usize], contract: &[usize], rank: usize, side: &str) -> Result<()> {
    let all: Vec<usize> = batch.iter().chain(contract).copied().collect();
    for (i, &a) in all.iter().enumerate() {
        if a >= rank {
            bail!(Axis, "DotGeneral {side} axis {a} out of range for rank {rank}");
        }
        if all[..i].contains(&a) {
            bail!(Axis, "DotGeneral {side} axis {a} is repeated or both batch and contracting");
        }
    }
    Ok(())
}

pub(crate) fn fused_matmul(act: Option<UnaryOp>, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "FusedMatMulBiasAct")?;
    let out = matmul_type(&ins[0], &ins[1])?;
    if ins[2].dtype != out.dtype {
        bail!(DType, "FusedMatMulBiasAct bias {} must have the dtype of a ({})", ins[2], out.dtype);
    }
    let b = broadcast_shapes(&out.shape, &ins[2].shape)?;
    if b != out.shape {
        bail!(Shape, "FusedMatMulBiasAct bias {} would enlarge the matmul output {}", ins[2], out);
    }
    if let Some(u) = act {
        if !u.dtypes().contains(out.dtype) {
            bail!(DType, "FusedMatMulBiasAct activation {} does not accept {}", u.name(), out.dtype);
        }
    }
    Ok(vec![out])
}
