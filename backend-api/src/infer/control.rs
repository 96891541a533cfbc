//! Control flow (§2.13): `If`, `While`, and the subgraph signature checks `Scan` shares.

use crate::op::{IfAttrs, Op, WhileAttrs};
use crate::{bail, DType, Dim, Error, ErrorKind, Graph, Result, TensorType};
use std::collections::HashMap;

/// The declared input types of a body, in order.
pub(super) fn inputs_of(g: &Graph) -> Vec<TensorType> {
    g.inputs().into_iter().filter_map(|id| g.node(id).and_then(|n| n.outputs.first().cloned())).collect()
}

/// The output types of a subgraph, in order.
pub(super) fn outputs_of(g: &Graph, what: &str) -> Result<Vec<TensorType>> {
    let mut v = Vec::with_capacity(g.outputs().len());
    for o in g.outputs() {
        match g.value_type(*o) {
            Some(t) => v.push(t.clone()),
            None => bail!(Subgraph, "{what} output {o} does not exist in {}", holder(what)),
        }
    }
    Ok(v)
}

/// How a message names the subgraph that `what` (e.g. "While cond_graph input") is about, so that
/// a mismatch of a condition graph does not say "the body".
fn holder(what: &str) -> &'static str {
    if what.contains("cond_graph") {
        "the condition graph"
    } else if what.contains("then_graph") {
        "the then branch"
    } else if what.contains("else_graph") {
        "the else branch"
    } else {
        "the body"
    }
}

/// Checks that `got` (a subgraph's inputs or outputs) equals `want` in count, dtypes and shapes.
pub(super) fn signature(got: &[TensorType], want: &[TensorType], what: &str) -> Result<()> {
    let who = holder(what);
    if got.len() != want.len() {
        bail!(Subgraph, "{what}: {who} has {} value(s), expected {}", got.len(), want.len());
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            bail!(Subgraph, "{what} {i}: {who} has {g}, expected {w}");
        }
    }
    Ok(())
}

/// `Param`s of one name must agree across every (nested) body of one op (§2.1.2).
pub(super) fn params_consistent(graphs: &[&Graph]) -> Result<()> {
    fn walk(g: &Graph, seen: &mut HashMap<String, (DType, Vec<usize>)>) -> Result<()> {
        for n in g.nodes() {
            if let Op::Param(p) = &n.op {
                let decl = (p.dtype, p.shape.clone());
                match seen.get(&p.name) {
                    Some(prev) if *prev != decl => bail!(
                        Attribute,
                        "param {:?} is declared as {}{:?} and as {}{:?} in the bodies",
                        p.name,
                        prev.0,
                        prev.1,
                        p.dtype,
                        p.shape
                    ),
                    Some(_) => {}
                    None => {
                        seen.insert(p.name.clone(), decl);
                    }
                }
            }
            for sub in n.op.subgraphs() {
                walk(sub, seen)?;
            }
        }
        Ok(())
    }
    let mut seen = HashMap::new();
    graphs.iter().try_for_each(|g| walk(g, &mut seen))
}

/// A Bool tensor with exactly one element (every dim statically 1); errors of the given kinds.
fn one_bool(t: &TensorType, what: &str, (dtype_kind, shape_kind): (ErrorKind, ErrorKind)) -> Result<()> {
    if t.dtype != DType::Bool {
        return Err(Error::new(dtype_kind, format!("{what} {t} must be Bool")));
    }
    if t.shape.0.iter().any(|d| *d != Dim::Static(1)) {
        return Err(Error::new(shape_kind, format!("{what} {t} must hold exactly one element")));
    }
    Ok(())
}

pub(crate) fn if_(a: &IfAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    if ins.is_empty() {
        bail!(Arity, "If needs a cond input");
    }
    one_bool(&ins[0], "If cond", (ErrorKind::DType, ErrorKind::Shape))?;
    let caps = &ins[1..];
    signature(&inputs_of(&a.then_graph), caps, "If then_graph input")?;
    signature(&inputs_of(&a.else_graph), caps, "If else_graph input")?;
    let then_out = outputs_of(&a.then_graph, "If then_graph")?;
    if then_out.is_empty() {
        bail!(Subgraph, "If branches must have at least one output");
    }
    signature(&outputs_of(&a.else_graph, "If else_graph")?, &then_out, "If else_graph output (vs then_graph)")?;
    params_consistent(&[&a.then_graph, &a.else_graph])?;
    Ok(then_out)
}

pub(crate) fn while_(a: &WhileAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    if ins.is_empty() {
        bail!(Arity, "While needs at least one loop value");
    }
    signature(&inputs_of(&a.cond_graph), ins, "While cond_graph input")?;
    let cond_out = outputs_of(&a.cond_graph, "While cond_graph")?;
    if cond_out.len() != 1 {
        bail!(Subgraph, "While cond_graph must have exactly one output, has {}", cond_out.len());
    }
    one_bool(&cond_out[0], "While cond_graph output", (ErrorKind::Subgraph, ErrorKind::Subgraph))?;
    signature(&inputs_of(&a.body_graph), ins, "While body_graph input")?;
    signature(&outputs_of(&a.body_graph, "While body_graph")?, ins, "While body_graph output")?;
    params_consistent(&[&a.cond_graph, &a.body_graph])?;
    Ok(ins.to_vec())
}
