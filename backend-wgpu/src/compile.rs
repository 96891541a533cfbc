//! Building a [`Program`] for a graph with static shapes: plan memory, lower every node, build
//! every pipeline, params uniform and constant buffer. Nothing here is repeated at run; the
//! per-executable buffers and bind groups are made from the program by [`crate::instance`].

use crate::device::DeviceContext;
use crate::lower::builder::MAX_RECORDED_DISPATCHES;
use crate::lower::{Buf, Grid, Kernel, Lower, LowerFn, Lowering, NodeIo, Operand, Step, Window};
use crate::pipelines::{BindKind, BuildTimes, Pipeline};
use crate::plan::{assign, bindable, Home, Loc, Request};
use crate::profile::KernelInfo;
use crate::scope;
use backend_api::spec::op_label;
use backend_api::{bail, CompileOptions, DType, Error, ErrorKind, Graph, Op, Result, Signature, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where one compile of a graph spent its time, and how many kernels it made: one per program
/// (a static graph, or one binding of a symbolic graph's dims), from
/// [`crate::WgpuExecutable::compile_stats`].
///
/// Wall times of the phases in order (`lower`, `pipelines`, `dispatches`, `cache_save`; `total`
/// is all of `build`), and summed over the pipelines built, on however many threads
/// ([`crate::WgpuOptions::compile_threads`]), where that time went inside wgpu. With the
/// persistent pipeline cache warm, `pipeline_creation` is the translation to the driver's
/// language plus the driver's cache lookup; cold, it is mostly the driver's compiler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileStats {
    /// Nodes lowered to at least one kernel (leaves, aliases and empty outputs make none).
    pub nodes: usize,
    /// Dispatches of the program (a repeated body's counted once).
    pub kernels: usize,
    /// Distinct pipelines (kernel source and binding layout) among them.
    pub distinct_kernels: usize,
    /// Pipelines this compile built; the others were on the device already (built by an earlier
    /// compile).
    pub pipelines_built: usize,
    /// WGSL bytes of the distinct kernels as rendered (helper libraries included).
    pub wgsl_bytes: u64,
    /// WGSL bytes handed to wgpu for the pipelines built, after the functions no entry point
    /// calls were left out.
    pub wgsl_bytes_built: u64,
    /// Planning memory and lowering every node, rendering the kernels' WGSL (wall time).
    pub lower: Duration,
    /// Building the distinct pipelines, in parallel (wall time).
    pub pipelines: Duration,
    /// Summed over the pipelines built: `create_shader_module`, WGSL parsing and validation.
    pub shader_modules: Duration,
    /// Summed over the pipelines built: `create_compute_pipeline`, translation to the
    /// backend's language (SPIR-V on Vulkan) and the driver's compilation or cache lookup.
    pub pipeline_creation: Duration,
    /// Summed over the pipelines built: waiting for their error scopes.
    pub error_scopes: Duration,
    /// Params blocks, constant buffers and the dispatches' bindings and grids (wall time).
    pub dispatches: Duration,
    /// Distinct params blocks in the program's one uniform buffer (dispatches with the same
    /// params share a block; a repeated body's dispatch has a run of blocks of its own).
    pub params_blocks: usize,
    /// Bind groups of the executable: one per distinct (pipeline, params block, storage ranges).
    pub bind_groups: usize,
    /// Making the executable's arenas, bind groups and readback and upload buffers (wall time;
    /// after `total`).
    pub instance: Duration,
    /// Writing the persistent pipeline cache back to its file (wall time; zero without one).
    pub cache_save: Duration,
    /// All of the program's build (wall time).
    pub total: Duration,
}

impl std::fmt::Display for CompileStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{} nodes, {} kernels, {} distinct, {} built; {:.1} ms: lower {:.1}, pipelines {:.1} \
             (summed: modules {:.1}, creation {:.1}, scopes {:.1}), dispatches {:.1} ({} params blocks), \
             cache save {:.1}; instance {:.1} ({} bind groups)",
            self.nodes,
            self.kernels,
            self.distinct_kernels,
            self.pipelines_built,
            ms(self.total),
            ms(self.lower),
            ms(self.pipelines),
            ms(self.shader_modules),
            ms(self.pipeline_creation),
            ms(self.error_scopes),
            ms(self.dispatches),
            self.params_blocks,
            ms(self.cache_save),
            ms(self.instance),
            self.bind_groups
        )
    }
}

/// How many workgroups a dispatch runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Workgroups {
    /// Known at compile.
    Direct([u32; 3]),
    /// Read by the GPU from three u32 words at this location (written by an earlier kernel).
    Indirect(Loc),
}

