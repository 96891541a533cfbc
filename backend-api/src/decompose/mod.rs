//! Legalisation: the only place where composite ops become the primitives they are defined by
//! (§3, "Decompositions that `backend-api` provides"). A backend says which [`OpKind`]s it lowers
//! natively; [`legalise`] rewrites every other node that has a decomposition, so a backend runs a
//! fused norm, a region or a render as soon as it has the primitives those are built from.
//!
//! Each decomposition lives with the family of the op it decomposes (`linalg`, `elementwise`,
//! `norm`, `region`, `splat`) and builds the primitives with the same [`GraphBuilder`] as a host
//! would, so every node it makes is validated like a hand-built one. [`decomposition_uses`] states,
//! per kind, which kinds its decomposition may produce; backends derive "reachable through
//! legalisation" from it ([`reachable`]) without building a graph.

mod elementwise;
mod linalg;
mod norm;
mod region;
mod sequence;
#[cfg(feature = "splat")]
mod splat;

pub use linalg::{dot_general, fused_matmul};

use crate::spec::op_label;
use crate::{bail, Error, ErrorKind, Graph, GraphBuilder, NodeId, Op, OpKind, Result, TensorType, Value};
use std::collections::HashMap;

/// A legalised graph and where each of its nodes came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Legalised {
    /// The rewritten graph: same signature (inputs, params, outputs, names, types) as the input.
    pub graph: Graph,
    /// For node `i` of [`Legalised::graph`], the node of the input graph it was copied from or is
    /// part of the decomposition of.
    pub origin: Vec<NodeId>,
}

impl Legalised {
    /// Reports an error found in [`Legalised::graph`] against the user's graph `original` (the
    /// one given to [`legalise`]): the node becomes the original node and its op label; an error in
    /// a primitive of a decomposition also says which primitive.
    pub fn user_error(&self, original: &Graph, e: Error) -> Error {
        let Some(id) = e.node_id() else { return e };
        let Some(&NodeId(o)) = self.origin.get(id) else { return e };
        let Some(node) = original.node(NodeId(o)) else { return e };
        let label = op_label(&node.op);
        let inner = e.node_op().map(str::to_string);
        let e = e.with_node(o, label.clone());
        match inner {
            Some(inner) if inner != label => e.context(format!("in the {inner} of its decomposition")),
            _ => e,
        }
    }
}

/// The kinds each decomposition may produce (the primitives of §3's list; `Constant` and
/// `Expand` carry a region's scalar constants and its broadcast).
const DECOMPOSITIONS: &[(OpKind, &[OpKind])] = &[
    (OpKind::Fma, &[OpKind::Binary, OpKind::Cast]),
    (OpKind::DotGeneral, &[OpKind::Transpose, OpKind::Reshape, OpKind::MatMul]),
    (OpKind::FusedMatMulBiasAct, &[OpKind::MatMul, OpKind::Binary, OpKind::Unary]),
    (OpKind::FusedResidualLayerNorm, &[OpKind::Binary, OpKind::LayerNorm]),
    (OpKind::FusedResidualRmsNorm, &[OpKind::Binary, OpKind::RmsNorm]),
    (OpKind::ElementwiseRegion, region::USES),
    (OpKind::BatchElementwiseRegion, region::BATCH_USES),
    (OpKind::TransformRegion, region::TRANSFORM_USES),
    (OpKind::Rnn, sequence::USES),
    (OpKind::Gru, sequence::USES),
    (OpKind::Lstm, sequence::USES),
    #[cfg(feature = "splat")]
    (OpKind::GaussianSplatRender, &[OpKind::GaussianSplatPrepare, OpKind::GaussianSplatRasterize]),
];

/// The kinds the decomposition of `kind` may produce, or `None` when `kind` has no decomposition.
pub fn decomposition_uses(kind: OpKind) -> Option<&'static [OpKind]> {
    DECOMPOSITIONS.iter().find(|(k, _)| *k == kind).map(|(_, uses)| *uses)
}

/// Whether a backend whose native kinds are `native` runs `kind`: natively, or through a
/// decomposition whose kinds are all reachable. This is what a backend lists in
/// `Capabilities::ops` when its compile calls [`legalise`].
pub fn reachable(kind: OpKind, native: &dyn Fn(OpKind) -> bool) -> bool {
    // The decompositions form a DAG (a test checks it), so the recursion ends.
    native(kind) || decomposition_uses(kind).is_some_and(|uses| uses.iter().all(|k| reachable(*k, native)))
}

/// The most rewriting rounds [`legalise`] makes: a decomposition's products may themselves be
/// decomposed (a region's `Fma` into `Mul` + `Add`); the chains are at most two long.
const MAX_ROUNDS: usize = 8;

