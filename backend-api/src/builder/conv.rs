//! [`GraphBuilder`] methods that add the ops of §2.9 (convolution, pooling, resize).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `Conv`; lists may use the shorthands of [`expand_list`], `has_bias` is set from `bias`.
    pub fn conv(&mut self, x: Value, w: Value, bias: Option<Value>, attrs: &ConvAttrs) -> Result<Value> {
        let a = ConvAttrs { has_bias: bias.is_some(), ..attrs.expand(self.spatial(x)?)? };
        let ins: Vec<Value> = [x, w].into_iter().chain(bias).collect();
        self.add1(Op::Conv(a), &ins)
    }
    /// `ConvTranspose`; lists may use the shorthands of [`expand_list`].
    pub fn conv_transpose(
        &mut self,
        x: Value,
        w: Value,
        bias: Option<Value>,
        attrs: &ConvTransposeAttrs,
    ) -> Result<Value> {
        let mut a = attrs.expand(self.spatial(x)?)?;
        a.conv.has_bias = bias.is_some();
        let ins: Vec<Value> = [x, w].into_iter().chain(bias).collect();
        self.add1(Op::ConvTranspose(a), &ins)
    }
    /// `Pool`; lists may use the shorthands of [`expand_list`].
    pub fn pool(&mut self, x: Value, attrs: &PoolAttrs) -> Result<Value> {
        let a = attrs.expand(self.spatial(x)?)?;
        self.add1(Op::Pool(a), &[x])
    }
    /// `Im2Col`; lists may use the shorthands of [`expand_list`].
    pub fn im2col(&mut self, x: Value, attrs: &Im2ColAttrs) -> Result<Value> {
        let a = attrs.expand(self.spatial(x)?)?;
        self.add1(Op::Im2Col(a), &[x])
    }
    /// `ResizeNearest` by integer factors, one per spatial dim.
    pub fn resize_nearest(&mut self, x: Value, scales: &[u32]) -> Result<Value> {
        self.add1(Op::ResizeNearest(ResizeNearestAttrs { scales: scales.to_vec() }), &[x])
    }
}
