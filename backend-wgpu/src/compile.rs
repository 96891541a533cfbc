//! `compile`: validate, plan memory, lower every node, and build every pipeline and bind group.
//! Nothing here is repeated at run.

use crate::device::DeviceContext;
use crate::exec::{Dispatch, OutputSlot, WgpuExecutable};
use crate::lower::{lower, Buf, Grid, Kernel, LowerCtx, Lowered};
use crate::plan::{assign, bindable, Home, Loc, Request};
use backend_api::spec::op_label;
use backend_api::{bail, CompileOptions, DType, Error, Graph, Op, Result, Signature, Value};
use std::collections::HashMap;
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// Per-node lowering result with the storage of its values.
struct NodePlan {
    kernels: Vec<Kernel>,
    temps: Vec<usize>,
}

/// Where each value's bytes are, before arena offsets are known.
#[derive(Clone, Copy)]
enum Storage {
    Arena(usize),
    Fixed(Home, u64),
}

struct Planner<'g> {
    graph: &'g Graph,
    storage: HashMap<Value, Storage>,
    reqs: Vec<Request>,
    params: Vec<(String, DType, Vec<usize>)>,
    consts: Vec<Vec<u8>>,
}

impl<'g> Planner<'g> {
    fn arena(&mut self, size: u64, def: usize) -> usize {
        self.reqs.push(Request { size: bindable(size), def, last_use: def });
        self.reqs.len() - 1
    }

    fn touch(&mut self, v: Value, step: usize) {
        if let Some(Storage::Arena(r)) = self.storage.get(&v) {
            let r = &mut self.reqs[*r];
            r.last_use = r.last_use.max(step);
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

fn nbytes(t: &(DType, Vec<usize>)) -> u64 {
    (t.1.iter().product::<usize>() * t.0.size()) as u64
}

/// Compiles `graph` for `ctx`.
pub fn compile(ctx: &Arc<DeviceContext>, graph: &Graph, opts: &CompileOptions) -> Result<WgpuExecutable> {
    graph.validate()?;
    let mut p = Planner { graph, storage: HashMap::new(), reqs: vec![], params: vec![], consts: vec![] };
    let mut plans: Vec<Option<NodePlan>> = Vec::with_capacity(graph.nodes().len());
    for (i, node) in graph.nodes().iter().enumerate() {
        let ctx_err = |e: Error| e.at_node(i, op_label(&node.op));
        let plan = plan_node(ctx, &mut p, i).map_err(ctx_err)?;
        plans.push(plan);
    }
    for v in graph.outputs() {
        p.touch(*v, usize::MAX);
    }
    let lim = &ctx.caps.limits;
    let align = lim.min_storage_buffer_offset_alignment.max(4) as u64;
    let (arena_locs, arena_sizes) = assign(&p.reqs, align, lim.max_buffer_size, !opts.no_memory_reuse)?;
    let resolve = |s: Storage| match s {
        Storage::Arena(r) => arena_locs[r],
        Storage::Fixed(home, size) => Loc { home, offset: 0, size },
    };
    let dev = &ctx.device;
    let storage_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
    let arenas: Vec<wgpu::Buffer> = arena_sizes
        .iter()
        .map(|&s| dev.create_buffer(&wgpu::BufferDescriptor { label: Some("arena"), size: s, usage: storage_usage, mapped_at_creation: false }))
        .collect();
    let params: Vec<wgpu::Buffer> = p
        .params
        .iter()
        .map(|(name, d, s)| {
            let size = bindable(nbytes(&(*d, s.clone())));
            dev.create_buffer(&wgpu::BufferDescriptor { label: Some(name), size, usage: storage_usage, mapped_at_creation: false })
        })
        .collect();
    let consts: Vec<wgpu::Buffer> = p
        .consts
        .iter()
        .map(|data| dev.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("const"), contents: data, usage: storage_usage }))
        .collect();
    let buffers = Buffers { arenas: &arenas, params: &params, consts: &consts };
    let mut dispatches = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        let Some(plan) = plan else { continue };
        let node = &graph.nodes()[i];
        for k in &plan.kernels {
            let locate = |b: Buf| -> Loc {
                match b {
                    Buf::In(j) => resolve(p.storage[&node.inputs[j]]),
                    Buf::Out(j) => resolve(p.storage[&Value { node: backend_api::NodeId(i), output: j }]),
                    Buf::Temp(j) => arena_locs[plan.temps[j]],
                }
            };
            let d = build_dispatch(ctx, &buffers, k, locate).map_err(|e| e.at_node(i, op_label(&node.op)))?;
            dispatches.push(d);
        }
    }
    let sig = Signature::of(graph);
    let inputs = graph.inputs().iter().map(|id| resolve(p.storage[&Value::first(*id)])).collect();
    let outputs = graph
        .outputs()
        .iter()
        .map(|v| {
            let t = static_type(graph, *v)?;
            Ok(OutputSlot { loc: resolve(p.storage[v]), bytes: nbytes(&t), dtype: t.0, shape: t.1 })
        })
        .collect::<Result<Vec<_>>>()?;
    let param_names = p.params.iter().map(|(n, _, _)| n.clone()).collect();
    Ok(WgpuExecutable::new(ctx.clone(), sig, arenas, params, param_names, consts, dispatches, inputs, outputs))
}

