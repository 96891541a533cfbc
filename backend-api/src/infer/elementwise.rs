//! Elementwise ops (§2.2): `Unary`, `Binary`, `Compare`, `Where`, `Fma`, `Cast`, and the broadcast rule.

use super::{arity, dtype_in, same_dtype};
use crate::op::{BinaryOp, CompareOp, UnaryOp};
use crate::shape::broadcast_shapes;
use crate::{DType, DTypeSet, Result, Shape, TensorType};

/// Broadcast of every input shape (§1.4).
pub fn broadcast_all(ins: &[TensorType]) -> Result<Shape> {
    let mut s = Shape::default();
    for t in ins {
        s = broadcast_shapes(&s, &t.shape)?;
    }
    Ok(s)
}

pub(crate) fn unary(op: UnaryOp, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Unary")?;
    dtype_in(&ins[0], op.dtypes(), &format!("Unary.{} input x", op.name()))?;
    Ok(vec![ins[0].clone()])
}

pub(crate) fn binary(op: BinaryOp, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "Binary")?;
    let what = format!("Binary.{}", op.name());
    same_dtype(ins, &what)?;
    dtype_in(&ins[0], op.dtypes(), &format!("{what} input a"))?;
    Ok(vec![TensorType { dtype: ins[0].dtype, shape: broadcast_all(ins)? }])
}

pub(crate) fn compare(op: CompareOp, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "Compare")?;
    let what = format!("Compare.{}", op.name());
    same_dtype(ins, &what)?;
    dtype_in(&ins[0], op.dtypes(), &format!("{what} input a"))?;
    Ok(vec![TensorType { dtype: DType::Bool, shape: broadcast_all(ins)? }])
}

pub(crate) fn where_(ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "Where")?;
    dtype_in(&ins[0], DTypeSet::BOOL, "Where input cond")?;
    same_dtype(&ins[1..], "Where x and y")?;
    Ok(vec![TensorType { dtype: ins[1].dtype, shape: broadcast_all(ins)? }])
}

pub(crate) fn fma(ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "Fma")?;
    same_dtype(ins, "Fma")?;
    dtype_in(&ins[0], DTypeSet::FLOAT, "Fma input a")?;
    Ok(vec![TensorType { dtype: ins[0].dtype, shape: broadcast_all(ins)? }])
}

pub(crate) fn cast(to: DType, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Cast")?;
    Ok(vec![TensorType { dtype: to, shape: ins[0].shape.clone() }])
}
