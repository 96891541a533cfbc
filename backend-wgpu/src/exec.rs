//! The executable: params uploaded once into buffers shared by every variant and clone; one
//! compiled [`Program`] per binding of the graph's symbols (an LRU cache shared by clones); per
//! executable, an [`Instance`] (arenas and bind groups) per program. `run` writes inputs, records
//! every dispatch in one encoder, submits once and reads all host outputs back through one mapped
//! staging buffer (several where the outputs together exceed the device's `max_buffer_size`).

use crate::compile::{build_program, Program, ProgramStep, Workgroups};
use crate::device::DeviceContext;
use crate::instance::{Instance, UPLOAD_STAGING_MIN};
use crate::lower::LowerFn;
use crate::lru::Lru;
use crate::params::ParamStore;
use crate::plan::bindable;
use crate::profile::{DispatchTime, HostCosts, KernelInfo, Profile, ProfiledRun};
use crate::resident::{map_and_wait, read_mapped, WgpuTensor};
use crate::timer::Timer;
use backend_api::decompose::{legalise, Legalised};
use backend_api::{
    bail, check_feeds, check_placement, Bindings, CompileOptions, DType, DeviceTensor, Error, ErrorKind, Executable,
    Feed, Fetched, Graph, Placement, Result, Signature, Tensor, TensorView,
};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What every clone of an executable shares.
struct Shared {
    ctx: Arc<DeviceContext>,
    /// The graph as built (symbolic dims allowed): errors name its nodes.
    user: Graph,
    /// `user` legalised for this backend: what is compiled.
    legal: Legalised,
    sig: Signature,
    opts: CompileOptions,
    /// How nodes are lowered (`crate::lower::lower` outside tests).
    lower: LowerFn,
    params: ParamStore,
    programs: Mutex<Lru<Bindings, Arc<Program>>>,
}

impl Shared {
    /// The program for `b`, compiled on first use.
    fn program(&self, b: &Bindings) -> Result<Arc<Program>> {
        let Ok(mut cache) = self.programs.lock() else {
            bail!(Device, "the variant cache lock was poisoned by a panic")
        };
        let p = cache.get_or_try_insert(b, || {
            let bound;
            let legal = &self.legal.graph;
            let graph = if b.is_empty() && !legal.has_symbols() {
                legal
            } else {
                bound = legal.bind_symbols(b).map_err(|e| self.legal.user_error(&self.user, e))?;
                &bound
            };
            let program = build_program(&self.ctx, graph, &self.sig, &self.opts, self.lower).map_err(|e| {
                let e = self.legal.user_error(&self.user, e);
                if b.is_empty() {
                    e
                } else {
                    e.context(format!("compiling the variant for {b}"))
                }
            })?;
            // New pipelines go to the persistent cache now, not at exit, which a host may skip.
            self.ctx.pipelines.persist();
            Ok(Arc::new(program))
        })?;
        Ok(p.clone())
    }
}

/// A graph compiled for one wgpu device.
pub struct WgpuExecutable {
    shared: Arc<Shared>,
    instances: Lru<Bindings, Instance>,
}

impl WgpuExecutable {
    /// Validates `graph` and, when its shapes are static, compiles it (every pipeline, bind group
    /// and buffer). A graph with symbolic dims is compiled per binding at run.
    pub(crate) fn compile(ctx: &Arc<DeviceContext>, graph: &Graph, opts: &CompileOptions) -> Result<WgpuExecutable> {
        WgpuExecutable::compile_lowered(ctx, graph, opts, crate::lower::lower)
    }

    /// [`WgpuExecutable::compile`] with each node lowered by `lower`.
    pub(crate) fn compile_lowered(
        ctx: &Arc<DeviceContext>,
        graph: &Graph,
        opts: &CompileOptions,
        lower: LowerFn,
    ) -> Result<WgpuExecutable> {
        graph.validate()?;
        let sig = Signature::of(graph);
        let params = ParamStore::new(ctx, &sig)?;
        let shared = Arc::new(Shared {
            ctx: ctx.clone(),
            user: graph.clone(),
            legal: legalise(graph, &crate::lower::lowers, opts.decompose_all)?,
            sig,
            opts: opts.clone(),
            lower,
            params,
            programs: Mutex::new(Lru::new(opts.max_variants)),
        });
        WgpuExecutable::sharing(shared)
    }

