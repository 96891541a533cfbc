//! The leaves (§2.1): `Input`, `Param`, `Constant` declare their own types.

use super::{arity, rank_ok};
use crate::op::{ConstantAttrs, InputAttrs, ParamAttrs};
use crate::shape::nbytes;
use crate::{bail, DType, Result, TensorType};

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
    let Ok(want) = nbytes(a.dtype, &a.shape) else {
        bail!(Shape, "Constant {}{:?} is larger than any tensor can be", a.dtype, a.shape)
    };
    if want != a.data.len() {
        bail!(Attribute, "Constant {}{:?} needs {want} bytes of data, got {}", a.dtype, a.shape, a.data.len());
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
