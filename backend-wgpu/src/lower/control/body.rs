//! Lowering a subgraph (§2.13: an `If` branch, a `While` condition or body, a `Scan` body) into
//! the builder of the node that holds it.
//!
//! Each body node is lowered by the product's own [`lower`](super::super::lower) into a child
//! builder, exactly as a top-level node would be, and spliced into the parent
//! ([`Lower::splice`]): the child's inputs become the windows of the values it reads, its
//! outputs fresh scratch (or a destination the caller asks for), its scratch and control
//! buffers the parent's. A nested `If`, `While` or `Scan` lowers its own bodies the same way,
//! so nesting composes to any depth. Params and constants of a body become `Buf::Param` and
//! `Buf::Const` windows that the compile resolves.

use super::super::{Lower, NodeIo, Operand};
use backend_api::spec::{op_label, Family};
use backend_api::{bail, ensure, DType, Graph, Op, Result, Value};
use std::collections::HashMap;

/// The static dtype and dims of `v` in `g`.
pub(super) fn static_type(g: &Graph, v: Value, what: &str) -> Result<(DType, Vec<usize>)> {
    let Some(t) = g.value_type(v) else { bail!(Arity, "{what}: value {v} does not exist") };
    match t.shape.as_static() {
        Some(d) => Ok((t.dtype, d)),
        None => bail!(Unsupported, "{what}: value {v} has symbolic shape {}; bind symbols before compiling", t.shape),
    }
}

/// The operands of `g`'s outputs, computed from `args` (its declared inputs, in order) by the
/// kernels this pushes into `b`. Where `dests[k]` is given and output `k` is a value that a
/// body node computes (and no earlier output placed it already), that node writes it there
/// directly; the caller copies every other output (compare the returned window with the
/// destination).
pub fn lower_graph(
    b: &mut Lower<'_>,
    g: &Graph,
    args: &[Operand],
    dests: &[Option<Operand>],
    what: &str,
) -> Result<Vec<Operand>> {
    let declared = g.inputs();
    ensure!(
        declared.len() == args.len(),
        Subgraph,
        "{what} declares {} inputs, is given {}",
        declared.len(),
        args.len()
    );
    let placed = placements(g, dests);
    let mut values: HashMap<Value, Operand> = HashMap::new();
    for (id, node) in g.nodes().iter().enumerate() {
        let ctx = |e: backend_api::Error| e.context(format!("{what} node {id} ({})", op_label(&node.op)));
        let me = Value { node: backend_api::NodeId(id), output: 0 };
        match &node.op {
            Op::Input(_) => {
                let Some(k) = declared.iter().position(|d| d.0 == id) else {
                    bail!(Subgraph, "{what}: input node {id} is not a declared input")
                };
                let (dtype, dims) = static_type(g, me, what)?;
                let arg = args.get(k).cloned();
                let Some(arg) = arg.filter(|a| a.dtype == dtype && a.dims == dims) else {
                    bail!(Subgraph, "{what}: input {k} is declared {dtype}{dims:?}, is given another type")
                };
                values.insert(me, arg);
            }
            Op::Param(a) => {
                let (dtype, dims) = static_type(g, me, what)?;
                values.insert(me, b.param(&a.name, dtype, dims).map_err(ctx)?);
            }
            Op::Constant(a) => {
                let (dtype, dims) = static_type(g, me, what)?;
                values.insert(me, b.constant(a.data.clone(), dtype, dims).map_err(ctx)?);
            }
            _ => lower_node(b, g, id, &placed, &mut values).map_err(ctx)?,
        }
    }
    g.outputs()
        .iter()
        .map(|v| match values.get(v) {
            Some(o) => Ok(o.clone()),
            None => bail!(Arity, "{what}: output {v} was not computed"),
        })
        .collect()
}

/// Where each body value that a destination was asked for is written.
fn placements(g: &Graph, dests: &[Option<Operand>]) -> HashMap<Value, Operand> {
    let mut placed = HashMap::new();
    for (v, d) in g.outputs().iter().zip(dests) {
        let Some(d) = d else { continue };
        let computed = g.node(v.node).is_some_and(|n| !matches!(n.op, Op::Input(_) | Op::Param(_) | Op::Constant(_)));
        if computed && !placed.contains_key(v) {
            placed.insert(*v, d.clone());
        }
    }
    placed
}