/// One dispatch of a program: the pipeline, its params block, the ranges it binds, its grid.
pub(crate) struct DispatchSpec {
    /// The pipeline (shared through the device's cache).
    pub pipeline: Arc<Pipeline>,
    /// Where its params (binding 0) start in the program's uniform buffer (for a repeated body,
    /// its first block).
    pub params_offset: u64,
    /// Bytes of its params block (what is bound).
    pub params_size: u64,
    /// For a repeated body's dispatch, its params blocks: the range `params` is bound with a
    /// dynamic offset of `iteration × stride`.
    pub per_iteration: Option<Blocks>,
    /// Storage bindings 1.. in order.
    pub bindings: Vec<Loc>,
    /// Workgroup grid.
    pub workgroups: Workgroups,
    /// Where it comes from and what it moves, for profiles (not read by runs). Its node is the
    /// compiled (legalised) graph's; `WgpuExecutable::profile` maps it to the host's.
    pub info: Arc<KernelInfo>,
}

/// The per-iteration params blocks of a repeated body's dispatch in its uniform buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    /// Bytes of one block (what is bound).
    pub block: u64,
    /// Bytes from one block to the next (a multiple of the device's uniform offset alignment);
    /// 0 when every iteration has the same params, kept once.
    pub stride: u64,
}

/// What a run records, in order, over the program's dispatches.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ProgramStep {
    /// Dispatch `k`.
    Dispatch(usize),
    /// Dispatches `first..first + count`, recorded `times` times (iteration `i` with params
    /// block `i`).
    Repeat {
        /// Iterations.
        times: usize,
        /// First dispatch of the body.
        first: usize,
        /// Dispatches in the body.
        count: usize,
    },
}

/// Where a graph output is and what it holds.
pub(crate) struct OutputSlot {
    /// Its range.
    pub loc: Loc,
    /// Exact byte count (the range may be padded).
    pub bytes: u64,
    /// Dtype.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
}

/// A graph with static shapes, compiled: everything run needs except the scratch (arena) buffers,
/// which each executable instance allocates for itself. Shared (`Arc`) between clones.
pub(crate) struct Program {
    /// Arena sizes in bytes.
    pub arena_sizes: Vec<u64>,
    /// Constant buffers, in `Home::Const` order.
    pub consts: Vec<wgpu::Buffer>,
    /// Every dispatch's params blocks, each at an offset aligned to the device's
    /// `min_uniform_buffer_offset_alignment`: one buffer instead of one per dispatch, whose
    /// creation (a staging copy each, mapped at creation) was most of building dispatches.
    pub uniform: wgpu::Buffer,
    /// Every distinct dispatch (one bind group each).
    pub dispatches: Vec<DispatchSpec>,
    /// The order a run records them in.
    pub steps: Vec<ProgramStep>,
    /// Where each graph input is written, in signature order.
    pub inputs: Vec<Loc>,
    /// The graph outputs.
    pub outputs: Vec<OutputSlot>,
    /// How its compile went.
    pub stats: CompileStats,
}

impl Program {
    /// Dispatches a run records (repeated bodies counted once per iteration).
    pub fn recorded_dispatches(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match s {
                ProgramStep::Dispatch(_) => 1,
                ProgramStep::Repeat { times, count, .. } => times.saturating_mul(*count),
            })
            .fold(0, usize::saturating_add)
    }
}

/// Per-node lowering result with the arena requests of its scratch buffers and the sizes of its
/// control buffers.
struct NodePlan {
    steps: Vec<Step>,
    temps: Vec<usize>,
    controls: Vec<u64>,
    /// The storage of each `Buf::Param(k)` (a param of a subgraph, found by name).
    params: Vec<Storage>,
    /// The storage of each `Buf::Const(k)` (a constant of a subgraph).
    consts: Vec<Storage>,
}

/// Where each value's bytes are, before arena offsets are known: a request of the arena plan or a
/// fixed buffer, and the value's byte window inside it (non-zero offsets come from aliases).
#[derive(Clone, Copy)]
enum Storage {
    Arena { req: usize, offset: u64, size: u64 },
    Fixed { home: Home, offset: u64, size: u64 },
}

impl Storage {
    /// The storage of `w`, a window of the value stored here.
    fn window(self, w: &Window) -> Result<Storage> {
        let (offset, size) = match self {
            Storage::Arena { offset, size, .. } | Storage::Fixed { offset, size, .. } => (offset, size),
        };
        let inner = sub_range(offset, size, w)?;
        Ok(match self {
            Storage::Arena { req, .. } => Storage::Arena { req, offset: inner.0, size: inner.1 },
            Storage::Fixed { home, .. } => Storage::Fixed { home, offset: inner.0, size: inner.1 },
        })
    }
}

/// The (offset, size) of window `w` inside a value at `offset` with `size` bindable bytes. The
/// size is rounded up to a bindable size but stays inside the value.
fn sub_range(offset: u64, size: u64, w: &Window) -> Result<(u64, u64)> {
    if !w.offset.is_multiple_of(4) {
        bail!(Shape, "a window at byte {} does not start on a 4-byte word", w.offset);
    }
    let end = w.offset.checked_add(w.bytes);
    if end.is_none_or(|e| e > size) {
        bail!(Shape, "a window of {} bytes at byte {} exceeds its value's {size} bytes", w.bytes, w.offset);
    }
    // In range: `w.offset + w.bytes <= size` was checked above.
    let bytes = bindable(w.bytes)?.min(size.saturating_sub(w.offset));
    match offset.checked_add(w.offset) {
        Some(start) => Ok((start, bytes)),
        None => bail!(DeviceLimit, "a window at byte {} of a value at byte {offset} overflows 64 bits", w.offset),
    }
}