    /// An executable over `shared`; a static graph gets its instance (arenas, bind groups) now.
    fn sharing(shared: Arc<Shared>) -> Result<WgpuExecutable> {
        let static_graph = !shared.legal.graph.has_symbols();
        let mut exe = WgpuExecutable { instances: Lru::new(shared.opts.max_variants), shared };
        if static_graph {
            exe.instance(&Bindings::new())?;
        }
        Ok(exe)
    }

    /// Number of kernel dispatches the most recently used variant records per run (repeated
    /// bodies counted once per iteration).
    pub fn dispatch_count(&self) -> usize {
        self.instances.most_recent().map_or(0, |i| i.program.recorded_dispatches())
    }

    /// How the most recently used variant's compile went: kernels, pipelines built, where the
    /// time went ([`crate::CompileStats`]); `None` before a symbolic graph's first run.
    pub fn compile_stats(&self) -> Option<&crate::CompileStats> {
        self.instances.most_recent().map(|i| &i.stats)
    }

    /// Number of compiled variants this executable holds instances of.
    pub fn variant_count(&self) -> usize {
        self.instances.len()
    }

    fn instance(&mut self, b: &Bindings) -> Result<&mut Instance> {
        let shared = &self.shared;
        self.instances
            .get_or_try_insert(b, || Instance::new(&shared.ctx, shared.program(b)?, &shared.params, &shared.sig))
    }
}

/// The bytes of a host value as the device stores them. Bool bytes other than 0 read as true
/// (§1.1) and ops always write 0 or 1, so they are normalised here, once, instead of in every
/// kernel.
fn device_bytes<'a>(v: &TensorView<'a>) -> Cow<'a, [u8]> {
    let bytes = v.bytes();
    if v.dtype() == DType::Bool && bytes.iter().any(|&b| b > 1) {
        Cow::Owned(bytes.iter().map(|&b| (b != 0) as u8).collect())
    } else {
        Cow::Borrowed(bytes)
    }
}

/// Writes a host value at `offset` of `buf` (padded to whole words); errs (`Input`) when it does
/// not fit there, instead of leaving wgpu to refuse the write.
pub(crate) fn write_value(ctx: &DeviceContext, buf: &wgpu::Buffer, offset: u64, v: &TensorView<'_>) -> Result<()> {
    let mut data = device_bytes(v);
    if data.is_empty() {
        return Ok(());
    }
    let n = data.len().div_ceil(4).saturating_mul(4);
    let end = u64::try_from(n).ok().and_then(|n| offset.checked_add(n));
    if end.is_none_or(|e| e > buf.size()) {
        bail!(Input, "a value of {} bytes does not fit its {}-byte buffer at byte {offset}", data.len(), buf.size());
    }
    if n != data.len() {
        data.to_mut().resize(n, 0);
    }
    ctx.queue.write_buffer(buf, offset, &data);
    Ok(())
}

/// The wgpu storage behind a device feed, checked to belong to this device.
fn own_device_value<'a>(ctx: &Arc<DeviceContext>, name: &str, d: &'a DeviceTensor) -> Result<&'a WgpuTensor> {
    match d.downcast::<WgpuTensor>() {
        Some(t) if Arc::ptr_eq(&t.ctx, ctx) => Ok(t),
        Some(_) => bail!(Input, "input {name:?} is a device value of another wgpu device; read it to the host first"),
        None => bail!(
            Input,
            "input {name:?} is a device value of backend {:?}; wgpu takes only its own device values (read it to the host first)",
            d.backend()
        ),
    }
}

impl Executable for WgpuExecutable {
    fn signature(&self) -> &Signature {
        &self.shared.sig
    }

