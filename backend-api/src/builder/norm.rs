//! [`GraphBuilder`] methods that add the ops of §2.7 (normalisation).

use crate::op::*;
use crate::shape::canon_axis;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// Softmax along `axis`.
    pub fn softmax(&mut self, x: Value, axis: i64) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        self.add1(Op::Softmax { axis }, &[x])
    }
    /// Log-softmax along `axis`.
    pub fn log_softmax(&mut self, x: Value, axis: i64) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        self.add1(Op::LogSoftmax { axis }, &[x])
    }
    /// LayerNorm over axes `axis..`.
    pub fn layer_norm(&mut self, x: Value, gamma: Value, beta: Option<Value>, axis: i64, eps: f32) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::LayerNorm(NormAttrs { axis, eps }), &ins)
    }
    /// RmsNorm over axes `axis..`.
    pub fn rms_norm(&mut self, x: Value, gamma: Value, beta: Option<Value>, axis: i64, eps: f32) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::RmsNorm(NormAttrs { axis, eps }), &ins)
    }

    /// `SoftmaxCrossEntropy` over the class `axis` (spec default −1).
    pub fn softmax_cross_entropy(&mut self, logits: Value, targets: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(logits, axis)?;
        self.add1(Op::SoftmaxCrossEntropy(SoftmaxCrossEntropyAttrs { axis }), &[logits, targets])
    }
    /// `GroupNorm` of `x [N, C, *spatial]` in `num_groups` channel groups.
    pub fn group_norm(
        &mut self,
        x: Value,
        gamma: Value,
        beta: Option<Value>,
        num_groups: u32,
        eps: f32,
    ) -> Result<Value> {
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::GroupNorm(GroupNormAttrs { num_groups, eps }), &ins)
    }
    /// `LayerNorm2d`: normalisation across channels at every spatial position.
    pub fn layer_norm_2d(&mut self, x: Value, gamma: Value, beta: Option<Value>, eps: f32) -> Result<Value> {
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::LayerNorm2d(LayerNorm2dAttrs { eps }), &ins)
    }
    /// `FusedResidualLayerNorm`: `y = LayerNorm((x + residual) + bias)`; returns `(y, sum)` with
    /// `sum` present iff `emit_sum`.
    pub fn fused_residual_layer_norm(
        &mut self,
        x: Value,
        (residual, bias): (Value, Option<Value>),
        (gamma, beta): (Value, Option<Value>),
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<(Value, Option<Value>)> {
        let a = self.fused_attrs(x, bias.is_some(), beta.is_some(), axis, eps, emit_sum)?;
        self.fused_norm(Op::FusedResidualLayerNorm(a), x, (residual, bias), (gamma, beta))
    }
    /// `FusedResidualRmsNorm`: `y = RmsNorm((x + residual) + bias)`; returns `(y, sum)` with `sum`
    /// present iff `emit_sum`.
    pub fn fused_residual_rms_norm(
        &mut self,
        x: Value,
        (residual, bias): (Value, Option<Value>),
        (gamma, beta): (Value, Option<Value>),
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<(Value, Option<Value>)> {
        let a = self.fused_attrs(x, bias.is_some(), beta.is_some(), axis, eps, emit_sum)?;
        self.fused_norm(Op::FusedResidualRmsNorm(a), x, (residual, bias), (gamma, beta))
    }
    fn fused_attrs(
        &self,
        x: Value,
        has_bias: bool,
        has_beta: bool,
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<FusedResidualNormAttrs> {
        Ok(FusedResidualNormAttrs { axis: self.axis_in(x, axis)?, eps, has_bias, has_beta, emit_sum })
    }
    fn fused_norm(
        &mut self,
        op: Op,
        x: Value,
        rb: (Value, Option<Value>),
        gb: (Value, Option<Value>),
    ) -> Result<(Value, Option<Value>)> {
        let ins: Vec<Value> = [x, rb.0].into_iter().chain(rb.1).chain([gb.0]).chain(gb.1).collect();
        let outs = self.add(op, &ins)?;
        match outs[..] {
            [y] => Ok((y, None)),
            [y, sum] => Ok((y, Some(sum))),
            _ => crate::bail!(Arity, "a fused residual norm produced {} outputs, expected 1 or 2", outs.len()),
        }
    }
}