struct Planner<'g> {
    graph: &'g Graph,
    storage: HashMap<Value, Storage>,
    reqs: Vec<Request>,
    sig: &'g Signature,
    /// Each constant's node and its bytes (padded to a bindable size).
    consts: Vec<(usize, Vec<u8>)>,
    /// The device's `max_buffer_size`: no arena request may exceed it.
    max_buffer: u64,
}

impl<'g> Planner<'g> {
    /// A request for `size` arena bytes written at step `def`; errs (`DeviceLimit`) past the
    /// device's buffer size, here where the node it belongs to is known (the caller names it).
    fn arena(&mut self, size: u64, def: usize, what: &str) -> Result<usize> {
        if size > self.max_buffer {
            bail!(DeviceLimit, "{what} of {size} bytes exceeds the device's max_buffer_size {}", self.max_buffer);
        }
        self.reqs.push(Request { size, def, last_use: def });
        Ok(self.reqs.len() - 1)
    }

    fn touch(&mut self, v: Value, step: usize) {
        if let Some(Storage::Arena { req, .. }) = self.storage.get(&v) {
            if let Some(r) = self.reqs.get_mut(*req) {
                r.last_use = r.last_use.max(step);
            }
        }
    }
}

fn static_type(graph: &Graph, v: Value) -> Result<(DType, Vec<usize>)> {
    let Some(t) = graph.value_type(v) else { bail!(Arity, "value {v} does not exist") };
    match t.shape.as_static() {
        Some(d) => Ok((t.dtype, d)),
        None => bail!(Unsupported, "value {v} has symbolic shape {}; bind symbols before compiling", t.shape),
    }
}

fn nbytes(t: &(DType, Vec<usize>)) -> Result<u64> {
    crate::lower::builder::tensor_bytes(t.0, &t.1)
}

