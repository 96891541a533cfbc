//! [`GraphBuilder`] methods that add the ops of §2.13 (control flow).

use crate::op::*;
use crate::{Graph, GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `If`: the outputs of `then_graph(captures)` or `else_graph(captures)`.
    pub fn if_(&mut self, cond: Value, captures: &[Value], then_graph: Graph, else_graph: Graph) -> Result<Vec<Value>> {
        let ins: Vec<Value> = std::iter::once(cond).chain(captures.iter().copied()).collect();
        self.add(Op::If(IfAttrs { then_graph, else_graph }), &ins)
    }
    /// `While`: the final loop values.
    pub fn while_(
        &mut self,
        init: &[Value],
        cond_graph: Graph,
        body_graph: Graph,
        max_iterations: u64,
    ) -> Result<Vec<Value>> {
        self.add(Op::While(WhileAttrs { cond_graph, body_graph, max_iterations }), init)
    }
}
