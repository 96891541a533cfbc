//! [`GraphBuilder`] methods that add the ops of §2.16 (training backward ops).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `SoftmaxCrossEntropyBackward`: `d_logits` given the loss gradient `d_loss`.
    pub fn softmax_cross_entropy_backward(
        &mut self,
        logits: Value,
        targets: Value,
        d_loss: Value,
        axis: i64,
    ) -> Result<Value> {
        let axis = self.axis_in(logits, axis)?;
        self.add1(Op::SoftmaxCrossEntropyBackward(SoftmaxCrossEntropyAttrs { axis }), &[logits, targets, d_loss])
    }
    /// `LayerNormBackward`: `dx`, `dgamma` or `dbeta` (`wrt`) of `LayerNorm(x, gamma; axis, eps)`.
    pub fn layer_norm_backward(
        &mut self,
        x: Value,
        gamma: Value,
        dy: Value,
        axis: i64,
        eps: f32,
        wrt: NormGrad,
    ) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::LayerNormBackward(NormBackwardAttrs { axis, eps, wrt }), &[x, gamma, dy])
    }
    /// `RmsNormBackward`: `dx`, `dgamma` or `dbeta` (`wrt`) of `RmsNorm(x, gamma; axis, eps)`.
    pub fn rms_norm_backward(
        &mut self,
        x: Value,
        gamma: Value,
        dy: Value,
        axis: i64,
        eps: f32,
        wrt: NormGrad,
    ) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::RmsNormBackward(NormBackwardAttrs { axis, eps, wrt }), &[x, gamma, dy])
    }
    /// `LogMelBackward`: `d_spectrum` given `dy`.
    pub fn log_mel_backward(
        &mut self,
        spectrum: Value,
        filters: Value,
        dy: Value,
        floor_scope: FloorScope,
    ) -> Result<Value> {
        self.add1(Op::LogMelBackward(LogMelAttrs { floor_scope }), &[spectrum, filters, dy])
    }
}