/// Builds the program of `graph`, whose shapes must all be static, lowering each node with
/// `lower`. Param `k` of `sig` lives in `Home::Param(k)`.
pub(crate) fn build_program(
    ctx: &Arc<DeviceContext>,
    graph: &Graph,
    sig: &Signature,
    opts: &CompileOptions,
    lower: LowerFn,
) -> Result<Program> {
    let start = Instant::now();
    let mut stats = CompileStats::default();
    let times = BuildTimes::default();
    let max_buffer = ctx.caps.limits.max_buffer_size;
    let mut p = Planner { graph, storage: HashMap::new(), reqs: vec![], sig, consts: vec![], max_buffer };
    let mut plans: Vec<Option<NodePlan>> = Vec::with_capacity(graph.nodes().len());
    for (i, node) in graph.nodes().iter().enumerate() {
        let ctx_err = |e: Error| with_types(e, graph, i).at_node(i, op_label(&node.op));
        let plan = plan_node(ctx, &mut p, i, lower).map_err(ctx_err)?;
        plans.push(plan);
    }
    for v in graph.outputs() {
        p.touch(*v, usize::MAX);
    }
    stats.nodes = plans.iter().flatten().filter(|p| !p.steps.is_empty()).count();
    stats.lower = start.elapsed();
    let t = Instant::now();
    (stats.distinct_kernels, stats.wgsl_bytes) = prebuild(ctx, &plans, &times);
    stats.pipelines = t.elapsed();
    let t = Instant::now();
    let lim = &ctx.caps.limits;
    let align = u64::from(lim.min_storage_buffer_offset_alignment.max(4));
    let (arena_locs, mut arena_sizes) = assign(&p.reqs, align, lim.max_buffer_size, !opts.no_memory_reuse)
        .map_err(|e| e.context("planning the arena buffers (a step is a node index; inputs are step 0)"))?;
    // Control buffers come after the data arenas, one buffer each (see `Buf::Control`).
    let mut control_homes: Vec<Vec<usize>> = Vec::with_capacity(plans.len());
    for plan in &plans {
        let sizes = plan.as_ref().map_or(&[][..], |p| &p.controls[..]);
        let mut homes = Vec::with_capacity(sizes.len());
        for &s in sizes {
            arena_sizes.push(bindable(s)?);
            homes.push(arena_sizes.len() - 1);
        }
        control_homes.push(homes);
    }
    let resolve = |s: Storage| -> Result<Loc> {
        match s {
            Storage::Arena { req, offset, size } => {
                let base = arena_locs.get(req).copied();
                let Some((base, start)) = base.and_then(|b| Some((b, b.offset.checked_add(offset)?))) else {
                    bail!(Device, "arena request {req} has no location")
                };
                Ok(Loc { home: base.home, offset: start, size })
            }
            Storage::Fixed { home, offset, size } => Ok(Loc { home, offset, size }),
        }
    };
    let storage_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    let consts: Vec<wgpu::Buffer> = p
        .consts
        .iter()
        .map(|(node, data)| {
            let what = || {
                let op = graph.nodes().get(*node).map_or_else(|| "?".to_string(), |n| op_label(&n.op));
                format!("the data of node {node} ({op})")
            };
            scope::buffer_init(ctx, "const", data, storage_usage, &what)
        })
        .collect::<Result<_>>()?;
    let mut dispatches = Vec::new();
    let mut steps = Vec::new();
    let mut names = KernelNames::default();
    let mut params = ParamsPack::new(ctx);
    for (i, plan) in plans.iter().enumerate() {
        let Some(plan) = plan else { continue };
        let node = &graph.nodes()[i];
        let controls = control_homes.get(i).map_or(&[][..], |c| &c[..]);
        {
            let locate = |w: &Window| -> Result<Loc> {
                let value = |v: &Value| match p.storage.get(v) {
                    Some(s) => Ok(*s),
                    None => bail!(Arity, "value {v} has no storage"),
                };
                let s = match w.buf {
                    Buf::In(j) => match node.inputs.get(j) {
                        Some(v) => value(v)?,
                        None => bail!(Arity, "a kernel binds input {j} of a node with {}", node.inputs.len()),
                    },
                    Buf::Out(j) => value(&Value { node: backend_api::NodeId(i), output: j })?,
                    Buf::Temp(j) => match plan.temps.get(j) {
                        Some(&req) => match p.reqs.get(req) {
                            Some(r) => Storage::Arena { req, offset: 0, size: r.size },
                            None => bail!(Arity, "scratch buffer {j} has no arena request"),
                        },
                        None => bail!(Arity, "a kernel binds scratch buffer {j}, which the node did not make"),
                    },
                    Buf::Control(j) => match (controls.get(j), plan.controls.get(j)) {
                        (Some(&k), Some(&size)) => {
                            Storage::Fixed { home: Home::Arena(k), offset: 0, size: bindable(size)? }
                        }
                        _ => bail!(Arity, "a kernel uses control buffer {j}, which the node did not make"),
                    },
                    Buf::Param(j) => match plan.params.get(j) {
                        Some(s) => *s,
                        None => bail!(Arity, "a kernel binds param {j}, which the node did not name"),
                    },
                    Buf::Const(j) => match plan.consts.get(j) {
                        Some(s) => *s,
                        None => bail!(Arity, "a kernel binds constant {j}, which the node did not make"),
                    },
                };
                resolve(s.window(w)?)
            };
            let at_node = |e: Error| with_types(e, graph, i).at_node(i, op_label(&node.op));
            let origin = (i, op_label(&node.op));
            for step in &plan.steps {
                // No error scope here: a step makes no wgpu object but a pipeline not built
                // before, whose build has scopes of its own; the params go into one buffer below.
                let mut out =
                    Built { dispatches: &mut dispatches, steps: &mut steps, names: &mut names, params: &mut params };
                program_step(ctx, step, &origin, &locate, &times, &mut out).map_err(at_node)?;
            }
        }
    }
    let stored = |v: &Value| match p.storage.get(v) {
        Some(s) => resolve(*s),
        None => bail!(Arity, "value {v} has no storage"),
    };
    let inputs = graph.inputs().iter().map(|id| stored(&Value::first(*id))).collect::<Result<Vec<_>>>()?;
    let outputs = graph
        .outputs()
        .iter()
        .map(|v| {
            let t = static_type(graph, *v)?;
            Ok(OutputSlot { loc: stored(v)?, bytes: nbytes(&t)?, dtype: t.0, shape: t.1 })
        })
        .collect::<Result<Vec<_>>>()?;
    stats.params_blocks = params.blocks;
    let uniform = params.buffer(ctx)?;
    stats.dispatches = t.elapsed();
    let t = Instant::now();
    // New pipelines go to the persistent cache now, not at exit, which a host may skip.
    ctx.pipelines.persist();
    stats.cache_save = t.elapsed();
    stats.kernels = dispatches.len();
    let (built, modules, creation, scopes, bytes) = times.totals();
    (stats.pipelines_built, stats.shader_modules, stats.pipeline_creation) = (built, modules, creation);
    (stats.error_scopes, stats.wgsl_bytes_built) = (scopes, bytes);
    stats.total = start.elapsed();
    Ok(Program { arena_sizes, consts, uniform, dispatches, steps, inputs, outputs, stats })
}

