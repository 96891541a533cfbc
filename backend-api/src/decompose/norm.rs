//! `FusedResidualLayerNorm` / `FusedResidualRmsNorm` → Binary Add + the plain norm (§2.7.8–2.7.9).
//! The spec defines the fused ops by exactly this composition (each `+` a `Binary Add` rounded in
//! the dtype of `x`), so the decomposition is exact.

use super::arg;
use crate::op::{BinaryOp, FusedResidualNormAttrs, NormAttrs, Op};
use crate::{GraphBuilder, Result, Value};

/// Which plain norm follows the residual sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Norm {
    /// `LayerNorm`.
    Layer,
    /// `RmsNorm`.
    Rms,
}

/// `s = (x + residual) + bias`, `y = norm(s, gamma, beta)`; outputs `y` and, with `emit_sum`, `s`.
pub(crate) fn fused_residual(
    g: &mut GraphBuilder,
    a: &FusedResidualNormAttrs,
    ins: &[Value],
    norm: Norm,
) -> Result<Vec<Value>> {
    let mut s = g.binary(BinaryOp::Add, arg(ins, 0)?, arg(ins, 1)?)?;
    let mut next = 2;
    if a.has_bias {
        s = g.binary(BinaryOp::Add, s, arg(ins, next)?)?;
        next += 1;
    }
    let mut norm_ins = vec![s, arg(ins, next)?];
    if a.has_beta {
        norm_ins.push(arg(ins, next + 1)?);
    }
    let attrs = NormAttrs { axis: a.axis, eps: a.eps };
    let op = match norm {
        Norm::Layer => Op::LayerNorm(attrs),
        Norm::Rms => Op::RmsNorm(attrs),
    };
    let y = g.add1(op, &norm_ins)?;
    Ok(if a.emit_sum { vec![y, s] } else { vec![y] })
}
