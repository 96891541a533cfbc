//! The executable: kernels for every node, params, and a run that evaluates the nodes in order.

use crate::eval::{kernel, Env, Kernel};
use crate::layout::Bindings;
use backend_api::spec::op_label;
use backend_api::{
    bail, check_run_inputs, check_slot, DType, Executable, Graph, Result, Signature, Tensor, TensorView,
};
use std::collections::HashMap;

/// A compiled graph for the reference backend.
pub struct CpuRefExecutable {
    graph: Graph,
    kernels: Vec<Kernel>,
    sig: Signature,
    params: HashMap<String, Tensor>,
}

impl CpuRefExecutable {
    /// Builds a kernel per node; errs (`Unsupported`, naming node and op) on an op not implemented.
    pub(crate) fn new(graph: &Graph) -> Result<CpuRefExecutable> {
        let mut kernels = Vec::with_capacity(graph.nodes().len());
        for (id, node) in graph.nodes().iter().enumerate() {
            kernels.push(kernel(&node.op).map_err(|e| e.at_node(id, op_label(&node.op)))?);
        }
        Ok(CpuRefExecutable {
            graph: graph.clone(),
            kernels,
            sig: Signature::of(graph),
            params: HashMap::new(),
        })
    }

    /// Evaluates every node in order and returns the values of every node's outputs.
    fn evaluate(&self, inputs: &HashMap<String, Tensor>, bindings: &mut Bindings) -> Result<Vec<Vec<Tensor>>> {
        let mut values: Vec<Vec<Tensor>> = Vec::with_capacity(self.graph.nodes().len());
        for (id, (node, kern)) in self.graph.nodes().iter().zip(&self.kernels).enumerate() {
            let ctx = |e: backend_api::Error| e.at_node(id, op_label(&node.op));
            let mut ins = Vec::with_capacity(node.inputs.len());
            for v in &node.inputs {
                match values.get(v.node.0).and_then(|o| o.get(v.output)) {
                    Some(t) => ins.push(t),
                    None => {
                        return Err(ctx(backend_api::Error::new(
                            backend_api::ErrorKind::Arity,
                            format!("input {v} not computed"),
                        )))
                    }
                }
            }
            let env = Env {
                inputs,
                params: &self.params,
                bindings,
            };
            let outs = kern(&ins, &env).map_err(ctx)?;
            check_outputs(node, &outs, bindings).map_err(ctx)?;
            values.push(outs);
        }
        Ok(values)
    }
}

/// Checks computed outputs against the node's inferred types (the deferred checks of §1.2).
fn check_outputs(node: &backend_api::Node, outs: &[Tensor], bindings: &mut Bindings) -> Result<()> {
    if outs.len() != node.outputs.len() {
        bail!(
            Arity,
            "computed {} outputs, the node declares {}",
            outs.len(),
            node.outputs.len()
        );
    }
    for (i, (t, want)) in outs.iter().zip(&node.outputs).enumerate() {
        if t.dtype() != want.dtype {
            bail!(
                DType,
                "output {i} computed as {} but declared {}",
                t.dtype(),
                want.dtype
            );
        }
        bindings.check(&want.shape, t.shape(), &format!("output {i}"))?;
    }
    Ok(())
}

/// An owned copy of a run input or param; Bool bytes other than 0 read as true (§1.1) and are
/// stored as 1, so that every op sees canonical Bools.
fn canonical(v: &TensorView<'_>) -> Result<Tensor> {
    if v.dtype() != DType::Bool {
        return Ok(v.to_owned());
    }
    let data = v.bytes().iter().map(|&b| (b != 0) as u8).collect();
    Tensor::from_bytes(DType::Bool, v.shape(), data)
}

impl Executable for CpuRefExecutable {
    fn signature(&self) -> &Signature {
        &self.sig
    }

    fn set_param(&mut self, name: &str, value: TensorView<'_>) -> Result<()> {
        let Some(slot) = self.sig.params.iter().find(|p| p.name == name) else {
            let known: Vec<&str> = self.sig.params.iter().map(|p| p.name.as_str()).collect();
            bail!(Input, "unknown param {name:?}; the graph's params are {known:?}");
        };
        check_slot(slot, &value, &mut Vec::new()).map_err(|e| e.context(format!("param {name:?}")))?;
        self.params.insert(name.to_string(), canonical(&value)?);
        Ok(())
    }

    fn run(&mut self, inputs: &[(&str, TensorView<'_>)]) -> Result<Vec<Tensor>> {
        let views = check_run_inputs(&self.sig, inputs)?;
        // check_run_inputs validated the bindings; redo them here to keep the sizes.
        let mut slots = Vec::new();
        let mut by_name = HashMap::new();
        for (slot, v) in self.sig.inputs.iter().zip(&views) {
            check_slot(slot, v, &mut slots)?;
            by_name.insert(slot.name.clone(), canonical(v)?);
        }
        for p in &self.sig.params {
            if !self.params.contains_key(&p.name) {
                bail!(
                    Input,
                    "param {:?} ({}{}) was never set; call set_param first",
                    p.name,
                    p.dtype,
                    p.shape
                );
            }
        }
        let mut bindings = Bindings::from_slots(slots);
        let values = self.evaluate(&by_name, &mut bindings)?;
        let mut outs = Vec::with_capacity(self.graph.outputs().len());
        for v in self.graph.outputs() {
            match values.get(v.node.0).and_then(|o| o.get(v.output)) {
                Some(t) => outs.push(t.clone()),
                None => bail!(Arity, "graph output {v} was not computed"),
            }
        }
        Ok(outs)
    }
}
