//! [`GraphBuilder`] methods that add the ops of §2.8 (attention and position).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `Attention`; `attrs.has_keep_mask` and `attrs.has_bias` are set from the options.
    pub fn attention(
        &mut self,
        q: Value,
        k: Value,
        v: Value,
        keep_mask: Option<Value>,
        bias: Option<Value>,
        attrs: AttentionAttrs,
    ) -> Result<Value> {
        let a = AttentionAttrs { has_keep_mask: keep_mask.is_some(), has_bias: bias.is_some(), ..attrs };
        let ins: Vec<Value> = [q, k, v].into_iter().chain(keep_mask).chain(bias).collect();
        self.add1(Op::Attention(a), &ins)
    }
    /// `AttentionBackward`: the gradient `attrs.wrt` given `d_out`; `(keep_mask, bias)` as in the
    /// forward op (the flags are set from them).
    pub fn attention_backward(
        &mut self,
        (q, k, v): (Value, Value, Value),
        d_out: Value,
        (keep_mask, bias): (Option<Value>, Option<Value>),
        attrs: AttentionBackwardAttrs,
    ) -> Result<Value> {
        let forward = AttentionAttrs { has_keep_mask: keep_mask.is_some(), has_bias: bias.is_some(), ..attrs.forward };
        let ins: Vec<Value> = [q, k, v, d_out].into_iter().chain(keep_mask).chain(bias).collect();
        self.add1(Op::AttentionBackward(AttentionBackwardAttrs { forward, wrt: attrs.wrt }), &ins)
    }
    /// `Rope` with tables `(cos, sin)`; `rotary_dim` defaults to `head_dim`, `seq_axis` may be
    /// negative (spec default −2).
    pub fn rope(
        &mut self,
        x: Value,
        (cos, sin): (Value, Value),
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<Value> {
        let a = self.rope_attrs(x, head_dim, rotary_dim, style, seq_axis)?;
        self.add1(Op::Rope(a), &[x, cos, sin])
    }
    /// `RopeBackward`: the transpose rotation of `dy` with the forward op's attributes.
    pub fn rope_backward(
        &mut self,
        dy: Value,
        (cos, sin): (Value, Value),
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<Value> {
        let a = self.rope_attrs(dy, head_dim, rotary_dim, style, seq_axis)?;
        self.add1(Op::RopeBackward(a), &[dy, cos, sin])
    }
    fn rope_attrs(
        &self,
        x: Value,
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<RopeAttrs> {
        let seq_axis = self.axis_in(x, seq_axis)?;
        Ok(RopeAttrs { head_dim, rotary_dim: rotary_dim.unwrap_or(head_dim), style, seq_axis })
    }
}
