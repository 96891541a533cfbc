//! The backend contract: [`Backend`] compiles graphs into [`Executable`]s.

use crate::device_value::{Feed, Fetched, Placement};
use crate::{Bindings, DType, Graph, OpKind, Result, Shape, Tensor, TensorView};

/// What a backend can do on the device it was created for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capabilities {
    /// Human-readable device description (adapter name and API for GPUs).
    pub device: String,
    /// Dtypes the backend can compute with on this device.
    pub dtypes: Vec<DType>,
    /// Spec names of the ops (sub-ops expanded) it lowers, natively or by decomposition.
    pub ops: Vec<String>,
}

/// Options for [`Backend::compile`].
#[derive(Clone, Debug, PartialEq)]
pub struct CompileOptions {
    /// Keep every intermediate value alive (no memory reuse), for debugging.
    pub no_memory_reuse: bool,
    /// For graphs with symbolic dims on backends that compile one variant per binding of the
    /// symbols: how many compiled variants to keep (least recently used dropped first; ≥ 1).
    pub max_variants: usize,
    /// Decompose every op that has a decomposition ([`crate::decompose::legalise`] with `all`),
    /// even the ops the backend lowers natively. Off by default: a native lowering is faster. On,
    /// it runs the same graph through the primitives instead, which is how conformance checks
    /// both paths of the ops that have two, and a way to rule out a fused kernel when a result
    /// looks wrong.
    pub decompose_all: bool,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions { no_memory_reuse: false, max_variants: 8, decompose_all: false }
    }
}

/// A named, typed slot of an executable (an input, param or output).
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    /// The name (`out0`, `out1`, … for outputs).
    pub name: String,
    /// Declared dtype.
    pub dtype: DType,
    /// Declared shape.
    pub shape: Shape,
}

/// The inputs, params and outputs of an executable, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Signature {
    /// Graph inputs, in declaration order.
    pub inputs: Vec<Slot>,
    /// Params (one per distinct name).
    pub params: Vec<Slot>,
    /// Graph outputs.
    pub outputs: Vec<Slot>,
}

impl Signature {
    /// Builds the signature of a graph.
    pub fn of(graph: &Graph) -> Signature {
        let slot = |name: String, t: &crate::TensorType| Slot { name, dtype: t.dtype, shape: t.shape.clone() };
        let mut sig = Signature::default();
        // Leaves declare their own types (Input: dtype and shape; Param: a static shape).
        for n in graph.nodes() {
            if let crate::Op::Input(a) = &n.op {
                sig.inputs.push(Slot { name: a.name.clone(), dtype: a.dtype, shape: a.shape.clone() })
            }
        }
        params_of(graph, &mut sig.params);
        for (i, v) in graph.outputs().iter().enumerate() {
            if let Some(t) = graph.value_type(*v) {
                sig.outputs.push(slot(format!("out{i}"), t));
            }
        }
        sig
    }
}

/// Appends the params `graph` declares, in node order, with those of its subgraphs (bodies of
/// `If`, `While`, `Scan`: their `Param`s name the executable's params, §2.13) where their node is;
/// each name once.
fn params_of(graph: &Graph, params: &mut Vec<Slot>) {
    for n in graph.nodes() {
        if let crate::Op::Param(a) = &n.op {
            if !params.iter().any(|p| p.name == a.name) {
                params.push(Slot { name: a.name.clone(), dtype: a.dtype, shape: Shape::of(&a.shape) });
            }
        }
        for body in n.op.subgraphs() {
            params_of(body, params);
        }
    }
}

/// A backend: a factory of executables for one device. Object safe; hosts hold `Box<dyn Backend>`.
pub trait Backend: Send + Sync {
    /// The registry name (`"wgpu"`, `"cpu-ref"`).
    fn name(&self) -> &str;
    /// What this backend supports on its device.
    fn capabilities(&self) -> Capabilities;
    /// Validates and compiles `graph`. All slow work (pipelines, memory plan) happens here.
    fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<Box<dyn Executable>>;
    /// Whether the backend lowers ops of `kind` itself, without decomposing them
    /// ([`crate::decompose::legalise`]'s `native`). Conformance runs a row both ways when its kind
    /// is native and has a decomposition. The default, for a backend that does not legalise, is
    /// "every kind whose rows [`Capabilities::ops`] lists"; a backend that legalises overrides it
    /// with its dispatch's predicate (`dispatch_ops!`).
    fn implements(&self, kind: OpKind) -> bool {
        let ops = self.capabilities().ops;
        kind.labels().iter().any(|l| ops.contains(l))
    }
}