/// Lowers body node `id` in a child builder and splices it into `b`.
fn lower_node(
    b: &mut Lower<'_>,
    g: &Graph,
    id: usize,
    placed: &HashMap<Value, Operand>,
    values: &mut HashMap<Value, Operand>,
) -> Result<()> {
    let Some(node) = g.nodes().get(id) else { bail!(Arity, "node {id} does not exist") };
    let mut ins = Vec::with_capacity(node.inputs.len());
    for v in &node.inputs {
        match values.get(v) {
            Some(o) => ins.push(o.clone()),
            None => bail!(Arity, "input {v} is not computed before node {id}"),
        }
    }
    let mut outs = Vec::with_capacity(node.outputs.len());
    for o in 0..node.outputs.len() {
        let v = Value { node: backend_api::NodeId(id), output: o };
        let (dtype, dims) = static_type(g, v, "a body node")?;
        let out = match placed.get(&v) {
            Some(d) if d.dtype == dtype && d.dims == dims => d.clone(),
            _ => b.temp(dtype, dims)?,
        };
        outs.push(out);
    }
    let whole = |buf: fn(usize) -> super::super::Buf, ops: &[Operand]| -> Result<Vec<Operand>> {
        ops.iter().enumerate().map(|(k, o)| Operand::whole(buf(k), o.dtype, o.dims.clone())).collect()
    };
    let io =
        NodeIo { node, inputs: whole(super::super::Buf::In, &ins)?, outputs: whole(super::super::Buf::Out, &outs)? };
    let mut child = Lower::new(b.caps(), node.outputs.len());
    if !io.writes_nothing() {
        super::super::lower(&mut child, &io)?;
    }
    let in_windows: Vec<_> = ins.iter().map(|o| o.window).collect();
    let out_windows: Vec<_> = outs.iter().map(|o| o.window).collect();
    let windows = b.splice(child.finish(), &in_windows, &out_windows)?;
    for (o, (out, w)) in outs.into_iter().zip(windows).enumerate() {
        let v = Value { node: backend_api::NodeId(id), output: o };
        values.insert(v, Operand { window: w, ..out });
    }
    Ok(())
}

/// Whether a node of this op may make an output that is its input's memory (a reshape, a
/// contiguous slice, a same-dtype cast: the lowering aliases instead of copying).
fn may_alias(op: &Op) -> bool {
    matches!(op.kind().family(), Family::Movement | Family::Reduce) || matches!(op, Op::Cast { .. })
}

/// Whether a node of this op reads and writes element `e` in the same invocation and nothing
/// else, so that its output may overwrite an input of the same dims in place.
fn elementwise_in_place(op: &Op) -> bool {
    matches!(op, Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Where | Op::Fma | Op::Cast { .. })
}

/// For each of the first `carries` outputs of loop body `g` (whose first `carries` declared
/// inputs are the same loop values), whether the new value may be written straight into the
/// loop value's memory while the body runs, instead of into scratch copied back after it.
///
/// It may when the node computing it runs after every other reader of the old value and is not
/// itself a reader (or is an elementwise op reading it at the same index), when no other output
/// of the body is (a view of) the old value, and when it is not itself such a view. The
/// caller still compares windows: a value two carries share is written in one place and copied
/// to the other. Views are
/// found conservatively: every output of an op that may alias ([`may_alias`]) a view is one.
pub fn in_place_carries(g: &Graph, carries: usize) -> Vec<bool> {
    let declared = g.inputs();
    let outputs = g.outputs();
    (0..carries)
        .map(|k| match (declared.get(k), outputs.get(k)) {
            (Some(input), Some(v)) => carry_in_place(g, *input, *v, k),
            _ => false,
        })
        .collect()
}

fn carry_in_place(g: &Graph, input: backend_api::NodeId, v: Value, k: usize) -> bool {
    let nodes = g.nodes();
    let Some(producer) = nodes.get(v.node.0) else { return false };
    if matches!(producer.op, Op::Input(_) | Op::Param(_) | Op::Constant(_)) {
        return false;
    }
    // Views of the old value, in node order.
    let mut views = vec![Value { node: input, output: 0 }];
    for (id, n) in nodes.iter().enumerate() {
        if may_alias(&n.op) && n.inputs.iter().any(|i| views.contains(i)) {
            views.extend((0..n.outputs.len()).map(|o| Value { node: backend_api::NodeId(id), output: o }));
        }
    }
    if views.contains(&v) {
        return false;
    }
    // Another output that is the old value would be read after this one overwrote it.
    let repeated = g.outputs().iter().enumerate().any(|(j, w)| j != k && views.contains(w));
    let read_later = nodes.iter().skip(v.node.0 + 1).any(|n| n.inputs.iter().any(|i| views.contains(i)));
    if repeated || read_later {
        return false;
    }
    let reads: Vec<&Value> = producer.inputs.iter().filter(|i| views.contains(i)).collect();
    if reads.is_empty() {
        return true;
    }
    // Read and written at the same index, by one invocation, in whole words.
    let Some(out) = producer.outputs.get(v.output) else { return false };
    let word = |d: DType| d.size() >= 4;
    elementwise_in_place(&producer.op)
        && word(out.dtype)
        && reads.iter().all(|i| {
            g.value_type(**i)
                .is_some_and(|t| t.shape == out.shape && t.dtype.size() == out.dtype.size() && word(t.dtype))
        })
}