fn plan_node(ctx: &Arc<DeviceContext>, p: &mut Planner<'_>, i: usize, lower: LowerFn) -> Result<Option<NodePlan>> {
    let graph = p.graph;
    let node = &graph.nodes()[i];
    let out_types: Vec<_> = (0..node.outputs.len())
        .map(|o| static_type(graph, Value { node: backend_api::NodeId(i), output: o }))
        .collect::<Result<_>>()?;
    let in_types: Vec<_> = node.inputs.iter().map(|v| static_type(graph, *v)).collect::<Result<_>>()?;
    let me = Value::first(backend_api::NodeId(i));
    let out_type = |o: usize| match out_types.get(o) {
        Some(t) => Ok(t),
        None => bail!(Arity, "the node has no output {o}"),
    };
    match &node.op {
        Op::Input(_) => {
            let size = bindable(nbytes(out_type(0)?)?)?;
            let r = p.arena(size, 0, "the input")?;
            p.storage.insert(me, Storage::Arena { req: r, offset: 0, size });
            return Ok(None);
        }
        Op::Param(a) => {
            let storage = param_storage(p, &a.name, nbytes(out_type(0)?)?)?;
            p.storage.insert(me, storage);
            return Ok(None);
        }
        Op::Constant(a) => {
            let storage = const_storage(p, i, &a.data)?;
            p.storage.insert(me, storage);
            return Ok(None);
        }
        _ => {}
    }
    for v in &node.inputs {
        p.touch(*v, i);
    }
    let operands = |buf: fn(usize) -> Buf, types: &[(DType, Vec<usize>)]| -> Result<Vec<Operand>> {
        types.iter().enumerate().map(|(k, (d, dims))| Operand::whole(buf(k), *d, dims.clone())).collect()
    };
    let io = NodeIo { node, inputs: operands(Buf::In, &in_types)?, outputs: operands(Buf::Out, &out_types)? };
    let mut b = Lower::new(&ctx.caps, node.outputs.len());
    if !io.writes_nothing() {
        lower(&mut b, &io)?;
    }
    let lowering = b.finish();
    let dispatches = lowering.dispatches();
    if dispatches > MAX_RECORDED_DISPATCHES {
        bail!(
            DeviceLimit,
            "the node records {dispatches} dispatches (loops unrolled); at most {MAX_RECORDED_DISPATCHES} per node"
        );
    }
    let Lowering { temps, controls, steps, aliases, params, consts } = lowering;
    for (o, t) in out_types.iter().enumerate() {
        let value = Value { node: backend_api::NodeId(i), output: o };
        let storage = match aliases.get(o).copied().flatten() {
            Some(w) => aliased(p, node, &w)?,
            None => {
                let size = bindable(nbytes(t)?)?;
                Storage::Arena { req: p.arena(size, i, &format!("output {o} ({}{:?})", t.0, t.1))?, offset: 0, size }
            }
        };
        p.storage.insert(value, storage);
    }
    if steps.is_empty() && temps.is_empty() && controls.is_empty() {
        return Ok(None);
    }
    let params = params.iter().map(|(name, bytes)| param_storage(p, name, *bytes)).collect::<Result<_>>()?;
    let consts = consts.into_iter().map(|data| const_storage(p, i, &data)).collect::<Result<_>>()?;
    let temps = temps.iter().map(|&s| p.arena(bindable(s)?, i, "a scratch buffer")).collect::<Result<_>>()?;
    for &s in &controls {
        let size = bindable(s)?;
        if size > p.max_buffer {
            bail!(
                DeviceLimit,
                "a control buffer of {size} bytes exceeds the device's max_buffer_size {}",
                p.max_buffer
            );
        }
    }
    Ok(Some(NodePlan { steps, temps, controls, params, consts }))
}

/// Where the executable's param `name` (declared with `bytes` bytes) is kept: a graph's
/// `Param` leaf or one inside a subgraph.
fn param_storage(p: &Planner<'_>, name: &str, bytes: u64) -> Result<Storage> {
    let Some(idx) = p.sig.params.iter().position(|s| s.name == name) else {
        bail!(Input, "param {name:?} missing from the signature");
    };
    Ok(Storage::Fixed { home: Home::Param(idx), offset: 0, size: bindable(bytes)? })
}

/// Adds constant bytes `data` of node `i` to the program's constants; returns their storage.
fn const_storage(p: &mut Planner<'_>, i: usize, data: &[u8]) -> Result<Storage> {
    let size = u64::try_from(data.len()).map_err(|_| size_error(data.len())).and_then(bindable)?;
    if size > p.max_buffer {
        bail!(DeviceLimit, "a constant of {size} bytes exceeds the device's max_buffer_size {}", p.max_buffer);
    }
    let padded = usize::try_from(size).map_err(|_| size_error(data.len()))?;
    let mut buf = host_bytes(padded)?;
    if let Some(dst) = buf.get_mut(..data.len()) {
        dst.copy_from_slice(data);
    }
    p.consts.push((i, buf));
    Ok(Storage::Fixed { home: Home::Const(p.consts.len() - 1), offset: 0, size })
}

/// The storage of an output that aliases window `w` of one of the node's inputs.
fn aliased(p: &Planner<'_>, node: &backend_api::Node, w: &Window) -> Result<Storage> {
    let Buf::In(k) = w.buf else { bail!(Shape, "an output can alias only an input's memory, not {:?}", w.buf) };
    let Some(s) = node.inputs.get(k).and_then(|v| p.storage.get(v)) else {
        bail!(Arity, "an output aliases input {k}, which has no storage")
    };
    s.window(w)
}