    fn set_param(&mut self, name: &str, value: TensorView<'_>) -> Result<()> {
        self.shared.params.upload(&self.shared.ctx, &self.shared.sig, name, &value)
    }

    fn run_with(&mut self, inputs: &[(&str, Feed<'_>)], placement: &[Placement]) -> Result<Vec<Fetched>> {
        self.run_recycling(inputs, placement, Vec::new(), None)
    }

    fn run_into(&mut self, inputs: &[(&str, TensorView<'_>)], outputs: &mut Vec<Tensor>) -> Result<()> {
        let feeds: Vec<(&str, Feed<'_>)> = inputs.iter().map(|(n, v)| (*n, Feed::Host(*v))).collect();
        let recycle: Vec<Vec<u8>> = outputs.drain(..).map(Tensor::into_bytes).collect();
        for f in self.run_recycling(&feeds, &[], recycle, None)? {
            outputs.push(f.into_host()?);
        }
        Ok(())
    }

    fn clone_shared(&self) -> Result<Box<dyn Executable>> {
        Ok(Box::new(WgpuExecutable::sharing(self.shared.clone())?))
    }
}

impl WgpuExecutable {
    /// `run_with`, reading host outputs into the byte vectors of `recycle` (by position) where
    /// given. With `timed`, the dispatches are recorded with its timer's timestamps and the host
    /// phases are timed into its costs; without, neither costs anything.
    fn run_recycling(
        &mut self,
        inputs: &[(&str, Feed<'_>)],
        placement: &[Placement],
        recycle: Vec<Vec<u8>>,
        mut timed: Option<(&Timer, &mut HostCosts)>,
    ) -> Result<Vec<Fetched>> {
        let shared = self.shared.clone();
        let (feeds, bindings) = check_feeds(&shared.sig, inputs)?;
        check_placement(&shared.sig, placement)?;
        shared.params.check_all_set(&shared.sig)?;
        let ctx = &shared.ctx;
        let inst = self.instance(&bindings)?;
        let mut clock = timed.as_ref().map(|_| Instant::now());
        let mut lap = |phase: fn(&mut HostCosts) -> &mut Duration, timed: &mut Option<(&Timer, &mut HostCosts)>| {
            if let (Some(start), Some((_, costs))) = (clock.as_mut(), timed.as_mut()) {
                let now = Instant::now();
                *phase(costs) += now - *start;
                *start = now;
            }
        };
        let oom = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("run") });
        let host_bytes = feeds
            .iter()
            .map(|f| if let Feed::Host(v) = f { u64::try_from(v.bytes().len()).unwrap_or(u64::MAX) } else { 0 })
            .fold(0u64, u64::saturating_add);
        let staged = !inst.upload.is_empty() && host_bytes >= UPLOAD_STAGING_MIN;
        if staged {
            upload_staged(ctx, inst, &shared.params, &feeds, &mut enc)?;
        }
        for (k, (f, slot)) in feeds.iter().zip(&shared.sig.inputs).enumerate() {
            let Some(loc) = inst.input(k) else { bail!(Device, "no memory planned for input {:?}", slot.name) };
            let buf = inst.buffer(loc.home, &shared.params)?;
            match f {
                Feed::Host(_) if staged => {}
                Feed::Host(v) => {
                    write_value(ctx, buf, loc.offset, v).map_err(|e| e.context(format!("input {:?}", slot.name)))?
                }
                Feed::Device(d) => {
                    let t = own_device_value(ctx, &slot.name, d)?;
                    let n = t.bytes.div_ceil(4).saturating_mul(4);
                    if n > loc.size {
                        bail!(
                            Input,
                            "device input {:?} of {} bytes overflows its {}-byte range",
                            slot.name,
                            t.bytes,
                            loc.size
                        );
                    }
                    if n > 0 {
                        enc.copy_buffer_to_buffer(&t.buffer, 0, buf, loc.offset, n);
                    }
                }
            }
        }
        lap(|h| &mut h.upload, &mut timed);
        match &timed {
            Some((timer, _)) => timer.record(inst, &shared.params, &mut enc)?,
            None => record(inst, &shared.params, &mut enc)?,
        }
        let device_outs = copy_outputs(ctx, inst, &shared.params, &mut enc, placement)?;
        let commands = enc.finish();
        lap(|h| &mut h.record, &mut timed);
        ctx.queue.submit([commands]);
        let invalid = pollster::block_on(scope.pop());
        if let Some(e) = pollster::block_on(oom.pop()) {
            bail!(DeviceLimit, "the GPU ran out of memory in the run: {e}");
        }
        if let Some(e) = invalid {
            bail!(Device, "the GPU rejected the run: {e}");
        }
        if timed.is_some() {
            // Wait here so that the readback phase is the mapping and copying alone.
            ctx.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| Error::new(ErrorKind::Device, format!("waiting for the GPU: {e}")))?;
        }
        lap(|h| &mut h.submit_wait, &mut timed);
        let out = gather_outputs(ctx, inst, placement, device_outs, recycle);
        lap(|h| &mut h.readback, &mut timed);
        out
    }

    /// Profiles `iters` runs with host inputs `inputs` (outputs read back and dropped): the GPU
    /// time of every dispatch with its provenance, and each run's host-side costs. Profiled runs
    /// record the same dispatches in the same order as [`Executable::run`] and give the same
    /// results; only they pay for timestamps (a normal run records none).
    ///
    /// With `TIMESTAMP_QUERY_INSIDE_PASSES` a timestamp is written between dispatches of the one
    /// compute pass; with `TIMESTAMP_QUERY` alone each dispatch runs in a pass of its own, timed
    /// at the pass's start and end ([`crate::TimerKind`]). Errs (`Unsupported`) where the device has no
    /// timestamp queries or [`crate::FeatureChoice::timestamps`] is off. Warm up with plain runs
    /// first: the first run of a variant also allocates its memory.
    pub fn profile(&mut self, inputs: &[(&str, TensorView<'_>)], iters: usize) -> Result<Profile> {
        let feeds: Vec<(&str, Feed<'_>)> = inputs.iter().map(|(n, v)| (*n, Feed::Host(*v))).collect();
        let shared = self.shared.clone();
        let (_, bindings) = check_feeds(&shared.sig, &feeds)?;
        let program = self.instance(&bindings)?.program.clone();
        let timer = Timer::new(&shared.ctx, &program)?;
        // Provenance with the host's node ids (legalisation may have renumbered nodes).
        let infos: Vec<Arc<KernelInfo>> = program
            .dispatches
            .iter()
            .map(|d| {
                let mut info = (*d.info).clone();
                info.node = shared.legal.origin.get(info.node).map_or(info.node, |n| n.0);
                Arc::new(info)
            })
            .collect();
        let mut runs = Vec::new();
        let mut recycle = Vec::new();
        for _ in 0..iters {
            let mut host = HostCosts::default();
            let outs = self.run_recycling(&feeds, &[], std::mem::take(&mut recycle), Some((&timer, &mut host)))?;
            recycle = outs.into_iter().filter_map(|f| f.into_host().ok()).map(Tensor::into_bytes).collect();
            let times = timer.read(&shared.ctx)?;
            let mut dispatches = Vec::with_capacity(times.len());
            for (k, gpu_ns) in timer.dispatches().zip(times) {
                let Some(info) = infos.get(k) else { bail!(Device, "timed dispatch {k} is not in the program") };
                dispatches.push(DispatchTime { info: info.clone(), gpu_ns });
            }
            runs.push(ProfiledRun { dispatches, host });
        }
        Ok(Profile { device: shared.ctx.caps.description.clone(), timer: timer.kind(), runs })
    }
}

/// Writes every host input into the instance's persistent upload buffers (one map each, waiting
/// for the previous run to release them) and records the copies into the inputs' arena ranges.
fn upload_staged(
    ctx: &DeviceContext,
    inst: &Instance,
    params: &ParamStore,
    feeds: &[Feed<'_>],
    enc: &mut wgpu::CommandEncoder,
) -> Result<()> {
    for (b, upload) in inst.upload.iter().enumerate() {
        map_and_wait(ctx, upload, wgpu::MapMode::Write)?;
        let mut copies = Vec::new();
        let written = write_uploads(inst, feeds, b, upload, &mut copies);
        upload.unmap();
        written?;
        for (off, loc, n4) in copies {
            enc.copy_buffer_to_buffer(upload, off, inst.buffer(loc.home, params)?, loc.offset, n4);
        }
    }
    Ok(())
}

/// Writes the host inputs placed in upload buffer `b` (mapped) and lists their copies
/// (offset in `upload`, arena range, bytes).
fn write_uploads(
    inst: &Instance,
    feeds: &[Feed<'_>],
    b: usize,
    upload: &wgpu::Buffer,
    copies: &mut Vec<(u64, crate::plan::Loc, u64)>,
) -> Result<()> {
    for (k, f) in feeds.iter().enumerate() {
        let Feed::Host(v) = f else { continue };
        let (Some(loc), Some(&(buf, off))) = (inst.input(k), inst.upload_offsets.get(k)) else {
            bail!(Device, "no upload range planned for input {k}")
        };
        let data = device_bytes(v);
        if buf != b || data.is_empty() {
            continue;
        }
        let n4 = data.len().div_ceil(4).saturating_mul(4);
        let (Ok(n4_64), Some(pad)) = (u64::try_from(n4), n4.checked_sub(data.len())) else {
            bail!(DeviceLimit, "input {k} of {} bytes", data.len())
        };
        if n4_64 > loc.size {
            bail!(Input, "input {k} of {} bytes overflows its {}-byte range", data.len(), loc.size);
        }
        let end = off.checked_add(n4_64);
        let Some(end) = end.filter(|&e| e <= upload.size()) else {
            bail!(Device, "input {k} lies outside its upload buffer")
        };
        let mut view = upload
            .get_mapped_range_mut(off..end)
            .map_err(|e| Error::new(ErrorKind::Device, format!("mapping the upload buffer: {e}")))?;
        view.slice(..data.len()).copy_from_slice(&data);
        // At most 3 bytes of padding, zeroed so that packed kernels read zeros past the end.
        if let Some(zeros) = [0u8; 3].get(..pad).filter(|z| !z.is_empty()) {
            view.slice(data.len()..).copy_from_slice(zeros);
        }
        copies.push((off, loc, n4_64));
    }
    Ok(())
}

/// Records the program into one compute pass: each step's dispatches, a repeated body once per
/// iteration with that iteration's params block.
fn record(inst: &Instance, params: &ParamStore, enc: &mut wgpu::CommandEncoder) -> Result<()> {
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
    for step in &inst.program.steps {
        match *step {
            ProgramStep::Dispatch(k) => dispatch(inst, params, &mut pass, k, 0)?,
            ProgramStep::Repeat { times, first, count } => {
                for i in 0..times {
                    for k in first..first + count {
                        dispatch(inst, params, &mut pass, k, i)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Records dispatch `k` (iteration `i` of its body, if repeated).
pub(crate) fn dispatch(
    inst: &Instance,
    params: &ParamStore,
    pass: &mut wgpu::ComputePass<'_>,
    k: usize,
    i: usize,
) -> Result<()> {
    let (Some(d), Some(bg)) = (inst.program.dispatches.get(k), inst.bind_groups.get(k)) else {
        bail!(Device, "the program records dispatch {k}, which it does not have")
    };
    pass.set_pipeline(&d.pipeline.pipeline);
    match d.per_iteration {
        Some(blocks) => {
            let offset = u64::try_from(i).ok().and_then(|i| i.checked_mul(blocks.stride));
            let Some(offset) = offset.and_then(|o| u32::try_from(o).ok()) else {
                bail!(DeviceLimit, "iteration {i}'s params offset exceeds 32 bits")
            };
            pass.set_bind_group(0, bg, &[offset]);
        }
        None => pass.set_bind_group(0, bg, &[]),
    }
    match d.workgroups {
        Workgroups::Direct([x, y, z]) => pass.dispatch_workgroups(x, y, z),
        Workgroups::Indirect(loc) => pass.dispatch_workgroups_indirect(inst.buffer(loc.home, params)?, loc.offset),
    }
    Ok(())
}

/// Copies host-placed outputs into the staging buffers and device-placed ones into fresh buffers.
fn copy_outputs(
    ctx: &Arc<DeviceContext>,
    inst: &Instance,
    params: &ParamStore,
    enc: &mut wgpu::CommandEncoder,
    placement: &[Placement],
) -> Result<Vec<Option<WgpuTensor>>> {
    let mut device = Vec::with_capacity(inst.program.outputs.len());
    for (i, (o, &(b, off))) in inst.program.outputs.iter().zip(&inst.staging_offsets).enumerate() {
        let src = inst.buffer(o.loc.home, params)?;
        match placement.get(i).copied().unwrap_or_default() {
            Placement::Host => {
                let Some(st) = inst.staging.get(b) else { bail!(Device, "output {i} has no readback buffer") };
                enc.copy_buffer_to_buffer(src, o.loc.offset, st, off, o.loc.size);
                device.push(None);
            }
            Placement::Device => {
                let size = bindable(o.bytes)?;
                let t = WgpuTensor::alloc(ctx, size, o.bytes, o.dtype, o.shape.clone())
                    .map_err(|e| e.context(format!("output {i}")))?;
                enc.copy_buffer_to_buffer(src, o.loc.offset, &t.buffer, 0, size.min(o.loc.size));
                device.push(Some(t));
            }
        }
    }
    Ok(device)
}

/// Reads host-placed outputs back (one map per staging buffer in use) and wraps device-placed ones.
fn gather_outputs(
    ctx: &DeviceContext,
    inst: &Instance,
    placement: &[Placement],
    device: Vec<Option<WgpuTensor>>,
    mut recycle: Vec<Vec<u8>>,
) -> Result<Vec<Fetched>> {
    let outputs = &inst.program.outputs;
    let on_host = |i: usize| placement.get(i).copied().unwrap_or_default() == Placement::Host;
    let mut host: Vec<Option<Tensor>> = vec![None; outputs.len()];
    for (b, st) in inst.staging.iter().enumerate() {
        let mine = |i: usize| on_host(i) && inst.staging_offsets.get(i).is_some_and(|p| p.0 == b);
        if !(0..outputs.len()).any(mine) {
            continue;
        }
        read_mapped(ctx, st, |view| {
            for (i, (o, &(_, off))) in outputs.iter().zip(&inst.staging_offsets).enumerate() {
                if !mine(i) {
                    continue;
                }
                let range =
                    usize::try_from(off).ok().and_then(|s| Some(s..s.checked_add(usize::try_from(o.bytes).ok()?)?));
                let Some(bytes) = range.and_then(|r| view.get(r)) else {
                    bail!(Device, "output {i} lies outside its readback buffer")
                };
                // Copying into memory the host already touched is ~4× faster than into a fresh Vec.
                let mut data = recycle.get_mut(i).map(std::mem::take).unwrap_or_default();
                data.clear();
                if let Err(e) = data.try_reserve_exact(bytes.len()) {
                    bail!(Capacity, "cannot allocate {} bytes of host memory for output {i}: {e}", bytes.len());
                }
                data.extend_from_slice(bytes);
                if let Some(h) = host.get_mut(i) {
                    *h = Some(Tensor::from_bytes(o.dtype, &o.shape, data)?);
                }
            }
            Ok(())
        })?;
    }
    let mut out = Vec::with_capacity(outputs.len());
    for (i, (h, d)) in host.into_iter().zip(device).enumerate() {
        out.push(match (h, d) {
            (_, Some(t)) => Fetched::Device(DeviceTensor::new(Arc::new(t))),
            (Some(t), None) => Fetched::Host(t),
            // Every output has a staging range (at least 16 bytes), so a host output is read.
            (None, None) => bail!(Device, "output {i} was neither read back nor kept on the device"),
        });
    }
    Ok(out)
}
