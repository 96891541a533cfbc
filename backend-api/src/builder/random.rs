//! [`GraphBuilder`] methods that add the ops of §2.12 (randomness).

use crate::op::*;
use crate::{DType, GraphBuilder, Result, Shape, Value};

impl GraphBuilder {
    /// `RngBits`: raw Philox words of `shape`.
    pub fn rng_bits(&mut self, key: Value, shape: impl Into<Shape>, seed: u64) -> Result<Value> {
        self.add1(Op::RngBits(RngBitsAttrs { shape: shape.into(), seed }), &[key])
    }
    /// `RngUniform` in `[low, high)`.
    pub fn rng_uniform(
        &mut self,
        key: Value,
        shape: impl Into<Shape>,
        dtype: DType,
        low: f64,
        high: f64,
        seed: u64,
    ) -> Result<Value> {
        let a = RngUniformAttrs { shape: shape.into(), dtype, low, high, seed };
        self.add1(Op::RngUniform(a), &[key])
    }
    /// `RngNormal` with `mean` and `std`.
    pub fn rng_normal(
        &mut self,
        key: Value,
        shape: impl Into<Shape>,
        dtype: DType,
        mean: f64,
        std: f64,
        seed: u64,
    ) -> Result<Value> {
        let a = RngNormalAttrs { shape: shape.into(), dtype, mean, std, seed };
        self.add1(Op::RngNormal(a), &[key])
    }
    /// `Sample` one token index per row of `logits`.
    pub fn sample(&mut self, logits: Value, key: Value, attrs: SampleAttrs) -> Result<Value> {
        self.add1(Op::Sample(attrs), &[logits, key])
    }
}