/// `n` zero bytes of host memory, or a `Capacity` error where the host cannot allocate them
/// (instead of the allocator's abort).
pub(crate) fn host_bytes(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    if let Err(e) = v.try_reserve_exact(n) {
        bail!(Capacity, "cannot allocate {n} bytes of host memory: {e}");
    }
    v.resize(n, 0);
    Ok(v)
}

/// The error for a byte count that fits no 64-bit device size.
fn size_error(bytes: usize) -> Error {
    Error::new(ErrorKind::DeviceLimit, format!("{bytes} bytes do not fit a 64-bit device size"))
}

/// Prefixes an error with the node's input and output types.
fn with_types(e: Error, graph: &Graph, i: usize) -> Error {
    let Some(node) = graph.nodes().get(i) else { return e };
    let types = |ts: Vec<String>| ts.join(", ");
    let ins = types(node.inputs.iter().filter_map(|v| graph.value_type(*v)).map(|t| t.to_string()).collect());
    let outs = types(node.outputs.iter().map(|t| t.to_string()).collect());
    e.context(format!("({ins}) -> ({outs})"))
}

/// The pipelines of one kernel source this compile has used, by binding layout.
type Known = Vec<(Vec<BindKind>, Arc<Pipeline>)>;

/// The profile name and the pipelines of each distinct kernel source, found once per compile:
/// naming reads the whole source, and so does each lookup in the device's pipeline cache (a
/// hash of tens of kilobytes), while most dispatches of a graph share a few sources. One lookup
/// here per dispatch finds both.
#[derive(Default)]
struct KernelNames<'a>(HashMap<&'a str, (String, Known)>);

impl<'a> KernelNames<'a> {
    fn info(&mut self, origin: &(usize, String), k: &'a Kernel) -> (KernelInfo, &mut Known) {
        let (name, known) =
            self.0.entry(k.source.as_str()).or_insert_with(|| (shaders::kernel_name(&k.source), Vec::new()));
        (KernelInfo::of(origin.0, &origin.1, k, name.clone()), known)
    }
}

/// What the program's dispatch pass appends to.
struct Built<'o, 'a> {
    dispatches: &'o mut Vec<DispatchSpec>,
    steps: &'o mut Vec<ProgramStep>,
    names: &'o mut KernelNames<'a>,
    params: &'o mut ParamsPack,
}

/// Appends the dispatches of one lowering step and the program step that records them.
fn program_step<'a>(
    ctx: &DeviceContext,
    step: &'a Step,
    origin: &(usize, String),
    locate: &impl Fn(&Window) -> Result<Loc>,
    times: &BuildTimes,
    out: &mut Built<'_, 'a>,
) -> Result<()> {
    match step {
        Step::Kernel(k) => {
            out.steps.push(ProgramStep::Dispatch(out.dispatches.len()));
            let info = out.names.info(origin, k);
            out.dispatches.push(build_dispatch(ctx, k, info, Uniform::Once(&k.params), locate, times, out.params)?);
        }
        Step::Repeat(r) => {
            let first = out.dispatches.len();
            for (j, k) in r.body.iter().enumerate() {
                let blocks = r.params.iter().map(|it| it.get(j).map(|p| &p[..]).unwrap_or(&[])).collect();
                let info = out.names.info(origin, k);
                out.dispatches.push(build_dispatch(
                    ctx,
                    k,
                    info,
                    Uniform::PerIteration(blocks),
                    locate,
                    times,
                    out.params,
                )?);
            }
            out.steps.push(ProgramStep::Repeat { times: r.params.len(), first, count: r.body.len() });
        }
    }
    Ok(())
}

