//! Training backward ops (§2.16): `LayerNormBackward`/`RmsNormBackward`, `SoftmaxCrossEntropyBackward`,
//! `LogMelBackward`.

use super::norm::cross_entropy_types;
use super::signal::log_mel_type;
use super::util::{dtype_is, eps_ok, shape_is};
use super::{arity, axis_ok, dtype_in};
use crate::op::{LogMelAttrs, NormBackwardAttrs, NormGrad, SoftmaxCrossEntropyAttrs};
use crate::{bail, DType, DTypeSet, Result, TensorType};

pub(crate) fn softmax_cross_entropy_backward(
    a: &SoftmaxCrossEntropyAttrs,
    ins: &[TensorType],
) -> Result<Vec<TensorType>> {
    arity(ins, 3, "SoftmaxCrossEntropyBackward")?;
    let loss = cross_entropy_types(a.axis, &ins[0], &ins[1], "SoftmaxCrossEntropyBackward")?;
    let d = &ins[2];
    if d.dtype != loss.dtype {
        bail!(DType, "SoftmaxCrossEntropyBackward d_loss {d} must have the dtype of logits ({})", loss.dtype);
    }
    shape_is(d, &loss.shape.0, "SoftmaxCrossEntropyBackward d_loss (logits without the class axis)")?;
    Ok(vec![ins[0].clone()])
}

pub(crate) fn norm_backward(a: &NormBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "LayerNormBackward/RmsNormBackward (x, gamma, dy)")?;
    let (x, gamma, dy) = (&ins[0], &ins[1], &ins[2]);
    let op = "NormBackward";
    dtype_in(x, DTypeSet::FLOAT, "NormBackward input x")?;
    axis_ok(a.axis, x.rank(), op)?;
    eps_ok(a.eps, op)?;
    for t in [gamma, dy] {
        if t.dtype != x.dtype {
            bail!(DType, "{op}: gamma and dy must have the dtype of x {x}; got {t}");
        }
    }
    shape_is(gamma, &x.shape.0[a.axis..], &format!("{op} gamma (x.shape[{}:] of x {x})", a.axis))?;
    shape_is(dy, &x.shape.0, "NormBackward dy (shape of x)")?;
    let t = match a.wrt {
        NormGrad::Input => x.clone(),
        NormGrad::Gamma | NormGrad::Beta => gamma.clone(),
    };
    Ok(vec![t])
}

pub(crate) fn log_mel_backward(a: &LogMelAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "LogMelBackward (spectrum, filters, dy)")?;
    let y = log_mel_type(a, &ins[0], &ins[1], "LogMelBackward")?;
    dtype_is(&ins[2], DType::F32, "LogMelBackward input dy")?;
    shape_is(&ins[2], &y.shape.0, "LogMelBackward dy (the forward output shape)")?;
    Ok(vec![ins[0].clone()])
}
