//! [`GraphBuilder`] methods that add the ops of §2.5 (reductions and scans).

use super::two;
use crate::op::*;
use crate::shape::canon_axes;
use crate::{DType, GraphBuilder, Result, Value};

impl GraphBuilder {
    /// Reduction over `axes` (any subset; empty = identity).
    pub fn reduce(&mut self, op: ReduceOp, x: Value, axes: &[i64], keep_dims: bool) -> Result<Value> {
        let mut axes = if axes.is_empty() { vec![] } else { canon_axes(axes, self.rank(x)?)? };
        axes.sort_unstable();
        self.add1(Op::Reduce(ReduceAttrs { op, axes, keep_dims }), &[x])
    }

    /// `ArgMax` along `axis`.
    pub fn arg_max(&mut self, x: Value, axis: i64, keep_dims: bool, index_dtype: DType) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::ArgMax(ArgReduceAttrs { axis, keep_dims, index_dtype }), &[x])
    }
    /// `ArgMin` along `axis`.
    pub fn arg_min(&mut self, x: Value, axis: i64, keep_dims: bool, index_dtype: DType) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::ArgMin(ArgReduceAttrs { axis, keep_dims, index_dtype }), &[x])
    }
    /// `TopK`: `(values, indices)` of the `k` largest (or smallest) elements along `axis`.
    pub fn top_k(
        &mut self,
        x: Value,
        k: usize,
        axis: i64,
        largest: bool,
        index_dtype: DType,
    ) -> Result<(Value, Value)> {
        let axis = self.axis_in(x, axis)?;
        two(self.add(Op::TopK(TopKAttrs { k, axis, largest, index_dtype }), &[x])?)
    }
    /// `Cumsum` along `axis`.
    pub fn cumsum(&mut self, x: Value, axis: i64, exclusive: bool, reverse: bool) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::Cumsum(CumsumAttrs { axis, exclusive, reverse }), &[x])
    }
    /// `CumsumBackward` with the forward op's attributes.
    pub fn cumsum_backward(&mut self, dy: Value, axis: i64, exclusive: bool, reverse: bool) -> Result<Value> {
        let a = CumsumAttrs { axis: self.axis_in(dy, axis)?, exclusive, reverse };
        crate::infer::cumsum_backward(&a, &[self.type_of(dy)?])?;
        self.add1(Op::CumsumBackward(a), &[dy])
    }
}
