//! Normalisation beyond the core set (§2.7.3, §2.7.6–2.7.9) and its backward ops (§2.16.1–2.16.3).

use super::util::{eps_ok, nonzero_at, shape_is, static_at};
use crate::infer::reduce::reduced_shape;
use crate::infer::{arity, axis_ok, dtype_in};
use crate::op::{
    FusedResidualNormAttrs, GroupNormAttrs, LayerNorm2dAttrs, NormBackwardAttrs, NormGrad, SoftmaxCrossEntropyAttrs,
};
use crate::shape::broadcast_shapes;
use crate::{bail, DTypeSet, Result, TensorType};

/// Checks `logits` and `targets` of the cross-entropy ops and returns the per-slice loss type.
fn cross_entropy_types(axis: usize, logits: &TensorType, targets: &TensorType, op: &str) -> Result<TensorType> {
    dtype_in(logits, DTypeSet::FLOAT, &format!("{op} input logits"))?;
    axis_ok(axis, logits.rank(), op)?;
    if targets.dtype != logits.dtype {
        bail!(DType, "{op} targets {targets} must have the dtype of logits {logits}");
    }
    shape_is(targets, &logits.shape.0, &format!("{op} targets (shape of logits)"))?;
    nonzero_at(logits, axis, &format!("{op} logits (the class axis is empty)"))?;
    Ok(TensorType { dtype: logits.dtype, shape: reduced_shape(&logits.shape, &[axis], false) })
}

pub(crate) fn softmax_cross_entropy(a: &SoftmaxCrossEntropyAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "SoftmaxCrossEntropy")?;
    Ok(vec![cross_entropy_types(a.axis, &ins[0], &ins[1], "SoftmaxCrossEntropy")?])
}

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

/// `x: [N, C, *spatial]` with `gamma` and optional `beta` of shape `[C]` (GroupNorm, LayerNorm2d).
fn channel_norm(ins: &[TensorType], eps: f32, op: &str) -> Result<()> {
    if ins.len() != 2 && ins.len() != 3 {
        bail!(Arity, "{op} takes x, gamma and an optional beta; got {} inputs", ins.len());
    }
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT, &format!("{op} input x"))?;
    eps_ok(eps, op)?;
    if x.rank() < 2 {
        bail!(Shape, "{op} x {x} must be [N, C, *spatial] (rank >= 2)");
    }
    for (name, t) in ["gamma", "beta"].iter().zip(&ins[1..]) {
        if t.dtype != x.dtype {
            bail!(DType, "{op} {name} {t} must have the dtype of x ({})", x.dtype);
        }
        shape_is(t, &x.shape.0[1..2], &format!("{op} {name} ([C] of x {x})"))?;
    }
    Ok(())
}

pub(crate) fn group_norm(a: &GroupNormAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    channel_norm(ins, a.eps, "GroupNorm")?;
    let x = &ins[0];
    if a.num_groups == 0 {
        bail!(Attribute, "GroupNorm num_groups must be >= 1");
    }
    let c = static_at(x, 1, "GroupNorm x (C is divided into groups)")?;
    if c % a.num_groups as usize != 0 {
        bail!(Attribute, "GroupNorm num_groups {} does not divide C = {c} of x {x}", a.num_groups);
    }
    Ok(vec![x.clone()])
}

pub(crate) fn layer_norm_2d(a: &LayerNorm2dAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    channel_norm(ins, a.eps, "LayerNorm2d")?;
    Ok(vec![ins[0].clone()])
}

pub(crate) fn fused_residual_norm(a: &FusedResidualNormAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let n = 3 + usize::from(a.has_bias) + usize::from(a.has_beta);
    arity(ins, n, "FusedResidualNorm (x, residual, [bias], gamma, [beta])")?;
    let op = "FusedResidualNorm";
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT, "FusedResidualNorm input x")?;
    axis_ok(a.axis, x.rank(), op)?;
    eps_ok(a.eps, op)?;
    for t in &ins[1..] {
        if t.dtype != x.dtype {
            bail!(DType, "{op}: every input must have the dtype of x {x}; got {t}");
        }
    }
    shape_is(&ins[1], &x.shape.0, "FusedResidualNorm residual (shape of x)")?;
    let mut next = 2;
    if a.has_bias {
        let bias = &ins[2];
        let grown = broadcast_shapes(&x.shape, &bias.shape).map_err(|e| e.context("FusedResidualNorm bias"))?;
        if grown != x.shape {
            bail!(Shape, "{op} bias {bias} would enlarge x {x} when broadcast");
        }
        next = 3;
    }
    for (name, t) in ["gamma", "beta"].iter().zip(&ins[next..]) {
        shape_is(t, &x.shape.0[a.axis..], &format!("{op} {name} (x.shape[{}:] of x {x})", a.axis))?;
    }
    let outs = if a.emit_sum { vec![x.clone(), x.clone()] } else { vec![x.clone()] };
    Ok(outs)
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
