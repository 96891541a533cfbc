//! Compute pipelines with explicit bind-group layouts, cached per device by (source, layout).

use crate::disk_cache::{CacheStatus, DiskCache};
use crate::wgsl_prune::used_functions;
use backend_api::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a kernel binds one resource. Binding `k` of a kernel is entry `k` of its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindKind {
    /// A uniform buffer (the kernel's params struct).
    Uniform,
    /// A uniform buffer bound at a dynamic offset: one params block per iteration of a
    /// repeated body.
    DynamicUniform,
    /// A read-only storage range.
    Read,
    /// A read-write storage range.
    Write,
}

/// A compiled kernel and the layout its bind groups must follow.
pub struct Pipeline {
    /// The pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// Its only bind-group layout (group 0).
    pub layout: wgpu::BindGroupLayout,
}

type Key = (String, Vec<BindKind>);

/// Pipelines by source, then by layout: a lookup borrows the source instead of copying it.
type Map = HashMap<String, HashMap<Vec<BindKind>, Arc<Pipeline>>>;

/// Time spent building pipelines, summed over the threads that built them (see
/// [`crate::CompileStats`]).
#[derive(Debug, Default)]
pub(crate) struct BuildTimes {
    /// Pipelines built (not found in the cache).
    built: AtomicUsize,
    /// Nanoseconds in `create_shader_module`: WGSL parsing and validation (naga).
    modules_ns: AtomicU64,
    /// Nanoseconds in `create_compute_pipeline`: SPIR-V (or other) translation and the driver's
    /// compilation or pipeline-cache lookup.
    pipelines_ns: AtomicU64,
    /// Nanoseconds waiting on the error scopes of the builds.
    scopes_ns: AtomicU64,
    /// WGSL bytes handed to wgpu after unused functions were left out.
    wgsl_bytes: AtomicU64,
}

impl BuildTimes {
    fn add(counter: &AtomicU64, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        counter.fetch_add(ns, Ordering::Relaxed);
    }

    /// Pipelines built, and the summed (module, pipeline, error-scope) times and WGSL bytes.
    pub(crate) fn totals(&self) -> (usize, Duration, Duration, Duration, u64) {
        let d = |c: &AtomicU64| Duration::from_nanos(c.load(Ordering::Relaxed));
        (
            self.built.load(Ordering::Relaxed),
            d(&self.modules_ns),
            d(&self.pipelines_ns),
            d(&self.scopes_ns),
            self.wgsl_bytes.load(Ordering::Relaxed),
        )
    }
}

/// Pipelines built so far on one device.
#[derive(Default)]
pub struct PipelineCache {
    map: Mutex<Map>,
    /// The persistent driver cache every pipeline is created with, where one is configured.
    disk: Option<DiskCache>,
    /// Whether unused functions are left out of the WGSL handed to wgpu
    /// ([`crate::Tuning::compile_prune`]).
    prune: bool,
}

impl PipelineCache {
    /// An empty cache whose pipelines are created with `disk`'s driver cache, from WGSL without
    /// its unused functions when `prune`.
    pub(crate) fn with_disk(disk: Option<DiskCache>, prune: bool) -> PipelineCache {
        PipelineCache { map: Mutex::default(), disk, prune }
    }

    /// Writes the persistent cache back to its file when pipelines were built since the last
    /// write (errors are kept for [`PipelineCache::disk_status`], never returned).
    pub fn persist(&self) {
        if let Some(d) = &self.disk {
            d.save(self.len());
        }
    }

    /// The persistent cache's file and the outcome of its last load and save; `None` without one.
    pub fn disk_status(&self) -> Option<CacheStatus> {
        self.disk.as_ref().map(DiskCache::status)
    }

    /// Number of distinct pipelines built.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.values().map(HashMap::len).sum()).unwrap_or(0)
    }

    /// Whether no pipeline was built yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pipeline for `source` (entry point `main`) with bindings `kinds`, built on first use.
    pub fn get(&self, device: &wgpu::Device, source: &str, kinds: &[BindKind]) -> Result<Arc<Pipeline>> {
        self.get_timed(device, source, kinds, &BuildTimes::default())
    }

    /// [`PipelineCache::get`], adding the time of a build to `times`.
    pub(crate) fn get_timed(
        &self,
        device: &wgpu::Device,
        source: &str,
        kinds: &[BindKind],
        times: &BuildTimes,
    ) -> Result<Arc<Pipeline>> {
        if let Some(p) = self.cached(source, kinds) {
            return Ok(p);
        }
        let p = Arc::new(build(device, source, kinds, self.build_options(), times)?);
        self.insert(source, kinds, p.clone());
        Ok(p)
    }

    fn build_options(&self) -> BuildOptions<'_> {
        BuildOptions { cache: self.disk.as_ref().map(|d| &d.cache), prune: self.prune }
    }

    /// The pipeline for `source` with bindings `kinds` when one was built already.
    pub(crate) fn cached(&self, source: &str, kinds: &[BindKind]) -> Option<Arc<Pipeline>> {
        self.map.lock().ok()?.get(source)?.get(kinds).cloned()
    }

    fn insert(&self, source: &str, kinds: &[BindKind], p: Arc<Pipeline>) {
        if let Ok(mut m) = self.map.lock() {
            m.entry(source.to_string()).or_default().insert(kinds.to_vec(), p);
        }
    }
}

