//! Compute pipelines with explicit bind-group layouts, cached per device by (source, layout).

use crate::disk_cache::{CacheStatus, DiskCache};
use backend_api::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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

/// Pipelines built so far on one device.
#[derive(Default)]
pub struct PipelineCache {
    map: Mutex<HashMap<Key, Arc<Pipeline>>>,
    /// The persistent driver cache every pipeline is created with, where one is configured.
    disk: Option<DiskCache>,
}

impl PipelineCache {
    /// An empty cache whose pipelines are created with `disk`'s driver cache.
    pub(crate) fn with_disk(disk: Option<DiskCache>) -> PipelineCache {
        PipelineCache { map: Mutex::default(), disk }
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
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether no pipeline was built yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pipeline for `source` (entry point `main`) with bindings `kinds`, built on first use.
    pub fn get(&self, device: &wgpu::Device, source: &str, kinds: &[BindKind]) -> Result<Arc<Pipeline>> {
        let key = (source.to_string(), kinds.to_vec());
        if let Some(p) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(p);
        }
        let p = Arc::new(build(device, source, kinds, self.disk.as_ref().map(|d| &d.cache))?);
        if let Ok(mut m) = self.map.lock() {
            m.insert(key, p.clone());
        }
        Ok(p)
    }
}

impl PipelineCache {
    /// Builds the pipelines of `jobs` (source, layout) that are not cached yet on up to
    /// `threads` threads at once, so that compiling a graph of many distinct kernels costs about
    /// one kernel's shader translation per thread instead of all of them in a row. Errors are
    /// dropped here: a kernel that fails is built again, alone, where the program needs it,
    /// and that build reports the error with its node.
    pub(crate) fn prebuild(&self, device: &wgpu::Device, jobs: Vec<(String, Vec<BindKind>)>, threads: usize) {
        let mut todo: Vec<Key> = match self.map.lock() {
            Ok(m) => jobs.into_iter().filter(|k| !m.contains_key(k)).collect(),
            Err(_) => return,
        };
        let mut seen = std::collections::HashSet::new();
        todo.retain(|k| seen.insert(k.clone()));
        let threads = threads.min(todo.len());
        if threads < 2 {
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let cache = self.disk.as_ref().map(|d| &d.cache);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    while let Some((source, kinds)) = todo.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        if let Ok(p) = build(device, source, kinds, cache) {
                            if let Ok(mut m) = self.map.lock() {
                                m.insert((source.clone(), kinds.clone()), Arc::new(p));
                            }
                        }
                    }
                });
            }
        });
    }
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

/// The shader module of `source`: without runtime checks when the kernel is marked trusted
/// (`shaders::TRUSTED_HEADER`), else with wgpu's bounds checks and loop bounding.
fn shader_module(device: &wgpu::Device, source: &str) -> wgpu::ShaderModule {
    let desc = wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(source.into()) };
    if shaders::is_trusted(source) {
        // SAFETY: only renderers whose kernels index in bounds and loop a bounded number of times
        // for every params value their lowering produces mark them trusted (see
        // `shaders::TRUSTED_HEADER` and docs/WGPU-KERNELS.md, "Trusted kernels"): what the
        // removed checks would have caught never happens.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    } else {
        device.create_shader_module(desc)
    }
}

fn build(
    device: &wgpu::Device,
    source: &str,
    kinds: &[BindKind],
    cache: Option<&wgpu::PipelineCache>,
) -> Result<Pipeline> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = shader_module(device, source);
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
        cache,
    });
    let invalid = pollster::block_on(scope.pop());
    if let Some(e) = pollster::block_on(oom.pop()) {
        return Err(Error::new(ErrorKind::DeviceLimit, format!("the device ran out of memory building a kernel: {e}")));
    }
    if let Some(e) = invalid {
        let lines: Vec<&str> = source.lines().collect();
        let head = lines[lines.len().saturating_sub(60)..].join("\n");
        return Err(Error::new(ErrorKind::Device, format!("kernel failed to build: {e}\n--- kernel ---\n{head}")));
    }
    Ok(Pipeline { pipeline, layout })
}