fn plan_node(ctx: &Arc<DeviceContext>, p: &mut Planner<'_>, i: usize) -> Result<Option<NodePlan>> {
    let graph = p.graph;
    let node = &graph.nodes()[i];
    let out_types: Vec<_> = (0..node.outputs.len())
        .map(|o| static_type(graph, Value { node: backend_api::NodeId(i), output: o }))
        .collect::<Result<_>>()?;
    let in_types: Vec<_> = node.inputs.iter().map(|v| static_type(graph, *v)).collect::<Result<_>>()?;
    for (d, _) in in_types.iter().chain(&out_types) {
        if !ctx.caps.supports(*d) {
            bail!(Unsupported, "dtype {d} needs a GPU feature this adapter lacks ({})", ctx.caps.description);
        }
    }
    let me = Value::first(backend_api::NodeId(i));
    match &node.op {
        Op::Input(_) => {
            let r = p.arena(nbytes(&out_types[0]), 0);
            p.storage.insert(me, Storage::Arena(r));
            return Ok(None);
        }
        Op::Param(a) => {
            let idx = match p.params.iter().position(|(n, _, _)| *n == a.name) {
                Some(k) => k,
                None => {
                    p.params.push((a.name.clone(), a.dtype, a.shape.clone()));
                    p.params.len() - 1
                }
            };
            p.storage.insert(me, Storage::Fixed(Home::Param(idx), bindable(nbytes(&out_types[0]))));
            return Ok(None);
        }
        Op::Constant(a) => {
            let mut data = a.data.to_vec();
            data.resize(bindable(data.len() as u64) as usize, 0);
            let size = data.len() as u64;
            p.consts.push(data);
            p.storage.insert(me, Storage::Fixed(Home::Const(p.consts.len() - 1), size));
            return Ok(None);
        }
        _ => {}
    }
    for v in &node.inputs {
        p.touch(*v, i);
    }
    let lctx = LowerCtx { node, inputs: in_types, outputs: out_types.clone(), caps: &ctx.caps };
    match lower(&lctx)? {
        Lowered::Alias(k) => {
            let s = p.storage[&node.inputs[k]];
            p.storage.insert(me, s);
            Ok(None)
        }
        Lowered::Kernels { temps, kernels } => {
            for (o, t) in out_types.iter().enumerate() {
                let r = p.arena(nbytes(t), i);
                p.storage.insert(Value { node: backend_api::NodeId(i), output: o }, Storage::Arena(r));
            }
            let temps = temps.iter().map(|&s| p.arena(s, i)).collect();
            Ok(Some(NodePlan { kernels, temps }))
        }
    }
}

struct Buffers<'a> {
    arenas: &'a [wgpu::Buffer],
    params: &'a [wgpu::Buffer],
    consts: &'a [wgpu::Buffer],
}

impl Buffers<'_> {
    fn get(&self, h: Home) -> &wgpu::Buffer {
        match h {
            Home::Arena(k) => &self.arenas[k],
            Home::Param(k) => &self.params[k],
            Home::Const(k) => &self.consts[k],
        }
    }
}

fn grid_dims(ctx: &DeviceContext, grid: Grid) -> Result<[u32; 3]> {
    let max = ctx.caps.limits.max_compute_workgroups_per_dimension as u64;
    match grid {
        Grid::Workgroups(w) => {
            if w.iter().any(|&x| x as u64 > max) {
                bail!(DeviceLimit, "workgroup grid {w:?} exceeds {max} per dimension");
            }
            Ok(w)
        }
        Grid::Threads(n) => {
            let wg = n.div_ceil(256).max(1);
            let x = wg.min(max);
            let y = wg.div_ceil(x);
            if y > max {
                bail!(DeviceLimit, "{n} invocations exceed the device's {max}x{max} workgroup grid");
            }
            Ok([x as u32, y as u32, 1])
        }
    }
}

fn build_dispatch(ctx: &DeviceContext, bufs: &Buffers<'_>, k: &Kernel, locate: impl Fn(Buf) -> Loc) -> Result<Dispatch> {
    let lim = &ctx.caps.limits;
    if k.bindings.len() as u32 > lim.max_storage_buffers_per_shader_stage {
        bail!(DeviceLimit, "kernel needs {} storage buffers, device allows {}", k.bindings.len(), lim.max_storage_buffers_per_shader_stage);
    }
    let mut kinds = vec![crate::pipelines::BindKind::Uniform];
    kinds.extend(k.bindings.iter().map(|(_, kind)| *kind));
    let pipe = ctx.pipelines.get(&ctx.device, &k.source, &kinds)?;
    let mut params = k.params.clone();
    params.resize(params.len().div_ceil(16).max(1) * 16, 0);
    let ubuf = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("params"),
        contents: &params,
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let locs: Vec<Loc> = k.bindings.iter().map(|(b, _)| locate(*b)).collect();
    for l in &locs {
        if l.size > lim.max_storage_buffer_binding_size {
            bail!(DeviceLimit, "a tensor of {} bytes exceeds max_storage_buffer_binding_size {}", l.size, lim.max_storage_buffer_binding_size);
        }
    }
    let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: ubuf.as_entire_binding() }];
    for (j, l) in locs.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: j as u32 + 1,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: bufs.get(l.home),
                offset: l.offset,
                size: std::num::NonZeroU64::new(l.size),
            }),
        });
    }
    let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipe.layout, entries: &entries });
    Ok(Dispatch { pipeline: pipe, bind_group, workgroups: grid_dims(ctx, k.grid)?, _params: ubuf })
}
