//! A description of every adapter wgpu sees — name, API, driver, the limits kernels depend on and
//! the optional features — without opening a device (for `wgml backends` and bug reports).

use crate::ApiChoice;

/// The adapter limits that decide how kernels are split and tiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterLimits {
    /// Largest storage-buffer binding, in bytes.
    pub max_storage_buffer_binding_size: u64,
    /// Largest buffer, in bytes.
    pub max_buffer_size: u64,
    /// Storage buffers one shader stage may bind.
    pub max_storage_buffers_per_shader_stage: u32,
    /// Workgroups per dispatch dimension.
    pub max_compute_workgroups_per_dimension: u32,
    /// Invocations in one workgroup.
    pub max_compute_invocations_per_workgroup: u32,
    /// Workgroup (shared) memory, in bytes.
    pub max_compute_workgroup_storage_size: u32,
}

impl AdapterLimits {
    /// Picks the key limits out of wgpu's full list.
    pub fn of(l: &wgpu::Limits) -> AdapterLimits {
        AdapterLimits {
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
            max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
            max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
        }
    }

    /// `(name, value)` pairs in declaration order, for printing.
    pub fn entries(&self) -> [(&'static str, u64); 6] {
        [
            ("max_storage_buffer_binding_size", self.max_storage_buffer_binding_size),
            ("max_buffer_size", self.max_buffer_size),
            ("max_storage_buffers_per_shader_stage", self.max_storage_buffers_per_shader_stage.into()),
            ("max_compute_workgroups_per_dimension", self.max_compute_workgroups_per_dimension.into()),
            ("max_compute_invocations_per_workgroup", self.max_compute_invocations_per_workgroup.into()),
            ("max_compute_workgroup_storage_size", self.max_compute_workgroup_storage_size.into()),
        ]
    }
}

/// One adapter as wgpu reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterDescription {
    /// Adapter name (`NVIDIA GeForce …`, `llvmpipe (LLVM …)`).
    pub name: String,
    /// Graphics API (`Vulkan`, `Metal`, `Dx12`).
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu` or `Other`.
    pub device_type: String,
    /// Driver name and version text.
    pub driver: String,
    /// The key limits.
    pub limits: AdapterLimits,
    /// Optional features the adapter has, by wgpu's names (`SHADER_F64`, …), sorted.
    pub features: Vec<String>,
}

/// Describes every adapter wgpu finds for `api`; an empty list when there is none.
pub fn describe_adapters(api: ApiChoice) -> Vec<AdapterDescription> {
    let backends = match api {
        ApiChoice::Primary => wgpu::Backends::PRIMARY,
        ApiChoice::Vulkan => wgpu::Backends::VULKAN,
        ApiChoice::Metal => wgpu::Backends::METAL,
        ApiChoice::Dx12 => wgpu::Backends::DX12,
    };
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.enumerate_adapters(backends)).iter().map(describe).collect()
}

fn describe(a: &wgpu::Adapter) -> AdapterDescription {
    let info = a.get_info();
    let mut features: Vec<String> = a.features().iter_names().map(|(n, _)| n.to_string()).collect();
    features.sort();
    let driver = match (info.driver.is_empty(), info.driver_info.is_empty()) {
        (false, false) => format!("{} {}", info.driver, info.driver_info),
        (false, true) => info.driver.clone(),
        (true, _) => info.driver_info.clone(),
    };
    AdapterDescription {
        name: info.name.clone(),
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver,
        limits: AdapterLimits::of(&a.limits()),
        features,
    }
}
