//! [`GraphBuilder`] methods that add the ops of §2.14 (fused regions).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `ElementwiseRegion`: one output per `program.outputs` entry.
    pub fn elementwise_region(&mut self, inputs: &[Value], program: RegionProgram) -> Result<Vec<Value>> {
        self.add(Op::ElementwiseRegion(RegionAttrs { program }), inputs)
    }
    /// `BatchElementwiseRegion`: the one-input `program` on every input, stacked on axis 0.
    pub fn batch_elementwise_region(&mut self, inputs: &[Value], program: RegionProgram) -> Result<Value> {
        self.add1(Op::BatchElementwiseRegion(RegionAttrs { program }), inputs)
    }
    /// `TransformRegion`: input `resized_input` read through `ResizeNearest(scales)`.
    pub fn transform_region(
        &mut self,
        inputs: &[Value],
        program: RegionProgram,
        resized_input: u32,
        scales: &[u32],
    ) -> Result<Vec<Value>> {
        let a = TransformRegionAttrs { program, resized_input, scales: scales.to_vec() };
        self.add(Op::TransformRegion(a), inputs)
    }
}
