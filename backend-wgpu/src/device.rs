//! Adapter choice and the device a backend owns (no process-global device).

use backend_api::{bail, DType, Error, ErrorKind, Result};

/// Which graphics API to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ApiChoice {
    /// Any primary API of this platform (Vulkan, Metal, DX12).
    #[default]
    Primary,
    /// Vulkan only.
    Vulkan,
    /// Metal only.
    Metal,
    /// DX12 only.
    Dx12,
}

/// How to pick the adapter and open the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Graphics API.
    pub api: ApiChoice,
    /// Prefer a discrete (high performance) or integrated (low power) GPU.
    pub low_power: bool,
    /// Use only an adapter whose name contains this text (case-insensitive).
    pub adapter_name: Option<String>,
    /// Leave `SHADER_F64` / `SHADER_INT64` off even where the adapter has them: the device then
    /// behaves like one without them (kernels that compute in 64 bits are `Unsupported`; moving
    /// 64-bit data still works). For tests and for comparing behaviour across adapters.
    pub no_64bit: bool,
    /// Limits smaller than the adapter's to open the device with (never larger: each is capped at
    /// the adapter's value). Every check of the backend then uses them, so tests on a software
    /// adapter reach each limit with small tensors.
    pub limits: LimitOverrides,
    /// The optional speed features to use where the adapter has them (all by default); turning
    /// one off makes the device behave like one without it, so the fallbacks can be tested and
    /// compared on any adapter.
    pub features: FeatureChoice,
    /// How long a run polls the GPU without blocking before it sleeps until the GPU is done
    /// (default 200 µs). Polling answers within a few microseconds of the GPU finishing, a
    /// blocking wait tens of microseconds later; a small graph's run is mostly that wait. Zero
    /// always blocks (no CPU spent spinning).
    pub spin_wait: std::time::Duration,
    /// A directory for the persistent pipeline cache (off by default): where the device has
    /// `PIPELINE_CACHE` (Vulkan), compiled pipelines are loaded from `<dir>/<adapter key>` when
    /// the device opens and written back after each compile that built new ones, so a later
    /// process skips the driver's shader compilation. Use a directory only the host writes: the
    /// driver trusts what it reads there. IO errors never fail a compile (see
    /// [`crate::WgpuBackend::pipeline_cache`]).
    pub pipeline_cache_dir: Option<std::path::PathBuf>,
    /// Threads that build a graph's pipelines at compile (shader translation and the driver's
    /// compilation of distinct kernels run in parallel); 0, the default, uses the machine's
    /// available parallelism (at most 8), 1 builds them one after another.
    pub compile_threads: usize,
    /// Overrides of the lowerings' kernel choices (none by default), for benchmarking variants
    /// and for tests (see [`crate::tuning`]).
    pub tuning: crate::Tuning,
    /// Whether F32/BF16 matrix products may round their operands to f16 for tensor cores
    /// ([`crate::MatmulPrecision`]; exact by default).
    pub matmul_precision: crate::MatmulPrecision,
}

impl Default for WgpuOptions {
    fn default() -> WgpuOptions {
        WgpuOptions {
            api: ApiChoice::default(),
            low_power: false,
            adapter_name: None,
            no_64bit: false,
            limits: LimitOverrides::default(),
            features: FeatureChoice::default(),
            spin_wait: std::time::Duration::from_micros(200),
            pipeline_cache_dir: None,
            compile_threads: 0,
            tuning: crate::Tuning::default(),
            matmul_precision: crate::MatmulPrecision::Exact,
        }
    }
}

