//! The executable: kernels for every node, params, and a run that evaluates the nodes in order.

use crate::eval::{kernel, Env, Kernel};
use crate::layout::{count, Bindings};
use crate::mem::{tensor_bytes, to_u64, CpuRefOptions, Meter};
use backend_api::decompose::Legalised;
use backend_api::spec::op_label;
use backend_api::{
    bail, bind_feeds, check_placement, check_slot, DType, DeviceStorage, DeviceTensor, Executable, Feed, Fetched,
    Graph, Node, Placement, Result, Signature, Tensor, TensorView,
};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// A compiled graph for the reference backend. Clones made by `clone_shared` share the graph,
/// the kernels and the params.
pub struct CpuRefExecutable {
    /// The user's graph (errors name its nodes).
    user: Arc<Graph>,
    /// The legalised graph that is evaluated, and where each of its nodes came from.
    legal: Arc<Legalised>,
    kernels: Arc<Vec<Kernel>>,
    sig: Signature,
    params: Arc<RwLock<HashMap<String, Tensor>>>,
    opts: CpuRefOptions,
}

/// A "device-resident" value of the reference backend: host memory, owned.
struct CpuTensor(Tensor);

impl DeviceStorage for CpuTensor {
    fn dtype(&self) -> DType {
        self.0.dtype()
    }
    fn shape(&self) -> &[usize] {
        self.0.shape()
    }
    fn backend(&self) -> &str {
        "cpu-ref"
    }
    fn read(&self) -> Result<Tensor> {
        Ok(self.0.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The bytes of a run input's owned copy.
fn host_bytes(f: &Feed<'_>) -> usize {
    match f {
        Feed::Host(v) => v.bytes().len(),
        Feed::Device(d) => d.downcast::<CpuTensor>().map_or(0, |t| t.0.bytes().len()),
    }
}

/// The owned, canonical tensor behind a run input.
fn feed_tensor(name: &str, f: &Feed<'_>) -> Result<Tensor> {
    match f {
        Feed::Host(v) => canonical(v),
        Feed::Device(d) => match d.downcast::<CpuTensor>() {
            Some(t) => Ok(t.0.clone()),
            None => bail!(
                Input,
                "input {name:?} is a device value of backend {:?}; cpu-ref takes only its own device values \
                 (read it to the host first)",
                d.backend()
            ),
        },
    }
}

impl CpuRefExecutable {
    /// Builds a kernel per node of `legal` (the legalised `user` graph); errs (`Unsupported`,
    /// naming the user's node and op) on an op not implemented.
    pub(crate) fn new(user: &Graph, legal: Legalised, opts: CpuRefOptions) -> Result<CpuRefExecutable> {
        let mut kernels = Vec::with_capacity(legal.graph.nodes().len());
        for (id, node) in legal.graph.nodes().iter().enumerate() {
            let k = kernel(&node.op).map_err(|e| legal.user_error(user, e.at_node(id, op_label(&node.op))))?;
            kernels.push(k);
        }
        Ok(CpuRefExecutable {
            user: Arc::new(user.clone()),
            legal: Arc::new(legal),
            kernels: Arc::new(kernels),
            sig: Signature::of(user),
            params: Arc::new(RwLock::new(HashMap::new())),
            opts,
        })
    }

    /// Evaluates every node in order and returns the values of every node's outputs; those of a
    /// node that is not a graph output are dropped (empty) once its last reader ran, and their
    /// bytes released from `meter`, so the cap bounds what is live, not all that was computed.
    fn evaluate(
        &self,
        inputs: &HashMap<String, Tensor>,
        bindings: &mut Bindings,
        meter: &mut Meter,
    ) -> Result<Vec<Vec<Tensor>>> {
        let Ok(params) = self.params.read() else { bail!(Device, "the params lock was poisoned by a panic") };
        let graph = &self.legal.graph;
        let last = last_uses(graph);
        let mut values: Vec<Vec<Tensor>> = Vec::with_capacity(graph.nodes().len());
        for (id, (node, kern)) in graph.nodes().iter().zip(self.kernels.iter()).enumerate() {
            let ctx = |e: backend_api::Error| self.legal.user_error(&self.user, e.at_node(id, op_label(&node.op)));
            let ins = node_inputs(&values, node).map_err(ctx)?;
            check_memory(node, &ins, bindings, meter).map_err(ctx)?;
            let outs = kern(&ins, &Env { inputs, params: &params, bindings }).map_err(ctx)?;
            check_outputs(node, &outs, bindings).map_err(ctx)?;
            for (i, t) in outs.iter().enumerate() {
                meter.hold(t.bytes().len(), &format!("output {i} {}{:?}", t.dtype(), t.shape())).map_err(ctx)?;
            }
            values.push(outs);
            // A node nobody reads (dead code) is dropped at once; the others after their last reader.
            let readers = node.inputs.iter().map(|v| v.node.0).chain(std::iter::once(id));
            for src in readers {
                if last.get(src) == Some(&id) {
                    if let Some(dead) = values.get_mut(src) {
                        meter.release(dead.iter().map(|t| t.bytes().len()).sum());
                        dead.clear();
                    }
                }
            }
        }
        Ok(values)
    }
}

/// The tensors `node` reads, from the outputs computed so far (`values[id]` of node `id`): an
/// `Arity` error for one not computed.
pub(crate) fn node_inputs<'v>(values: &'v [Vec<Tensor>], node: &Node) -> Result<Vec<&'v Tensor>> {
    let mut ins = Vec::with_capacity(node.inputs.len());
    for v in &node.inputs {
        match values.get(v.node.0).and_then(|o| o.get(v.output)) {
            Some(t) => ins.push(t),
            None => bail!(Arity, "input {v} not computed"),
        }
    }
    Ok(ins)
}

/// For each node, the id of the last node that reads one of its outputs: its own id when none
/// does, `usize::MAX` when one of them is a graph output (kept to the end).
fn last_uses(graph: &Graph) -> Vec<usize> {
    let mut last: Vec<usize> = (0..graph.nodes().len()).collect();
    for (id, node) in graph.nodes().iter().enumerate() {
        for v in &node.inputs {
            if let Some(l) = last.get_mut(v.node.0) {
                *l = (*l).max(id);
            }
        }
    }
    for v in graph.outputs() {
        if let Some(l) = last.get_mut(v.node.0) {
            *l = usize::MAX;
        }
    }
    last
}

/// The sizes of the node's declared outputs, when every symbol in them is bound already.
fn declared_dims(node: &Node, bindings: &Bindings) -> Option<Vec<Vec<usize>>> {
    node.outputs.iter().map(|o| bindings.resolve(&o.shape).ok()).collect()
}

/// Checks before a node runs that its outputs (where their sizes are known) and its working memory
/// fit under the memory cap beside what is live: a `Shape` error for an impossible size, a
/// `Capacity` error past the cap. Outputs whose symbols are not bound yet are counted after the
/// kernel ran.
fn check_memory(node: &Node, ins: &[&Tensor], bindings: &Bindings, meter: &Meter) -> Result<()> {
    let mut elements = 0u64;
    for t in ins {
        elements = elements.saturating_add(to_u64(count(t.shape())?));
    }
    let declared = declared_dims(node, bindings);
    let mut out_bytes = 0usize;
    let mut shapes = Vec::new();
    for (o, dims) in node.outputs.iter().zip(declared.iter().flatten()) {
        let b = tensor_bytes(o.dtype, dims).map_err(|e| e.context(format!("declared output {}{dims:?}", o.dtype)))?;
        let Some(sum) = out_bytes.checked_add(b) else { bail!(Shape, "the node's outputs need more than usize bytes") };
        out_bytes = sum;
        elements = elements.saturating_add(to_u64(count(dims)?));
        shapes.push(format!("{}{dims:?}", o.dtype));
    }
    meter.check_node(out_bytes, elements, &format!("the node (outputs {})", shapes.join(", ")))
}

/// Checks computed outputs against the node's inferred types (the deferred checks of §1.2).
fn check_outputs(node: &Node, outs: &[Tensor], bindings: &mut Bindings) -> Result<()> {
    if outs.len() != node.outputs.len() {
        bail!(Arity, "computed {} outputs, the node declares {}", outs.len(), node.outputs.len());
    }
    for (i, (t, want)) in outs.iter().zip(&node.outputs).enumerate() {
        if t.dtype() != want.dtype {
            bail!(DType, "output {i} computed as {} but declared {}", t.dtype(), want.dtype);
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
        let Ok(mut params) = self.params.write() else { bail!(Device, "the params lock was poisoned by a panic") };
        params.insert(name.to_string(), canonical(&value)?);
        Ok(())
    }

    fn run_with(&mut self, inputs: &[(&str, Feed<'_>)], placement: &[Placement]) -> Result<Vec<Fetched>> {
        let (feeds, slots) = bind_feeds(&self.sig, inputs)?;
        check_placement(&self.sig, placement)?;
        let mut meter = Meter::new(&self.opts);
        let mut by_name = HashMap::new();
        for (slot, f) in self.sig.inputs.iter().zip(&feeds) {
            // The owned copy is made only once its size is known to fit.
            meter.hold(host_bytes(f), &format!("input {:?}", slot.name))?;
            by_name.insert(slot.name.clone(), feed_tensor(&slot.name, f)?);
        }
        self.check_params_set()?;
        let mut bindings = Bindings::from_slots(slots);
        let values = self.evaluate(&by_name, &mut bindings, &mut meter)?;
        let outputs = self.legal.graph.outputs();
        let mut outs = Vec::with_capacity(outputs.len());
        for (i, v) in outputs.iter().enumerate() {
            let Some(t) = values.get(v.node.0).and_then(|o| o.get(v.output)) else {
                bail!(Arity, "graph output {v} was not computed")
            };
            outs.push(match placement.get(i).copied().unwrap_or_default() {
                Placement::Host => Fetched::Host(t.clone()),
                Placement::Device => Fetched::Device(DeviceTensor::new(Arc::new(CpuTensor(t.clone())))),
            });
        }
        Ok(outs)
    }

    fn clone_shared(&self) -> Result<Box<dyn Executable>> {
        Ok(Box::new(CpuRefExecutable {
            user: self.user.clone(),
            legal: self.legal.clone(),
            kernels: self.kernels.clone(),
            sig: self.sig.clone(),
            params: self.params.clone(),
            opts: self.opts,
        }))
    }
}

impl CpuRefExecutable {
    fn check_params_set(&self) -> Result<()> {
        let Ok(params) = self.params.read() else { bail!(Device, "the params lock was poisoned by a panic") };
        for p in &self.sig.params {
            if !params.contains_key(&p.name) {
                bail!(Input, "param {:?} ({}{}) was never set; call set_param first", p.name, p.dtype, p.shape);
            }
        }
        Ok(())
    }
}
