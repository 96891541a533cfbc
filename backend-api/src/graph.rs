//! Graphs (§1.3): nodes in topological order, declared inputs, outputs; and validation.

use crate::infer::infer;
use crate::op::Op;
use crate::{bail, DType, Error, Result, Shape};
use std::collections::HashMap;
use std::fmt;

/// Index of a node in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeId(pub usize);

/// One output of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct Value {
    /// The producing node.
    pub node: NodeId,
    /// Which of its outputs (0 = first).
    pub output: usize,
}

impl Value {
    /// Output 0 of `node`.
    pub fn first(node: NodeId) -> Value {
        Value { node, output: 0 }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}.{}", self.node.0, self.output)
    }
}

/// The dtype and shape of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct TensorType {
    /// Element type.
    pub dtype: DType,
    /// Shape (static or symbolic dims).
    pub shape: Shape,
}

impl TensorType {
    /// A type with static dims.
    pub fn new(dtype: DType, dims: &[usize]) -> TensorType {
        TensorType { dtype, shape: Shape::of(dims) }
    }
    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }
    /// The static dims or a `Shape` error.
    pub fn dims(&self) -> Result<Vec<usize>> {
        self.shape.static_dims("tensor")
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, self.shape)
    }
}

/// One node: op, input values, inferred output types.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct Node {
    /// The op and its canonical attributes.
    pub op: Op,
    /// Input values, in the op's order.
    pub inputs: Vec<Value>,
    /// Output types, inferred at build.
    pub outputs: Vec<TensorType>,
}

/// A validated graph. Built with [`crate::GraphBuilder`] or checked by [`Graph::from_parts`].
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize), serde(try_from = "crate::json::codec::GraphParts"))]
pub struct Graph {
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<Value>,
}

impl Graph {
    /// Validates `nodes` (in topological order) and `outputs` and makes a graph. Every node's
    /// output types must equal what inference gives; names must be consistent (§2.1).
    pub fn from_parts(nodes: Vec<Node>, outputs: Vec<Value>) -> Result<Graph> {
        let g = Graph { nodes, outputs };
        g.validate()?;
        Ok(g)
    }

    /// Nodes in topological order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// One node; `None` for an id that is not in this graph (never a panic).
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0)
    }

    /// The graph's outputs.
    pub fn outputs(&self) -> &[Value] {
        &self.outputs
    }

    /// The declared `Input` nodes, in order.
    pub fn inputs(&self) -> Vec<NodeId> {
        self.ids().filter(|id| matches!(self.nodes[id.0].op, Op::Input(_))).collect()
    }

    /// The `Param` nodes, in order.
    pub fn params(&self) -> Vec<NodeId> {
        self.ids().filter(|id| matches!(self.nodes[id.0].op, Op::Param(_))).collect()
    }

    /// The type of a value. Panics never: an unknown value gives `None`.
    pub fn value_type(&self, v: Value) -> Option<&TensorType> {
        self.nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output))
    }

    fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len()).map(NodeId)
    }

    /// Re-checks everything the builder checks: references, inference, names, outputs.
    pub fn validate(&self) -> Result<()> {
        let mut names = Names::default();
        for (i, node) in self.nodes.iter().enumerate() {
            let ctx = |e: Error| e.at_node(i, crate::spec::op_label(&node.op));
            let mut types = Vec::with_capacity(node.inputs.len());
            for v in &node.inputs {
                if v.node.0 >= i {
                    return Err(ctx(Error::new(
                        crate::ErrorKind::Arity,
                        format!("input {v} is not produced by an earlier node"),
                    )));
                }
                match self.value_type(*v) {
                    Some(t) => types.push(t.clone()),
                    None => return Err(ctx(Error::new(crate::ErrorKind::Arity, format!("input {v} does not exist")))),
                }
            }
            crate::spec::check_arity(&node.op, types.len()).map_err(ctx)?;
            let inferred = infer(&node.op, &types).map_err(ctx)?;
            if inferred != node.outputs {
                return Err(ctx(Error::new(
                    crate::ErrorKind::Shape,
                    format!(
                        "stored output types {} differ from inferred {}",
                        type_list(&node.outputs),
                        type_list(&inferred)
                    ),
                )));
            }
            names.check(&node.op).map_err(ctx)?;
        }
        if self.outputs.is_empty() {
            bail!(Arity, "graph has no outputs");
        }
        for v in &self.outputs {
            if self.value_type(*v).is_none() {
                bail!(Arity, "graph output {v} does not exist");
            }
        }
        Ok(())
    }
}

/// Types as the spec writes them (`[F32[2, 3], I64[]]`), not Rust's `Debug`.
fn type_list(types: &[TensorType]) -> String {
    let parts: Vec<String> = types.iter().map(TensorType::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Name rules for leaves (§2.1): inputs unique, params consistent, no name shared by both.
#[derive(Default)]
pub(crate) struct Names {
    inputs: HashMap<String, ()>,
    params: HashMap<String, (DType, Vec<usize>)>,
}

impl Names {
    pub(crate) fn check(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Input(a) => {
                if self.params.contains_key(&a.name) {
                    bail!(Attribute, "input name {:?} is already used by a Param", a.name);
                }
                if self.inputs.insert(a.name.clone(), ()).is_some() {
                    bail!(Attribute, "a second Input named {:?}", a.name);
                }
            }
            Op::Param(a) => {
                if self.inputs.contains_key(&a.name) {
                    bail!(Attribute, "param name {:?} is already used by an Input", a.name);
                }
                let decl = (a.dtype, a.shape.clone());
                if let Some(prev) = self.params.get(&a.name) {
                    if *prev != decl {
                        bail!(
                            Attribute,
                            "param {:?} declared as {}{:?} and as {}{:?}",
                            a.name,
                            prev.0,
                            prev.1,
                            a.dtype,
                            a.shape
                        );
                    }
                }
                self.params.insert(a.name.clone(), decl);
            }
            _ => {}
        }
        Ok(())
    }
}