/// Optional adapter features the backend uses for speed or measurement, each used only where the
/// adapter has it. `true` (the default) means "use it if the adapter has it".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureChoice {
    /// `SUBGROUP`: subgroup reductions and shuffles in row kernels.
    pub subgroups: bool,
    /// `SHADER_F16`: native f16 arithmetic and storage in kernels.
    pub shader_f16: bool,
    /// `TIMESTAMP_QUERY` (+ inside passes where available): the per-kernel profiler.
    pub timestamps: bool,
    /// `TIMESTAMP_QUERY_INSIDE_PASSES` (with `timestamps`): the profiler writes timestamps
    /// between the dispatches of one pass; without it, each dispatch gets a pass of its own.
    pub timestamps_inside_passes: bool,
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX`: tensor-core matrix products (wgpu marks it
    /// experimental; see docs/DECISIONS.md).
    pub cooperative_matrix: bool,
    /// `PIPELINE_CACHE`: a persistent driver pipeline cache.
    pub pipeline_cache: bool,
}

impl Default for FeatureChoice {
    fn default() -> FeatureChoice {
        FeatureChoice {
            subgroups: true,
            shader_f16: true,
            timestamps: true,
            timestamps_inside_passes: true,
            cooperative_matrix: true,
            pipeline_cache: true,
        }
    }
}

impl FeatureChoice {
    /// Every optional feature off: the portable fallback paths only.
    pub fn none() -> FeatureChoice {
        FeatureChoice {
            subgroups: false,
            shader_f16: false,
            timestamps: false,
            timestamps_inside_passes: false,
            cooperative_matrix: false,
            pipeline_cache: false,
        }
    }

    /// The wgpu features this choice asks for (before intersecting with the adapter's).
    fn wanted(&self) -> wgpu::Features {
        let mut f = wgpu::Features::empty();
        let mut add = |on: bool, x: wgpu::Features| {
            if on {
                f |= x;
            }
        };
        add(self.subgroups, wgpu::Features::SUBGROUP);
        add(self.shader_f16, wgpu::Features::SHADER_F16);
        add(self.timestamps, wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        add(self.timestamps_inside_passes, wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        add(self.cooperative_matrix, wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        add(self.pipeline_cache, wgpu::Features::PIPELINE_CACHE);
        f
    }
}

/// Subgroup sizes the adapter may run a kernel with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubgroupSizes {
    /// Smallest subgroup size.
    pub min: u32,
    /// Largest subgroup size.
    pub max: u32,
}

/// Device limits to impose below the adapter's; `None` keeps the adapter's value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitOverrides {
    /// `max_buffer_size`: the largest buffer (arena, param, constant, staging).
    pub max_buffer_size: Option<u64>,
    /// `max_storage_buffer_binding_size`: the largest range one kernel binds.
    pub max_storage_buffer_binding_size: Option<u64>,
    /// `max_uniform_buffer_binding_size`: the largest params block.
    pub max_uniform_buffer_binding_size: Option<u64>,
    /// `max_storage_buffers_per_shader_stage`: storage bindings of one kernel.
    pub max_storage_buffers_per_shader_stage: Option<u32>,
    /// `max_compute_workgroups_per_dimension`: workgroups of one dispatch along each axis.
    pub max_compute_workgroups_per_dimension: Option<u32>,
}

impl LimitOverrides {
    /// `adapter` with each override applied where it is smaller.
    pub fn apply(&self, adapter: &wgpu::Limits) -> wgpu::Limits {
        let mut l = adapter.clone();
        let lower64 = |v: &mut u64, o: Option<u64>| *v = o.map_or(*v, |o| o.min(*v));
        let lower32 = |v: &mut u32, o: Option<u32>| *v = o.map_or(*v, |o| o.min(*v));
        lower64(&mut l.max_buffer_size, self.max_buffer_size);
        lower64(&mut l.max_storage_buffer_binding_size, self.max_storage_buffer_binding_size);
        lower64(&mut l.max_uniform_buffer_binding_size, self.max_uniform_buffer_binding_size);
        lower32(&mut l.max_storage_buffers_per_shader_stage, self.max_storage_buffers_per_shader_stage);
        lower32(&mut l.max_compute_workgroups_per_dimension, self.max_compute_workgroups_per_dimension);
        // A binding cannot be larger than a buffer.
        l.max_storage_buffer_binding_size = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        l.max_uniform_buffer_binding_size = l.max_uniform_buffer_binding_size.min(l.max_buffer_size);
        l
    }
}

/// What the opened device can do, probed once.
#[derive(Clone, Debug)]
pub struct DeviceCaps {
    /// Adapter name, driver and API.
    pub description: String,
    /// `SHADER_F64` enabled.
    pub f64: bool,
    /// `SHADER_INT64` enabled.
    pub i64: bool,
    /// The limits the device was created with (the adapter's, lowered by [`WgpuOptions::limits`]).
    pub limits: wgpu::Limits,
    /// `SUBGROUP` enabled, with the adapter's subgroup sizes.
    pub subgroups: Option<SubgroupSizes>,
    /// `SHADER_F16` enabled.
    pub f16: bool,
    /// `TIMESTAMP_QUERY` enabled (timestamps around passes); `timestamps_in_passes`: also
    /// `TIMESTAMP_QUERY_INSIDE_PASSES` (around each dispatch).
    pub timestamps: bool,
    /// `TIMESTAMP_QUERY_INSIDE_PASSES` enabled.
    pub timestamps_in_passes: bool,
    /// Nanoseconds per timestamp tick (the queue's timestamp period).
    pub timestamp_period_ns: f32,
    /// Cooperative-matrix configurations the adapter reports (empty where the feature is off).
    pub cooperative_matrix: Vec<wgpu::wgt::CooperativeMatrixProperties>,
    /// `PIPELINE_CACHE` enabled.
    pub pipeline_cache: bool,
    /// The kernel-choice overrides the device was opened with ([`WgpuOptions::tuning`]).
    pub tuning: crate::Tuning,
    /// The matrix-product precision the device was opened with ([`WgpuOptions::matmul_precision`]).
    pub matmul_precision: crate::MatmulPrecision,
}

impl DeviceCaps {
    /// Capabilities of a device with every 64-bit feature and WebGPU's default limits (256-byte
    /// storage offset alignment), for lowering tests that build no pipeline.
    #[cfg(test)]
    pub(crate) fn for_tests() -> DeviceCaps {
        DeviceCaps {
            description: "test".into(),
            f64: true,
            i64: true,
            limits: wgpu::Limits::default(),
            subgroups: None,
            f16: false,
            timestamps: false,
            timestamps_in_passes: false,
            timestamp_period_ns: 1.0,
            cooperative_matrix: Vec::new(),
            pipeline_cache: false,
            tuning: crate::Tuning::default(),
            matmul_precision: crate::MatmulPrecision::Exact,
        }
    }

    /// Whether every kernel of dtype `d` can run on this device (kernels that only move `d`'s bytes
    /// run everywhere; see [`DeviceCaps::check_kernel`]).
    pub fn supports(&self, d: DType) -> bool {
        match d {
            DType::F64 => self.f64 && self.i64,
            DType::I64 => self.i64,
            DType::F32
            | DType::F16
            | DType::BF16
            | DType::I32
            | DType::I8
            | DType::U32
            | DType::U8
            | DType::Bool
            | DType::C64 => true,
        }
    }
}

impl DeviceCaps {
    /// Errs (`Unsupported`) when a kernel's WGSL uses 64-bit types or literals this device lacks.
    /// Checked per kernel, not per dtype: copying or gathering I64/F64 data moves u32 words and
    /// needs no feature, computing with it does.
    pub fn check_kernel(&self, source: &str) -> Result<()> {
        let (mut f64_used, mut i64_used) = (false, false);
        for tok in code_tokens(source) {
            let literal = tok.starts_with(|c: char| c.is_ascii_digit());
            f64_used |= tok == "f64" || (literal && tok.ends_with("lf"));
            i64_used |= tok == "i64" || tok == "u64" || (literal && (tok.ends_with("li") || tok.ends_with("lu")));
        }
        if f64_used && !self.f64 {
            bail!(Unsupported, "the kernel computes in f64, which needs SHADER_F64; {} lacks it", self.description);
        }
        if i64_used && !self.i64 {
            bail!(
                Unsupported,
                "the kernel computes with 64-bit integers, which needs SHADER_INT64; {} lacks it",
                self.description
            );
        }
        Ok(())
    }
}

/// The identifier and number tokens of WGSL `source`, comments left out (they mention types).
fn code_tokens(source: &str) -> impl Iterator<Item = &str> {
    let mut code = Vec::new();
    let mut rest = source;
    while !rest.is_empty() {
        let line = rest.find("//").map_or(rest.len(), |i| i);
        let block = rest.find("/*").map_or(rest.len(), |i| i);
        let cut = line.min(block);
        code.push(&rest[..cut]);
        rest = &rest[cut..];
        rest = if rest.starts_with("//") {
            rest.find('\n').map_or("", |i| &rest[i..])
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or("", |i| &rest[i + 2..])
        } else {
            ""
        };
    }
    code.into_iter()
        .flat_map(|c| c.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')))
        .filter(|t| !t.is_empty())
}

/// A device and queue with their capabilities; shared by every executable of a backend.
pub struct DeviceContext {
    /// The logical device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Probed capabilities.
    pub caps: DeviceCaps,
    /// Compute pipelines built so far, keyed by shader source and binding layout.
    pub pipelines: crate::pipelines::PipelineCache,
    /// How long waits for the GPU poll before blocking ([`WgpuOptions::spin_wait`]).
    pub spin_wait: std::time::Duration,
    /// Threads building pipelines at compile ([`WgpuOptions::compile_threads`], resolved).
    pub compile_threads: usize,
    /// Where opening the device spent its time.
    pub open_stats: OpenStats,
}

/// Where [`DeviceContext::open`] spent its time (wall times).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenStats {
    /// Creating the wgpu instance (loading the API's drivers), listing and choosing the adapter.
    pub adapter: std::time::Duration,
    /// `request_device`: the logical device and its queue.
    pub device: std::time::Duration,
    /// Reading the persistent pipeline cache's file and handing it to the driver (zero without
    /// one).
    pub pipeline_cache: std::time::Duration,
}

fn backends(api: ApiChoice) -> wgpu::Backends {
    match api {
        ApiChoice::Primary => wgpu::Backends::PRIMARY,
        ApiChoice::Vulkan => wgpu::Backends::VULKAN,
        ApiChoice::Metal => wgpu::Backends::METAL,
        ApiChoice::Dx12 => wgpu::Backends::DX12,
    }
}

/// Lists the adapters wgpu sees for `api`, as "name (backend, device type)".
pub fn list_adapters(api: ApiChoice) -> Vec<String> {
    let instance = wgpu::Instance::new(instance_desc(api));
    pollster::block_on(instance.enumerate_adapters(backends(api)))
        .iter()
        .map(|a| {
            let i = a.get_info();
            format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
        })
        .collect()
}

fn pick_adapter(opts: &WgpuOptions) -> Result<wgpu::Adapter> {
    let instance = wgpu::Instance::new(instance_desc(opts.api));
    let mut adapters = pollster::block_on(instance.enumerate_adapters(backends(opts.api)));
    if let Some(name) = &opts.adapter_name {
        let want = name.to_lowercase();
        adapters.retain(|a| a.get_info().name.to_lowercase().contains(&want));
    }
    let rank = |a: &wgpu::Adapter| {
        let t = a.get_info().device_type;
        let order = if opts.low_power {
            [wgpu::DeviceType::IntegratedGpu, wgpu::DeviceType::DiscreteGpu]
        } else {
            [wgpu::DeviceType::DiscreteGpu, wgpu::DeviceType::IntegratedGpu]
        };
        match t {
            t if t == order[0] => 0,
            t if t == order[1] => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Cpu => 3,
            wgpu::DeviceType::Other | wgpu::DeviceType::IntegratedGpu | wgpu::DeviceType::DiscreteGpu => 4,
        }
    };
    adapters.sort_by_key(rank);
    match adapters.into_iter().next() {
        Some(a) => Ok(a),
        None => bail!(
            Device,
            "no {:?} adapter{} found; on Linux without a GPU install the software Vulkan driver \
             (apt-get install mesa-vulkan-drivers libvulkan1)",
            opts.api,
            opts.adapter_name.as_ref().map(|n| format!(" matching {n:?}")).unwrap_or_default()
        ),
    }
}

impl DeviceContext {
    /// Opens a device on the adapter chosen by `opts`, enabling the optional features it has.
    pub fn open(opts: &WgpuOptions) -> Result<DeviceContext> {
        let t = std::time::Instant::now();
        let adapter = pick_adapter(opts)?;
        let mut open_stats = OpenStats { adapter: t.elapsed(), ..OpenStats::default() };
        let info = adapter.get_info();
        let have = adapter.features();
        let wide = if opts.no_64bit {
            wgpu::Features::empty()
        } else {
            wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64
        };
        let mut features = have & (wide | opts.features.wanted());
        // Timestamps inside passes or encoders need the base feature.
        if !features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            features.remove(
                wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
            );
        }
        let experimental = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: wgpu asks callers of experimental features to accept that its implementation
            // may have bugs; the cooperative-matrix kernels are checked against cpu-ref by the
            // conformance suite on each adapter they run on, and can be turned off
            // (`FeatureChoice::cooperative_matrix`).
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let limits = opts.limits.apply(&sizes_within_u32(adapter.limits()));
        let desc = wgpu::DeviceDescriptor {
            label: Some("backend-wgpu"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: experimental,
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::new(ErrorKind::Device, format!("request_device on {}: {e}", info.name)))?;
        open_stats.device = t.elapsed();
        let caps = DeviceCaps {
            description: format!("{} ({:?}, driver {} {})", info.name, info.backend, info.driver, info.driver_info),
            f64: features.contains(wgpu::Features::SHADER_F64),
            i64: features.contains(wgpu::Features::SHADER_INT64),
            limits,
            subgroups: features
                .contains(wgpu::Features::SUBGROUP)
                .then_some(SubgroupSizes { min: info.subgroup_min_size, max: info.subgroup_max_size }),
            f16: features.contains(wgpu::Features::SHADER_F16),
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            timestamps_in_passes: features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES),
            timestamp_period_ns: queue.get_timestamp_period(),
            cooperative_matrix: if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
                adapter.cooperative_matrix_properties()
            } else {
                Vec::new()
            },
            pipeline_cache: features.contains(wgpu::Features::PIPELINE_CACHE),
            tuning: opts.tuning.clone(),
            matmul_precision: opts.matmul_precision,
        };
        let t = std::time::Instant::now();
        let disk = match (&opts.pipeline_cache_dir, caps.pipeline_cache) {
            (Some(dir), true) => crate::disk_cache::DiskCache::open(&device, &info, dir),
            _ => None,
        };
        open_stats.pipeline_cache = t.elapsed();
        let prune = opts.tuning.compile_prune.unwrap_or(true);
        let pipelines = crate::pipelines::PipelineCache::with_disk(disk, prune);
        let compile_threads = match opts.compile_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            n => n,
        };
        Ok(DeviceContext { device, queue, caps, pipelines, spin_wait: opts.spin_wait, compile_threads, open_stats })
    }
}

fn instance_desc(api: ApiChoice) -> wgpu::InstanceDescriptor {
    let mut d = wgpu::InstanceDescriptor::new_without_display_handle();
    d.backends = backends(api);
    // wgpu checks the counts of every indirect dispatch against the device's limits by
    // recording a dispatch of its own (with its barriers) before it: on the H100 that doubled
    // the host's recording time of a gated dispatch and added GPU time to each. The counts this
    // backend dispatches indirectly are written by its gate kernels, which only ever write
    // compile-time grids checked against those limits, or zeros. On D3D12 the check also
    // supplies `num_workgroups`, which the kernels read, so it stays on where D3D12 may be
    // picked (docs/DECISIONS.md, "GPU-side control flow").
    if !d.backends.contains(wgpu::Backends::DX12) {
        d.flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    d
}

/// `l` with buffer and binding sizes capped at 32 bits, as wgpu caps them while it checks
/// indirect dispatches: the sizes the kernels' 32-bit byte offsets and the memory plan were
/// built for, whether or not that check is on.
fn sizes_within_u32(mut l: wgpu::Limits) -> wgpu::Limits {
    let max = u64::from(u32::MAX);
    l.max_buffer_size = l.max_buffer_size.min(max);
    l.max_uniform_buffer_binding_size = l.max_uniform_buffer_binding_size.min(max);
    l.max_storage_buffer_binding_size = l.max_storage_buffer_binding_size.min(max & !3);
    l
}

#[cfg(test)]
mod tests {
    use super::code_tokens;

    #[test]
    fn limit_overrides_only_lower_the_adapters_limits() {
        let adapter = wgpu::Limits::default();
        let o = super::LimitOverrides {
            max_buffer_size: Some(1000),
            max_storage_buffer_binding_size: Some(u64::MAX),
            max_compute_workgroups_per_dimension: Some(u32::MAX),
            max_storage_buffers_per_shader_stage: Some(3),
            ..Default::default()
        };
        let l = o.apply(&adapter);
        assert_eq!(l.max_buffer_size, 1000);
        // Never above the adapter's, nor a binding above the buffer size.
        assert_eq!(l.max_compute_workgroups_per_dimension, adapter.max_compute_workgroups_per_dimension);
        assert_eq!((l.max_storage_buffer_binding_size, l.max_uniform_buffer_binding_size), (1000, 1000));
        assert_eq!(l.max_storage_buffers_per_shader_stage, 3);
        assert_eq!(super::LimitOverrides::default().apply(&adapter), adapter);
    }

    #[test]
    fn comments_are_not_code() {
        let src = "// uses f64\nfn a(x: i64) -> u32 { /* f64 here too */ return 1u; } // i64\nlet y = 2lf;";
        let toks: Vec<&str> = code_tokens(src).collect();
        assert_eq!(toks, ["fn", "a", "x", "i64", "u32", "return", "1u", "let", "y", "2lf"]);
    }
}
