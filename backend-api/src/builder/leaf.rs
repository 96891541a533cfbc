//! [`GraphBuilder`] methods that add the ops of §2.1 (leaves).

use crate::op::*;
use crate::{DType, GraphBuilder, Result, Shape, Tensor, Value};
use std::sync::Arc;

impl GraphBuilder {
    /// A graph input bound by name at run.
    pub fn input(&mut self, name: &str, dtype: DType, shape: impl Into<Shape>) -> Result<Value> {
        self.add1(Op::Input(InputAttrs { name: name.into(), dtype, shape: shape.into() }), &[])
    }
    /// A named weight set with `Executable::set_param`.
    pub fn param(&mut self, name: &str, dtype: DType, shape: &[usize]) -> Result<Value> {
        self.add1(Op::Param(ParamAttrs { name: name.into(), dtype, shape: shape.to_vec() }), &[])
    }
    /// A constant holding `t`.
    pub fn constant(&mut self, t: &Tensor) -> Result<Value> {
        let data: Arc<[u8]> = Arc::from(t.bytes());
        self.add1(Op::Constant(ConstantAttrs { dtype: t.dtype(), shape: t.shape().to_vec(), data }), &[])
    }
}
