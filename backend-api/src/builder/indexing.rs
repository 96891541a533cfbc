//! [`GraphBuilder`] methods that add the ops of §2.4 (indexing).

use crate::op::*;
use crate::shape::canon_axis;
use crate::{GraphBuilder, Result, Shape, Value};

impl GraphBuilder {
    /// `Gather` of `data` along `axis` at `indices`.
    pub fn gather(&mut self, data: Value, indices: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(data, axis)?;
        self.add1(Op::Gather(GatherAttrs { axis }), &[data, indices])
    }
    /// `ScatterAdd` of `updates` into `data` along `axis` at `indices`.
    pub fn scatter_add(&mut self, data: Value, indices: Value, updates: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(data, axis)?;
        self.add1(Op::ScatterAdd(ScatterAddAttrs { axis }), &[data, indices, updates])
    }
    /// `GatherBackward`: the gradient of `Gather(data, indices, axis)` for a `data` of `data_shape`.
    pub fn gather_backward(
        &mut self,
        dy: Value,
        indices: Value,
        axis: i64,
        data_shape: impl Into<Shape>,
    ) -> Result<Value> {
        let data_shape = data_shape.into();
        let axis = canon_axis(axis, data_shape.rank())?;
        self.add1(Op::GatherBackward(GatherBackwardAttrs { axis, data_shape }), &[dy, indices])
    }
}