/// A compiled graph. Params are set once and kept; `run` may be called any number of times.
///
/// Symbolic dims bind from each run's inputs. Outputs can stay on the device
/// ([`Executable::run_with`]) and be fed to the next run. [`Executable::clone_shared`] gives a
/// second executable (for another thread) that shares the compiled code and the params.
pub trait Executable: Send {
    /// Inputs, params and outputs.
    fn signature(&self) -> &Signature;
    /// Uploads the weight `name`; errs on an unknown name, wrong dtype or shape. Params are
    /// shared with every [`clone_shared`](Executable::clone_shared) clone: setting one here sets
    /// it for all of them (do it before running clones concurrently).
    fn set_param(&mut self, name: &str, value: TensorView<'_>) -> Result<()>;
    /// Runs the graph with the named inputs and returns the outputs in graph order, on the host.
    fn run(&mut self, inputs: &[(&str, TensorView<'_>)]) -> Result<Vec<Tensor>> {
        let feeds: Vec<(&str, Feed<'_>)> = inputs.iter().map(|(n, v)| (*n, Feed::Host(*v))).collect();
        self.run_with(&feeds, &[])?.into_iter().map(Fetched::into_host).collect()
    }
    /// Like [`run`](Executable::run), but writes the outputs into `outputs`, reusing the memory of
    /// the tensors already there (by position) where it is large enough. A host that runs in a
    /// loop keeps its output tensors and avoids faulting in fresh pages on every call, which bounds
    /// the readback of large outputs (4× on the H200's host; docs/PERF.md).
    fn run_into(&mut self, inputs: &[(&str, TensorView<'_>)], outputs: &mut Vec<Tensor>) -> Result<()> {
        *outputs = self.run(inputs)?;
        Ok(())
    }
    /// Runs with inputs that may be device-resident values of this backend, leaving output `i`
    /// where `placement[i]` says (missing entries: [`Placement::Host`]).
    fn run_with(&mut self, inputs: &[(&str, Feed<'_>)], placement: &[Placement]) -> Result<Vec<Fetched>>;
    /// A cheap second executable of the same graph for another thread: compiled code and params
    /// are shared (on the device), scratch memory is its own.
    fn clone_shared(&self) -> Result<Box<dyn Executable>>;
}

/// A symbol bound by a run: (symbol, size, name of the input that bound it).
pub type SymbolBinding = (String, usize, String);

/// Checks run feeds against a signature (names, dtypes, shapes; every input present, none
/// unknown), returns them in signature order with the symbols they bind.
pub fn check_feeds<'a>(sig: &Signature, inputs: &[(&str, Feed<'a>)]) -> Result<(Vec<Feed<'a>>, Bindings)> {
    let (feeds, seen) = bind_feeds(sig, inputs)?;
    Ok((feeds, Bindings::from_seen(seen)))
}

/// [`check_feeds`], with each binding as (symbol, size, name of the input that bound it).
pub fn bind_feeds<'a>(sig: &Signature, inputs: &[(&str, Feed<'a>)]) -> Result<(Vec<Feed<'a>>, Vec<SymbolBinding>)> {
    for (k, (name, _)) in inputs.iter().enumerate() {
        // A second feed of one name would be ignored silently (the first one wins): refuse it.
        if inputs.get(..k).is_some_and(|before| before.iter().any(|(n, _)| n == name)) {
            crate::bail!(Input, "input {name:?} is given more than once; give each input once");
        }
        if !sig.inputs.iter().any(|s| s.name == *name) {
            let known: Vec<&str> = sig.inputs.iter().map(|s| s.name.as_str()).collect();
            crate::bail!(Input, "unknown input {name:?}; the graph's inputs are {known:?}");
        }
    }
    let mut seen = Vec::new();
    let mut out = Vec::with_capacity(sig.inputs.len());
    for slot in &sig.inputs {
        let Some((_, v)) = inputs.iter().find(|(n, _)| *n == slot.name) else {
            crate::bail!(Input, "missing input {:?} ({}{})", slot.name, slot.dtype, slot.shape);
        };
        check_value(slot, v.dtype(), v.shape(), &mut seen)?;
        out.push(*v);
    }
    Ok((out, seen))
}

/// Checks a placement list against a signature's outputs.
pub fn check_placement(sig: &Signature, placement: &[Placement]) -> Result<()> {
    if placement.len() > sig.outputs.len() {
        crate::bail!(Input, "{} placements given for {} outputs", placement.len(), sig.outputs.len());
    }
    Ok(())
}

/// Checks run inputs against a signature (names, dtypes, shapes; every input present, none unknown)
/// and returns them in signature order. Symbolic dims must bind consistently.
pub fn check_run_inputs<'a>(sig: &Signature, inputs: &[(&str, TensorView<'a>)]) -> Result<Vec<TensorView<'a>>> {
    let feeds: Vec<(&str, Feed<'a>)> = inputs.iter().map(|(n, v)| (*n, Feed::Host(*v))).collect();
    let (ordered, _) = check_feeds(sig, &feeds)?;
    let mut views = Vec::with_capacity(ordered.len());
    for (f, slot) in ordered.into_iter().zip(&sig.inputs) {
        match f {
            Feed::Host(v) => views.push(v),
            Feed::Device(_) => crate::bail!(Input, "input {:?} became a device value", slot.name),
        }
    }
    Ok(views)
}

/// Checks one tensor against a declared slot; symbolic dims are bound in `bindings`.
pub fn check_slot(slot: &Slot, v: &TensorView<'_>, bindings: &mut Vec<SymbolBinding>) -> Result<()> {
    check_value(slot, v.dtype(), v.shape(), bindings)
}

/// Checks a dtype and shape against a declared slot; symbolic dims are bound in `bindings`.
pub fn check_value(slot: &Slot, dtype: DType, dims: &[usize], bindings: &mut Vec<SymbolBinding>) -> Result<()> {
    if dtype != slot.dtype {
        crate::bail!(Input, "{:?} expects {} but got {}", slot.name, slot.dtype, dtype);
    }
    if dims.len() != slot.shape.rank() {
        crate::bail!(Input, "{:?} expects shape {} but got {:?}", slot.name, slot.shape, dims);
    }
    for (d, &n) in slot.shape.dims().iter().zip(dims) {
        match d {
            crate::Dim::Static(s) if *s != n => {
                crate::bail!(Input, "{:?} expects shape {} but got {:?}", slot.name, slot.shape, dims)
            }
            crate::Dim::Static(_) => {}
            crate::Dim::Sym(sym) => match bindings.iter().find(|(s, _, _)| s == sym) {
                Some((_, prev, by)) if *prev != n => crate::bail!(
                    ShapeBinding,
                    "symbol {sym} is {prev} from input {by:?} but {n} from input {:?}",
                    slot.name
                ),
                Some(_) => {}
                None => bindings.push((sym.clone(), n, slot.name.clone())),
            },
        }
    }
    Ok(())
}