impl PipelineCache {
    /// Builds the pipelines of `jobs` (source, layout) that are not cached yet on up to
    /// `threads` threads at once (in this thread for one), so that compiling a graph of many
    /// distinct kernels costs about one kernel's shader translation per thread instead of all of them in a row. Errors are
    /// dropped here: a kernel that fails is built again, alone, where the program needs it,
    /// and that build reports the error with its node.
    pub(crate) fn prebuild(&self, device: &wgpu::Device, jobs: Vec<Key>, threads: usize, times: &BuildTimes) {
        let mut todo: Vec<Key> = jobs.into_iter().filter(|(s, k)| self.cached(s, k).is_none()).collect();
        let mut seen = std::collections::HashSet::new();
        todo.retain(|k| seen.insert(k.clone()));
        let threads = threads.min(todo.len());
        let opts = self.build_options();
        if threads < 2 {
            // Built here, not left to the dispatch pass, so that the build's time is counted
            // as `CompileStats::pipelines` with one thread too.
            for (source, kinds) in &todo {
                if let Ok(p) = build(device, source, kinds, opts, times) {
                    self.insert(source, kinds, Arc::new(p));
                }
            }
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    while let Some((source, kinds)) = todo.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        if let Ok(p) = build(device, source, kinds, opts, times) {
                            self.insert(source, kinds, Arc::new(p));
                        }
                    }
                });
            }
        });
    }
}

/// How every pipeline of a cache is built.
#[derive(Clone, Copy)]
struct BuildOptions<'a> {
    /// The persistent driver cache.
    cache: Option<&'a wgpu::PipelineCache>,
    /// Leave unused functions out of the WGSL.
    prune: bool,
}

fn layout_entry(binding: u32, kind: BindKind) -> wgpu::BindGroupLayoutEntry {
    let ty = match kind {
        BindKind::Uniform | BindKind::DynamicUniform => wgpu::BufferBindingType::Uniform,
        // Inputs and outputs of one dispatch often lie in the same arena buffer, and WebGPU
        // forbids one buffer being read-only storage and writable storage in one dispatch. So the
        // layout says read-write for every storage binding (the WGSL must match; see
        // `shaders::tensor_binding`).
        BindKind::Read | BindKind::Write => wgpu::BufferBindingType::Storage { read_only: false },
    };
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: kind == BindKind::DynamicUniform,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The shader module of `code` with the runtime checks its source asks for
/// ([`shaders::trust`]): none for a trusted kernel (its source starts with
/// `shaders::TRUSTED_HEADER`), bounds checks only for one whose loops are bounded
/// (`shaders::LOOPS_BOUNDED_HEADER`), else wgpu's bounds checks and loop bounding.
fn shader_module(device: &wgpu::Device, code: &str, trust: shaders::Trust) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(code.into()) };
    let mut checks = wgpu::ShaderRuntimeChecks::checked();
    match trust {
        shaders::Trust::Checked => return device.create_shader_module(desc),
        shaders::Trust::LoopsBounded => checks.force_loop_bounding = false,
        shaders::Trust::Trusted => checks = wgpu::ShaderRuntimeChecks::unchecked(),
    }
    // SAFETY: only renderers whose kernels loop a bounded number of times (and, for trusted
    // kernels, index in bounds) for every params value their lowering produces mark them so
    // (see `shaders::TRUSTED_HEADER`, `shaders::LOOPS_BOUNDED_HEADER` and docs/WGPU-KERNELS.md,
    // "Trusted kernels"): what the removed checks would have caught never happens. `code` is
    // such a kernel, less functions that nothing calls, which make no access and run no loop.
    unsafe { device.create_shader_module_trusted(desc, checks) }
}

fn build(
    device: &wgpu::Device,
    source: &str,
    kinds: &[BindKind],
    opts: BuildOptions<'_>,
    times: &BuildTimes,
) -> Result<Pipeline> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let t0 = Instant::now();
    // Functions no entry point calls are left out (see [`used_functions`]): the shared maths
    // libraries are most of every module, and parsing, validating and translating them was most
    // of a build's time outside the driver.
    let code = if opts.prune { used_functions(source) } else { std::borrow::Cow::Borrowed(source) };
    times.wgsl_bytes.fetch_add(u64::try_from(code.len()).unwrap_or(u64::MAX), Ordering::Relaxed);
    let module = shader_module(device, &code, shaders::trust(source));
    BuildTimes::add(&times.modules_ns, t0.elapsed());
    let t1 = Instant::now();
    let entries: Vec<_> = (0u32..).zip(kinds).map(|(i, k)| layout_entry(i, *k)).collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: Some(&pl),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: opts.cache,
    });
    BuildTimes::add(&times.pipelines_ns, t1.elapsed());
    let t2 = Instant::now();
    let invalid = pollster::block_on(scope.pop());
    let oom = pollster::block_on(oom.pop());
    BuildTimes::add(&times.scopes_ns, t2.elapsed());
    times.built.fetch_add(1, Ordering::Relaxed);
    if let Some(e) = oom {
        return Err(Error::new(ErrorKind::DeviceLimit, format!("the device ran out of memory building a kernel: {e}")));
    }
    if let Some(e) = invalid {
        // The code wgpu saw: the error's line numbers are its lines.
        let lines: Vec<&str> = code.lines().collect();
        let head = lines[lines.len().saturating_sub(60)..].join("\n");
        return Err(Error::new(ErrorKind::Device, format!("kernel failed to build: {e}\n--- kernel ---\n{head}")));
    }
    Ok(Pipeline { pipeline, layout })
}
