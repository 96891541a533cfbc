//! Softmax, LogSoftmax, LayerNorm, RmsNorm (§2.7).

use super::{arity, axis_ok, dtype_in};
use crate::op::NormAttrs;
use crate::{bail, DTypeSet, Result, TensorType};

pub(crate) fn softmax(axis: usize, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Softmax")?;
    dtype_in(&ins[0], DTypeSet::FLOAT, "Softmax input x")?;
    axis_ok(axis, ins[0].rank(), "Softmax")?;
    Ok(vec![ins[0].clone()])
}

pub(crate) fn norm(a: &NormAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    if ins.len() != 2 && ins.len() != 3 {
        bail!(Arity, "LayerNorm/RmsNorm take x, gamma and an optional beta; got {} inputs", ins.len());
    }
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT, "norm input x")?;
    axis_ok(a.axis, x.rank(), "norm")?;
    if !a.eps.is_finite() || a.eps < 0.0 {
        bail!(Attribute, "eps {} must be finite and >= 0", a.eps);
    }
    let want = &x.shape.0[a.axis..];
    for (name, t) in ["gamma", "beta"].iter().zip(&ins[1..]) {
        if t.dtype != x.dtype {
            bail!(DType, "{name} {t} must have the dtype of x ({})", x.dtype);
        }
        if t.shape.0 != want {
            bail!(Shape, "{name} {t} must have shape x.shape[{}:] of x {x}", a.axis);
        }
    }
    Ok(vec![x.clone()])
}