/// Rewrites `graph` for a backend whose native kinds are `native`: every node whose kind is not
/// native and has a decomposition is replaced by its decomposition (with `all`, every node that has
/// one, native or not: conformance compares both paths), and so on until no such node is left.
/// Subgraphs (`If`/`While`/`Scan` bodies) are legalised the same way. Nodes that are not native and
/// have no decomposition are copied: the backend reports them. When nothing needs rewriting the
/// graph is returned unchanged.
///
/// Errors: `Unsupported` at the original node when its decomposition needs a kind that is not
/// native (naming the node, the op and the missing primitive), or when a decomposition cannot be
/// built for the node's shapes (e.g. `DotGeneral` with symbolic dims).
pub fn legalise(graph: &Graph, native: &dyn Fn(OpKind) -> bool, all: bool) -> Result<Legalised> {
    let identity = |g: &Graph| (0..g.nodes().len()).map(NodeId).collect::<Vec<_>>();
    let mut cur = Legalised { graph: graph.clone(), origin: identity(graph) };
    // Whether each node of `cur` was made by a decomposition (and so must be native).
    let mut made = vec![false; graph.nodes().len()];
    for _ in 0..MAX_ROUNDS {
        if !needs_rewrite(&cur.graph, native, all) {
            check_products(graph, &cur, &made, native)?;
            return Ok(cur);
        }
        let step = rewrite(&cur.graph, native, all).map_err(|e| cur.user_error(graph, e))?;
        made = step.origin.iter().zip(&step.made).map(|(o, m)| *m || made.get(o.0).copied().unwrap_or(false)).collect();
        let origin = step.origin.iter().map(|o| cur.origin.get(o.0).copied().unwrap_or(*o)).collect();
        cur = Legalised { graph: step.graph, origin };
    }
    bail!(Unsupported, "legalisation did not finish within {MAX_ROUNDS} rounds of decomposition")
}

/// Whether `kind` is decomposed for a backend with `native` kinds.
fn decomposes(kind: OpKind, native: &dyn Fn(OpKind) -> bool, all: bool) -> bool {
    has_decomposition(kind) && (all || !native(kind))
}

fn needs_rewrite(graph: &Graph, native: &dyn Fn(OpKind) -> bool, all: bool) -> bool {
    graph
        .nodes()
        .iter()
        .any(|n| decomposes(n.op.kind(), native, all) || n.op.subgraphs().iter().any(|g| needs_rewrite(g, native, all)))
}

/// Fails at the first node made by a decomposition whose kind the backend lacks, naming the
/// user's node, its op and the missing primitive.
fn check_products(original: &Graph, l: &Legalised, made: &[bool], native: &dyn Fn(OpKind) -> bool) -> Result<()> {
    for (i, node) in l.graph.nodes().iter().enumerate() {
        let kind = node.op.kind();
        if !made.get(i).copied().unwrap_or(false) || native(kind) {
            continue;
        }
        let o = l.origin.get(i).copied().unwrap_or(NodeId(i));
        let label = original.node(o).map(|n| op_label(&n.op)).unwrap_or_else(|| kind.name().to_string());
        let why = format!("the decomposition of {label} needs {}, which this backend does not implement", kind.name());
        return Err(Error::new(ErrorKind::Unsupported, why).at_node(o.0, label));
    }
    Ok(())
}

/// Names node `i` (`label`) as the error's node; an error raised while building a primitive of
/// the decomposition also says which primitive.
fn at_rewritten(e: Error, i: usize, label: String) -> Error {
    let inner = e.node_op().map(str::to_string);
    let e = e.with_node(i, label.clone());
    match inner {
        Some(inner) if inner != label => e.context(format!("building the {inner} of its decomposition")),
        _ => e,
    }
}

/// One round of rewriting.
struct Step {
    graph: Graph,
    /// Node of the round's input each new node came from.
    origin: Vec<NodeId>,
    /// Whether each new node was made by a decomposition in this round.
    made: Vec<bool>,
}

