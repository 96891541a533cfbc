//! Control flow (§2.13): `If` and `While`, and [`Body`], the evaluation of a subgraph that they and
//! `Scan` (§2.10.7, `sequence`) share. A body is compiled once with the op (a kernel per node, so
//! an op the reference does not implement is found at compile, and nested bodies are compiled
//! with their op) and evaluated as often as the semantics require, never more: the branch not
//! taken, the condition after `max_iterations` and the steps of an empty scan are not evaluated.

use crate::eval::{kernel, Env, Kernel};
use crate::exec::node_inputs;
use backend_api::op::WhileAttrs;
use backend_api::spec::op_label;
use backend_api::{bail, Graph, Op, Result, Tensor};
use std::collections::HashMap;

/// A compiled subgraph: its nodes' kernels, the names of its declared inputs in order (they bind
/// positionally) and what it is, for errors.
pub(crate) struct Body {
    graph: Graph,
    kernels: Vec<Kernel>,
    inputs: Vec<String>,
    what: &'static str,
}

impl Body {
    /// Compiles `graph` (named `what` in errors, e.g. "If then_graph").
    pub(crate) fn new(graph: &Graph, what: &'static str) -> Result<Body> {
        let mut kernels = Vec::with_capacity(graph.nodes().len());
        for (id, node) in graph.nodes().iter().enumerate() {
            let k = kernel(&node.op).map_err(|e| e.at_node(id, op_label(&node.op)).context(what))?;
            kernels.push(k);
        }
        let mut inputs = Vec::new();
        for id in graph.inputs() {
            if let Some(Op::Input(a)) = graph.node(id).map(|n| &n.op) {
                inputs.push(a.name.clone());
            }
        }
        Ok(Body { graph: graph.clone(), kernels, inputs, what })
    }

    /// The declared types of the body's outputs, in order.
    pub(crate) fn output_types(&self) -> Vec<backend_api::TensorType> {
        self.graph.outputs().iter().filter_map(|v| self.graph.value_type(*v).cloned()).collect()
    }

    /// The body's outputs for the values `args` of its declared inputs (in order), with the run's
    /// params and dim bindings from `env`.
    pub(crate) fn run(&self, args: &[&Tensor], env: &Env<'_>) -> Result<Vec<Tensor>> {
        if args.len() != self.inputs.len() {
            bail!(Subgraph, "{} takes {} inputs, was given {}", self.what, self.inputs.len(), args.len());
        }
        let named: HashMap<String, Tensor> =
            self.inputs.iter().cloned().zip(args.iter().map(|t| (*t).clone())).collect();
        let sub = Env { inputs: &named, params: env.params, bindings: env.bindings };
        let mut values: Vec<Vec<Tensor>> = Vec::with_capacity(self.graph.nodes().len());
        for (id, (node, kern)) in self.graph.nodes().iter().zip(&self.kernels).enumerate() {
            let ctx = |e: backend_api::Error| e.at_node(id, op_label(&node.op)).context(self.what);
            let ins = node_inputs(&values, node).map_err(ctx)?;
            let outs = kern(&ins, &sub).map_err(ctx)?;
            if outs.len() != node.outputs.len() {
                bail!(
                    Arity,
                    "{}: node {id} computed {} outputs, declares {}",
                    self.what,
                    outs.len(),
                    node.outputs.len()
                );
            }
            values.push(outs);
        }
        let mut outs = Vec::with_capacity(self.graph.outputs().len());
        for v in self.graph.outputs() {
            match values.get(v.node.0).and_then(|o| o.get(v.output)) {
                Some(t) => outs.push(t.clone()),
                None => bail!(Arity, "{}: output {v} was not computed", self.what),
            }
        }
        Ok(outs)
    }
}

/// Element 0 of a one-element Bool tensor (shape checked by inference).
fn truth(t: &Tensor, what: &str) -> Result<bool> {
    match t.bytes().first() {
        Some(&b) => Ok(b != 0),
        None => bail!(Shape, "{what} {:?} holds no element", t.shape()),
    }
}

/// `If(cond, captures…)`: the selected branch's outputs; the other branch is not evaluated.
pub(crate) fn if_(then_g: &Body, else_g: &Body, ins: &[&Tensor], env: &Env<'_>) -> Result<Vec<Tensor>> {
    let Some((cond, captures)) = ins.split_first() else { bail!(Arity, "If needs a cond input") };
    if truth(cond, "If cond")? {
        then_g.run(captures, env)
    } else {
        else_g.run(captures, env)
    }
}

/// `While(v…)`: the body applied while the condition holds, at most `max_iterations` times; the
/// condition is not evaluated once the bound is reached (nor at all for a bound of 0).
pub(crate) fn while_(cond: &Body, body: &Body, a: &WhileAttrs, ins: &[&Tensor], env: &Env<'_>) -> Result<Vec<Tensor>> {
    if ins.is_empty() {
        bail!(Arity, "While needs at least one loop value");
    }
    let mut v: Vec<Tensor> = ins.iter().map(|t| (*t).clone()).collect();
    let mut i = 0u64;
    while i < a.max_iterations {
        let refs: Vec<&Tensor> = v.iter().collect();
        let c = cond.run(&refs, env)?;
        let Some(flag) = c.first() else { bail!(Subgraph, "While cond_graph returned no value") };
        if !truth(flag, "While cond_graph output")? {
            break;
        }
        let next = body.run(&refs, env)?;
        if next.len() != v.len() {
            bail!(Subgraph, "While body_graph returned {} values for {} loop values", next.len(), v.len());
        }
        v = next;
        i += 1;
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
