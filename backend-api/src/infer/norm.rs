//! Normalisation (§2.7): softmax, cross-entropy and the norms.

use super::reduce::reduced_shape;
use super::util::{eps_ok, nonzero_at, shape_is, static_at};
use super::{arity, axis_ok, dtype_in};
use crate::op::{FusedResidualNormAttrs, GroupNormAttrs, LayerNorm2dAttrs, NormAttrs, SoftmaxCrossEntropyAttrs};
use crate::shape::broadcast_shapes;
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

/// Checks `logits` and `targets` of the cross-entropy ops and returns the per-slice loss type.
pub(super) fn cross_entropy_types(
    axis: usize,
    logits: &TensorType,
    targets: &TensorType,
    op: &str,
) -> Result<TensorType> {
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