fn rewrite(graph: &Graph, native: &dyn Fn(OpKind) -> bool, all: bool) -> Result<Step> {
    let mut g = GraphBuilder::new();
    let mut map: HashMap<Value, Value> = HashMap::new();
    let (mut origin, mut made) = (Vec::new(), Vec::new());
    for (i, node) in graph.nodes().iter().enumerate() {
        let label = || op_label(&node.op);
        let ins: Vec<Value> = node
            .inputs
            .iter()
            .map(|v| map.get(v).copied().ok_or_else(|| Error::new(ErrorKind::Arity, format!("input {v} undefined"))))
            .collect::<Result<_>>()
            .map_err(|e| e.at_node(i, label()))?;
        let first = g.node_count();
        let decompose = decomposes(node.op.kind(), native, all);
        let outs = if decompose {
            decompose_node(&mut g, &node.op, &ins, &node.outputs)
        } else {
            copy_node(&mut g, &node.op, &ins, native, all)
        }
        .map_err(|e| at_rewritten(e, i, label()))?;
        if outs.len() != node.outputs.len() {
            let n = outs.len();
            return Err(Error::new(ErrorKind::Arity, format!("decomposition made {n} outputs")).at_node(i, label()));
        }
        for (o, (v, want)) in outs.into_iter().zip(&node.outputs).enumerate() {
            // Every later node was typed against the node's declared outputs: a decomposition
            // must produce exactly those.
            let got = g.value_type(v)?;
            if got != want {
                let why = format!("its decomposition makes output {o} {got}, the node declares {want}");
                return Err(Error::new(ErrorKind::Shape, why).at_node(i, label()));
            }
            map.insert(Value { node: NodeId(i), output: o }, v);
        }
        let added = g.node_count() - first;
        origin.extend(std::iter::repeat_n(NodeId(i), added));
        made.extend(std::iter::repeat_n(decompose, added));
    }
    for v in graph.outputs() {
        match map.get(v) {
            Some(nv) => g.output(*nv)?,
            None => bail!(Arity, "graph output {v} undefined"),
        }
    }
    Ok(Step { graph: g.build()?, origin, made })
}

/// Copies a node, legalising its subgraphs.
fn copy_node(
    g: &mut GraphBuilder,
    op: &Op,
    ins: &[Value],
    native: &dyn Fn(OpKind) -> bool,
    all: bool,
) -> Result<Vec<Value>> {
    let mut op = op.clone();
    for body in op.subgraphs_mut() {
        *body = legalise(body, native, all).map_err(|e| e.context("in a subgraph"))?.graph;
    }
    g.add(op, ins)
}

/// The input `i` of a node being decomposed (inference has checked the count; no panic anyway).
pub(crate) fn arg(ins: &[Value], i: usize) -> Result<Value> {
    match ins.get(i) {
        Some(v) => Ok(*v),
        None => bail!(Arity, "the decomposition reads input {i} of {}", ins.len()),
    }
}

crate::dispatch_ops! {
    /// The decomposition of one node: its outputs built from primitives in `g`. `outs` are the
    /// node's inferred output types.
    fn decompose_node(g: &mut GraphBuilder, op: &Op, ins: &[Value], outs: &[TensorType]) -> Result<Vec<Value>> =
        match (op) {
        Op::Fma => elementwise::fma(g, ins),
        Op::DotGeneral(a) => Ok(vec![linalg::dot_general(g, arg(ins, 0)?, arg(ins, 1)?, a)?]),
        Op::FusedMatMulBiasAct { activation } => {
            Ok(vec![linalg::fused_matmul(g, arg(ins, 0)?, arg(ins, 1)?, arg(ins, 2)?, *activation)?])
        }
        Op::FusedResidualLayerNorm(a) => norm::fused_residual(g, a, ins, norm::Norm::Layer),
        Op::FusedResidualRmsNorm(a) => norm::fused_residual(g, a, ins, norm::Norm::Rms),
        Op::ElementwiseRegion(a) => region::elementwise(g, &a.program, ins, outs),
        Op::BatchElementwiseRegion(a) => region::batch(g, &a.program, ins),
        Op::TransformRegion(a) => region::transform(g, a, ins, outs),
        Op::Rnn(a) => sequence::recurrent(g, sequence::Cell::Rnn, a, ins),
        Op::Gru(a) => sequence::recurrent(g, sequence::Cell::Gru, a, ins),
        Op::Lstm(a) => sequence::recurrent(g, sequence::Cell::Lstm, a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRender(a) => splat::render(g, a, ins),
    }
    missing => bail!(Unsupported, "{} has no decomposition", op_label(op)),
    [Input, Param, Constant, Unary, Binary, Compare, Where, Cast, Reshape, Transpose, Narrow, Concat, Expand,
     Reverse, Pad, Gather, ScatterAdd, GatherBackward, Reduce, ArgMax, ArgMin, TopK, Cumsum, CumsumBackward,
     MatMul, GroupedMatMul, QuantMatMul, QuantGroupedMatMul, Softmax, LogSoftmax, SoftmaxCrossEntropy,
     LayerNorm, RmsNorm, GroupNorm, LayerNorm2d, Attention, AttentionBackward, Rope, RopeBackward, Conv,
     ConvTranspose, Pool, Im2Col, ResizeNearest, SelectiveScan, Mamba2, GatedDeltaNet, Scan, Fft,
     LogMel, WelchPeaks, RngBits, RngUniform, RngNormal, Sample, If, While, Custom, LayerNormBackward,
     RmsNormBackward, SoftmaxCrossEntropyBackward, LogMelBackward;
    splat: GaussianSplatPrepare, GaussianSplatRasterize, GaussianSplatRenderBackward]
    /// Whether [`decompose_node`] has a decomposition for `kind` (checked against
    /// [`decomposition_uses`] by a test).
    fn has_decomposition;
}

#[cfg(test)]
mod tests;
