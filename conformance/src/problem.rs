//! A generated test case ([`Problem`]) and the builder the generators use to make one.

use crate::display;
use backend_api::op::UnaryOp;
use backend_api::spec::tolerance_for;
use backend_api::{DType, Graph, GraphBuilder, Result, Tensor, Value};
use std::fmt;

/// How a tensor enters a graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeafKind {
    /// An `Input`, passed to `run`.
    Input,
    /// A `Param`, uploaded with `set_param`.
    Param,
    /// A `Constant` stored in the graph.
    Constant,
}

/// One test case: a graph whose output nodes are the op under test, the tensors for its inputs
/// and params, and, for magnitude-scaled ops (§1.11 (M)), a second graph over the same leaves
/// whose outputs (F64, one per output of `graph`) give the magnitude `M` of each element.
#[derive(Clone)]
pub struct Problem {
    /// The graph under test.
    pub graph: Graph,
    /// Run inputs, by name.
    pub inputs: Vec<(String, Tensor)>,
    /// Params, by name.
    pub params: Vec<(String, Tensor)>,
    /// The magnitude graph, present when some output's tolerance is magnitude-scaled.
    pub magnitude: Option<Graph>,
}

/// What a generator strategy yields: a problem, or the builder error that shows a generator bug.
pub type Generated = Result<Problem>;

impl fmt::Debug for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Problem {{")?;
        write!(f, " graph:\n{}", display::graph(&self.graph))?;
        for (kind, list) in [("input", &self.inputs), ("param", &self.params)] {
            for (name, t) in list {
                writeln!(f, " {kind} {name:?} = {}", display::tensor(&t.view()))?;
            }
        }
        if let Some(m) = &self.magnitude {
            // The magnitude graph repeats the leaves under |Cast(·, F64)|; its size says enough.
            writeln!(f, " magnitude graph: {} nodes, {} outputs", m.nodes().len(), m.outputs().len())?;
        }
        write!(f, "}}")
    }
}

#[derive(Clone)]
struct Leaf {
    kind: LeafKind,
    name: String,
    tensor: Tensor,
}

/// Builds a [`Problem`]: leaves are added with their data, so the input and param lists and the
/// magnitude graph stay consistent with the graph.
#[derive(Default)]
pub struct ProblemBuilder {
    gb: GraphBuilder,
    leaves: Vec<Leaf>,
}

impl ProblemBuilder {
    /// An empty problem.
    pub fn new() -> ProblemBuilder {
        ProblemBuilder::default()
    }

    /// Adds `t` as a leaf of `kind` (inputs are named `x0, x1, …`, params `w0, w1, …`).
    pub fn leaf(&mut self, kind: LeafKind, t: Tensor) -> Result<Value> {
        let count = self.leaves.iter().filter(|l| l.kind == kind).count();
        let name = match kind {
            LeafKind::Input => format!("x{count}"),
            LeafKind::Param => format!("w{count}"),
            LeafKind::Constant => format!("c{count}"),
        };
        let v = add_leaf(&mut self.gb, kind, &name, &t)?;
        self.leaves.push(Leaf { kind, name, tensor: t });
        Ok(v)
    }

    /// The graph builder, to add the op under test.
    pub fn g(&mut self) -> &mut GraphBuilder {
        &mut self.gb
    }

    /// Finishes a problem whose outputs need no magnitude.
    pub fn finish(self, outputs: &[Value]) -> Result<Problem> {
        self.finish_with_magnitude(outputs, |_, _| Ok(Vec::new()))
    }

    /// Finishes a problem. When an output's tolerance is magnitude-scaled, `magnitude` is called
    /// with a fresh builder and every leaf as `|Cast(leaf, F64)|` (in the order the leaves were
    /// added); it returns one F64 value per output, the magnitude `M` of each element.
    pub fn finish_with_magnitude(
        self,
        outputs: &[Value],
        magnitude: impl FnOnce(&mut GraphBuilder, &[Value]) -> Result<Vec<Value>>,
    ) -> Result<Problem> {
        let ProblemBuilder { mut gb, leaves } = self;
        for &v in outputs {
            gb.output(v)?;
        }
        let graph = gb.build()?;
        let needs_m = graph.outputs().iter().any(|v| match (graph.node(v.node), graph.value_type(*v)) {
            (Some(n), Some(t)) => tolerance_for(&n.op, t.dtype).1,
            _ => false,
        });
        let magnitude = if needs_m { Some(magnitude_graph(&leaves, outputs.len(), magnitude)?) } else { None };
        let pick = |k: LeafKind| -> Vec<(String, Tensor)> {
            leaves.iter().filter(|l| l.kind == k).map(|l| (l.name.clone(), l.tensor.clone())).collect()
        };
        Ok(Problem { inputs: pick(LeafKind::Input), params: pick(LeafKind::Param), graph, magnitude })
    }
}

fn add_leaf(gb: &mut GraphBuilder, kind: LeafKind, name: &str, t: &Tensor) -> Result<Value> {
    match kind {
        LeafKind::Input => gb.input(name, t.dtype(), t.shape()),
        LeafKind::Param => gb.param(name, t.dtype(), t.shape()),
        LeafKind::Constant => gb.constant(t),
    }
}

fn magnitude_graph(
    leaves: &[Leaf],
    n_outputs: usize,
    magnitude: impl FnOnce(&mut GraphBuilder, &[Value]) -> Result<Vec<Value>>,
) -> Result<Graph> {
    let mut gb = GraphBuilder::new();
    let mut abs = Vec::with_capacity(leaves.len());
    for l in leaves {
        let v = add_leaf(&mut gb, l.kind, &l.name, &l.tensor)?;
        let v = gb.cast(v, DType::F64)?;
        abs.push(gb.unary(UnaryOp::Abs, v)?);
    }
    let outs = magnitude(&mut gb, &abs)?;
    if outs.len() != n_outputs {
        backend_api::bail!(Arity, "magnitude graph has {} outputs for {n_outputs} outputs of the problem", outs.len());
    }
    for v in outs {
        gb.output(v)?;
    }
    gb.build()
}

/// The `i`-th value of a list (the magnitude closures' leaves), or an error naming the index.
pub fn nth(values: &[Value], i: usize) -> Result<Value> {
    match values.get(i) {
        Some(v) => Ok(*v),
        None => backend_api::bail!(Arity, "leaf {i} requested but the problem has {} leaves", values.len()),
    }
}
