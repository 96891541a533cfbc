//! [`GraphBuilder`]: adds nodes with inference and validation at build time (§1.3). The methods that
//! add one op each live in one file per op family; they take the spec's looser forms (negative axes,
//! optional inputs as `Option<Value>`, list shorthands) and store the canonical attributes; the
//! flags that say which optional inputs exist are set from the options.

mod attention;
mod backward;
mod control;
mod conv;
mod custom;
mod elementwise;
mod indexing;
mod leaf;
mod linalg;
mod movement;
mod norm;
mod random;
mod reduce;
mod region;
mod sequence;
mod signal;
#[cfg(feature = "splat")]
mod splat;

use crate::graph::{Names, Node, NodeId};
use crate::infer::infer;
use crate::op::*;
use crate::shape::canon_axis;
use crate::spec::op_label;
use crate::{bail, Graph, Result, TensorType, Value};

/// Builds a [`Graph`] node by node. Every method validates its node and returns an error naming
/// the node, the op, the shapes and the reason; nothing is added on error.
#[derive(Default)]
pub struct GraphBuilder {
    nodes: Vec<Node>,
    outputs: Vec<Value>,
    names: Names,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// Adds a node of any op with the given inputs and returns all its outputs.
    pub fn add(&mut self, op: Op, inputs: &[Value]) -> Result<Vec<Value>> {
        let id = self.nodes.len();
        let label = op_label(&op);
        let ctx = |e: crate::Error| e.at_node(id, label.clone());
        let types = inputs.iter().map(|v| self.value_type(*v).cloned()).collect::<Result<Vec<_>>>().map_err(ctx)?;
        crate::spec::check_arity(&op, types.len()).map_err(ctx)?;
        let outputs = infer(&op, &types).map_err(|e| ctx(e.context(describe_inputs(&types))))?;
        self.names.check(&op).map_err(ctx)?;
        let n = outputs.len();
        self.nodes.push(Node { op, inputs: inputs.to_vec(), outputs });
        Ok((0..n).map(|output| Value { node: NodeId(id), output }).collect())
    }

    /// Adds a single-output node.
    pub fn add1(&mut self, op: Op, inputs: &[Value]) -> Result<Value> {
        let label = op_label(&op);
        match self.add(op, inputs)?.first() {
            Some(v) => Ok(*v),
            None => bail!(Arity, "{label} has no outputs; use add"),
        }
    }

    /// The type of a value built so far.
    pub fn value_type(&self, v: Value) -> Result<&TensorType> {
        match self.nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output)) {
            Some(t) => Ok(t),
            None => bail!(Arity, "value {v} does not exist in this graph"),
        }
    }

    /// How many nodes have been added so far (the id the next node will get).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Marks `v` as a graph output (in call order).
    pub fn output(&mut self, v: Value) -> Result<()> {
        self.value_type(v)?;
        self.outputs.push(v);
        Ok(())
    }

    /// Finishes the graph.
    pub fn build(self) -> Result<Graph> {
        if self.outputs.is_empty() {
            bail!(Arity, "graph has no outputs; call GraphBuilder::output");
        }
        Ok(Graph { nodes: self.nodes, outputs: self.outputs })
    }

    fn rank(&self, v: Value) -> Result<usize> {
        Ok(self.value_type(v)?.rank())
    }
    fn type_of(&self, v: Value) -> Result<TensorType> {
        self.value_type(v).cloned()
    }

    fn axis_in(&self, v: Value, axis: i64) -> Result<usize> {
        canon_axis(axis, self.value_type(v)?.rank())
    }

    /// Spatial dims of an N-C-spatial value (0 when the rank is too small; validation reports it).
    fn spatial(&self, x: Value) -> Result<usize> {
        Ok(self.value_type(x)?.rank().saturating_sub(2))
    }
}

/// The two outputs of an op, in order.
fn two(v: Vec<Value>) -> Result<(Value, Value)> {
    match v[..] {
        [a, b, ..] => Ok((a, b)),
        _ => crate::bail!(Arity, "expected two outputs, the op produced {}", v.len()),
    }
}

fn describe_inputs(types: &[TensorType]) -> String {
    let parts: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    format!("inputs ({})", parts.join(", "))
}