/// The params of one dispatch: one block, or one per iteration of a repeated body.
enum Uniform<'a> {
    Once(&'a [u8]),
    PerIteration(Vec<&'a [u8]>),
}

/// Pads params to a whole number of 16-byte rows (at least one), as uniform structs are.
fn padded_len(n: usize) -> Result<usize> {
    match n.div_ceil(16).max(1).checked_mul(16) {
        Some(p) => Ok(p),
        None => bail!(DeviceLimit, "params of {n} bytes"),
    }
}

/// The uniform buffer's contents and, for a repeated body, where its blocks are.
fn uniform_bytes(ctx: &DeviceContext, u: &Uniform<'_>) -> Result<(Vec<u8>, Option<Blocks>)> {
    match u {
        Uniform::Once(p) => {
            let mut v = p.to_vec();
            v.resize(padded_len(p.len())?, 0);
            Ok((v, None))
        }
        Uniform::PerIteration(blocks) => {
            let lim = &ctx.caps.limits;
            let block = padded_len(blocks.iter().map(|b| b.len()).max().unwrap_or(0))?;
            // Every iteration the same (a While body): one block, bound at offset 0 each time.
            if blocks.windows(2).all(|w| w[0] == w[1]) {
                let mut v = blocks.first().map(|b| b.to_vec()).unwrap_or_default();
                v.resize(block, 0);
                let block64 = u64::try_from(block).map_err(|_| size_error(block))?;
                if block64 > lim.max_uniform_buffer_binding_size {
                    bail!(DeviceLimit, "a params block of {block} bytes exceeds the uniform binding limit");
                }
                return Ok((v, Some(Blocks { block: block64, stride: 0 })));
            }
            let align = usize::try_from(lim.min_uniform_buffer_offset_alignment.max(16)).unwrap_or(256);
            let Some(stride) = block.checked_next_multiple_of(align) else {
                bail!(DeviceLimit, "params of {block} bytes")
            };
            let fits = |t: &usize| u64::try_from(*t).is_ok_and(|t| t <= lim.max_buffer_size);
            let total = stride.checked_mul(blocks.len()).filter(fits);
            let Some(total) = total else {
                bail!(
                    DeviceLimit,
                    "{} iterations of {stride}-byte params blocks exceed the device's buffer size",
                    blocks.len()
                )
            };
            let (Ok(block64), Ok(stride64)) = (u64::try_from(block), u64::try_from(stride)) else {
                bail!(DeviceLimit, "params blocks of {block} bytes")
            };
            if block64 > lim.max_uniform_buffer_binding_size {
                bail!(DeviceLimit, "a params block of {block} bytes exceeds the uniform binding limit");
            }
            let mut v = host_bytes(total)?;
            // `stride >= block >= b.len()` and `stride * blocks.len() == total`: every chunk holds its block.
            for (chunk, b) in v.chunks_mut(stride).zip(blocks) {
                if let Some(dst) = chunk.get_mut(..b.len()) {
                    dst.copy_from_slice(b);
                }
            }
            Ok((v, Some(Blocks { block: block64, stride: stride64 })))
        }
    }
}

/// The params blocks of a program's dispatches, laid out in one uniform buffer.
struct ParamsPack {
    /// The buffer's contents so far.
    bytes: Vec<u8>,
    /// Offset of each single block placed, by its contents: dispatches with equal params (most
    /// of a chain of same-shaped ops) share one block, and so can share a bind group.
    shared: HashMap<Vec<u8>, u64>,
    /// Blocks placed (a repeated body's run counted once).
    blocks: usize,
    /// The device's `min_uniform_buffer_offset_alignment` (at least 16).
    align: usize,
    /// The device's `max_buffer_size`.
    max: u64,
}

impl ParamsPack {
    fn new(ctx: &DeviceContext) -> ParamsPack {
        let lim = &ctx.caps.limits;
        let align = usize::try_from(lim.min_uniform_buffer_offset_alignment.max(16)).unwrap_or(256);
        ParamsPack { bytes: Vec::new(), shared: HashMap::new(), blocks: 0, align, max: lim.max_buffer_size }
    }

    /// Appends `block` (padded already) at the next aligned offset, or finds an equal one placed
    /// before when `share`; returns its offset.
    fn place(&mut self, block: Vec<u8>, share: bool) -> Result<u64> {
        if let Some(&at) = share.then(|| self.shared.get(&block)).flatten() {
            return Ok(at);
        }
        let start = self.bytes.len().checked_next_multiple_of(self.align);
        let end = start.and_then(|s| s.checked_add(block.len()).map(|e| (s, e)));
        let fits = |e: &usize| u64::try_from(*e).is_ok_and(|e| e <= self.max);
        let Some((start, end)) = end.filter(|(_, e)| fits(e)) else {
            bail!(
                DeviceLimit,
                "the params of the program's dispatches exceed the device's max_buffer_size {}",
                self.max
            )
        };
        if self.bytes.try_reserve(end.saturating_sub(self.bytes.len())).is_err() {
            bail!(Capacity, "cannot allocate {end} bytes of host memory for params");
        }
        self.bytes.resize(start, 0);
        self.bytes.extend_from_slice(&block);
        let at = u64::try_from(start).map_err(|_| size_error(start))?;
        self.blocks = self.blocks.saturating_add(1);
        if share {
            self.shared.insert(block, at);
        }
        Ok(at)
    }

    /// The uniform buffer holding every block (16 zero bytes when there are none).
    fn buffer(&self, ctx: &DeviceContext) -> Result<wgpu::Buffer> {
        let empty = [0u8; 16];
        let bytes = if self.bytes.is_empty() { &empty[..] } else { &self.bytes[..] };
        let what = || format!("the params uniform of {} bytes", bytes.len());
        scope::buffer_init(ctx, "params", bytes, wgpu::BufferUsages::UNIFORM, &what)
    }
}

/// Builds the pipelines of every kernel of `plans` in parallel ([`WgpuOptions::compile_threads`]);
/// the program's serial pass then finds them cached. Kernels the device cannot run are left to
/// that pass, which reports them with their node. Returns the number of distinct kernels and
/// their WGSL bytes.
///
/// [`WgpuOptions::compile_threads`]: crate::WgpuOptions::compile_threads
fn prebuild(ctx: &DeviceContext, plans: &[Option<NodePlan>], times: &BuildTimes) -> (usize, u64) {
    fn job(k: &Kernel, first: BindKind) -> (&str, Vec<BindKind>) {
        let mut kinds = vec![first];
        kinds.extend(k.bindings.iter().map(|(_, kind)| *kind));
        (k.source.as_str(), kinds)
    }
    let mut jobs = Vec::new();
    for step in plans.iter().flatten().flat_map(|p| &p.steps) {
        match step {
            Step::Kernel(k) => jobs.push(job(k, BindKind::Uniform)),
            Step::Repeat(r) => jobs.extend(r.body.iter().map(|k| job(k, BindKind::DynamicUniform))),
        }
    }
    let mut seen = HashSet::new();
    jobs.retain(|(s, kinds)| seen.insert((*s, kinds.clone())));
    let bytes = jobs.iter().map(|(s, _)| u64::try_from(s.len()).unwrap_or(u64::MAX)).fold(0, u64::saturating_add);
    let distinct = jobs.len();
    let owned = jobs
        .into_iter()
        .filter(|(s, _)| ctx.caps.check_kernel(s).is_ok())
        .map(|(s, kinds)| (s.to_string(), kinds))
        .collect();
    ctx.pipelines.prebuild(&ctx.device, owned, ctx.compile_threads, times);
    (distinct, bytes)
}

fn build_dispatch(
    ctx: &DeviceContext,
    k: &Kernel,
    (info, known): (KernelInfo, &mut Known),
    uniform: Uniform<'_>,
    locate: &impl Fn(&Window) -> Result<Loc>,
    times: &BuildTimes,
    pack: &mut ParamsPack,
) -> Result<DispatchSpec> {
    let lim = &ctx.caps.limits;
    if u32::try_from(k.bindings.len()).map_or(true, |n| n > lim.max_storage_buffers_per_shader_stage) {
        bail!(
            DeviceLimit,
            "kernel needs {} storage buffers, device allows {}",
            k.bindings.len(),
            lim.max_storage_buffers_per_shader_stage
        );
    }
    let (params, per_iteration) = uniform_bytes(ctx, &uniform)?;
    let first = if per_iteration.is_some() { BindKind::DynamicUniform } else { BindKind::Uniform };
    let mut kinds = vec![first];
    kinds.extend(k.bindings.iter().map(|(_, kind)| *kind));
    // A cached pipeline's kernel passed `check_kernel` on this device before it was built.
    let pipe = match known.iter().find(|(l, _)| *l == kinds) {
        Some((_, p)) => p.clone(),
        None => {
            let p = match ctx.pipelines.cached(&k.source, &kinds) {
                Some(p) => p,
                None => {
                    ctx.caps.check_kernel(&k.source)?;
                    ctx.pipelines.get_timed(&ctx.device, &k.source, &kinds, times)?
                }
            };
            known.push((kinds, p.clone()));
            p
        }
    };
    let params_size = match per_iteration {
        Some(b) => b.block,
        None => u64::try_from(params.len()).map_err(|_| size_error(params.len()))?,
    };
    let params_offset = pack.place(params, per_iteration.is_none())?;
    let locs: Vec<Loc> = k.bindings.iter().map(|(w, _)| locate(w)).collect::<Result<_>>()?;
    let align = u64::from(lim.min_storage_buffer_offset_alignment.max(4));
    for l in &locs {
        if !l.offset.is_multiple_of(align) {
            bail!(
                DeviceLimit,
                "a window at byte offset {} is not aligned to the device's {align}-byte storage offset alignment",
                l.offset
            );
        }
        if l.size > lim.max_storage_buffer_binding_size {
            bail!(
                DeviceLimit,
                "a tensor of {} bytes exceeds max_storage_buffer_binding_size {}",
                l.size,
                lim.max_storage_buffer_binding_size
            );
        }
    }
    let workgroups = workgroups(ctx, k, &locs, locate)?;
    let info = Arc::new(info);
    Ok(DispatchSpec { pipeline: pipe, params_offset, params_size, per_iteration, bindings: locs, workgroups, info })
}

/// The dispatch's workgroups: direct counts checked against the device, or the location of
/// indirect ones (a control buffer the kernel does not bind).
fn workgroups(
    ctx: &DeviceContext,
    k: &Kernel,
    locs: &[Loc],
    locate: &impl Fn(&Window) -> Result<Loc>,
) -> Result<Workgroups> {
    let Grid::Indirect(w) = k.grid else {
        let b = Lower::new(&ctx.caps, 0);
        return Ok(Workgroups::Direct(b.workgroup_counts(k.grid)?));
    };
    if !matches!(w.buf, Buf::Control(_)) || w.bytes < 12 {
        bail!(Shape, "indirect workgroup counts must be 12 bytes of a control buffer, not {w:?}");
    }
    let at = locate(&w)?;
    if locs.iter().any(|l| l.home == at.home) {
        bail!(Shape, "a kernel cannot bind the control buffer its own workgroup counts are read from");
    }
    Ok(Workgroups::Indirect(at))
}
