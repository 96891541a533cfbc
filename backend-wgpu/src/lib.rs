//! `backend-wgpu`: lowers the graph IR to WGSL compute shaders on any wgpu adapter (Vulkan, Metal,
//! DX12; lavapipe in CI) and registers itself as `"wgpu"`.
//!
//! Hosts link it explicitly — `use backend_wgpu as _;` — so that its registration is kept, then
//! call `backend_api::create("wgpu")`. [`WgpuBackend::new`] takes [`WgpuOptions`] to choose the API
//! and adapter instead.
#![warn(missing_docs)]

pub mod adapters;
mod compile;
pub mod device;
pub mod disk_cache;
mod exec;
mod instance;
pub mod lower;
mod lru;
mod params;
pub mod pipelines;
pub mod plan;
pub mod precision;
pub mod profile;
mod resident;
mod scope;
mod timer;
pub mod tuning;
mod wgsl_prune;

pub use compile::CompileStats;
pub use device::{
    list_adapters, ApiChoice, DeviceCaps, DeviceContext, FeatureChoice, LimitOverrides, SubgroupSizes, WgpuOptions,
};
pub use exec::WgpuExecutable;
pub use precision::MatmulPrecision;
pub use profile::{Profile, TimerKind};
pub use tuning::Tuning;

use backend_api::{Backend, Capabilities, CompileOptions, DType, Executable, Graph, Result};
use std::sync::Arc;

/// The wgpu backend: owns one device, shared by every executable it compiles.
pub struct WgpuBackend {
    ctx: Arc<DeviceContext>,
}

impl WgpuBackend {
    /// Opens the adapter chosen by `opts`.
    pub fn new(opts: &WgpuOptions) -> Result<WgpuBackend> {
        Ok(WgpuBackend { ctx: Arc::new(DeviceContext::open(opts)?) })
    }

    /// The device's capabilities.
    pub fn device_caps(&self) -> &DeviceCaps {
        &self.ctx.caps
    }

    /// Where opening the device spent its time.
    pub fn open_stats(&self) -> device::OpenStats {
        self.ctx.open_stats
    }

    /// The persistent pipeline cache's file and the outcome of its last load and save; `None`
    /// where none is used ([`WgpuOptions::pipeline_cache_dir`] unset, or the device has no
    /// `PIPELINE_CACHE`). A failed save shows here and nowhere else: it never fails a compile.
    pub fn pipeline_cache(&self) -> Option<disk_cache::CacheStatus> {
        self.ctx.pipelines.disk_status()
    }

    /// Compiles to the concrete executable type (for benchmarks that want its extras).
    pub fn compile_wgpu(&self, graph: &Graph, options: &CompileOptions) -> Result<WgpuExecutable> {
        WgpuExecutable::compile(&self.ctx, graph, options)
    }
}

impl Backend for WgpuBackend {
    fn name(&self) -> &str {
        "wgpu"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            device: self.ctx.caps.description.clone(),
            dtypes: DType::ALL.into_iter().filter(|d| self.ctx.caps.supports(*d)).collect(),
            // What compile accepts: the kinds lowered natively and those legalisation turns into them.
            ops: backend_api::spec::labels_where(|k| backend_api::decompose::reachable(k, &crate::lower::lowers)),
        }
    }

    fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<Box<dyn Executable>> {
        Ok(Box::new(WgpuExecutable::compile(&self.ctx, graph, options)?))
    }

    fn implements(&self, kind: backend_api::OpKind) -> bool {
        crate::lower::lowers(kind)
    }
}

fn create() -> Result<Box<dyn Backend>> {
    Ok(Box::new(WgpuBackend::new(&WgpuOptions::default())?))
}

backend_api::register_backend!("wgpu", "WGSL compute shaders on wgpu (Vulkan, Metal, DX12)", create);
