//! Leaves and elementwise ops (§2.1, §2.2).

use super::{arity, dtype_in, rank_ok, same_dtype};
use crate::op::{BinaryOp, CompareOp, ConstantAttrs, InputAttrs, ParamAttrs, UnaryOp};
use crate::shape::{broadcast_shapes, numel};
use crate::{bail, DType, DTypeSet, Result, Shape, TensorType};

pub(crate) fn input(a: &InputAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 0, "Input")?;
    if a.name.is_empty() {
        bail!(Attribute, "Input name is empty");
    }
    let t = TensorType { dtype: a.dtype, shape: a.shape.clone() };
    rank_ok(&t)?;
    Ok(vec![t])
}

pub(crate) fn param(a: &ParamAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 0, "Param")?;
    if a.name.is_empty() {
        bail!(Attribute, "Param name is empty");
    }
    let t = TensorType::new(a.dtype, &a.shape);
    rank_ok(&t)?;
    Ok(vec![t])
}

pub(crate) fn constant(a: &ConstantAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 0, "Constant")?;
    let want = numel(&a.shape).checked_mul(a.dtype.size());
    if want != Some(a.data.len()) {
        bail!(Attribute, "Constant {}{:?} needs {:?} bytes of data, got {}", a.dtype, a.shape, want, a.data.len());
    }
    if a.dtype == DType::Bool {
        if let Some(b) = a.data.iter().find(|&&b| b > 1) {
            bail!(Attribute, "Bool Constant holds byte {b}; only 0 and 1 are allowed");
        }
    }
    let t = TensorType::new(a.dtype, &a.shape);
    rank_ok(&t)?;
    Ok(vec![t])
}

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
