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

/// How to pick the adapter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Graphics API.
    pub api: ApiChoice,
    /// Prefer a discrete (high performance) or integrated (low power) GPU.
    pub low_power: bool,
    /// Use only an adapter whose name contains this text (case-insensitive).
    pub adapter_name: Option<String>,
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
    /// The limits the device was created with (the adapter's own).
    pub limits: wgpu::Limits,
}

impl DeviceCaps {
    /// Whether kernels can compute with `d` on this device.
    pub fn supports(&self, d: DType) -> bool {
        match d {
            DType::F64 => self.f64 && self.i64,
            DType::I64 => self.i64,
            DType::F32 | DType::F16 | DType::BF16 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool
            | DType::C64 => true,
        }
    }
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
        let adapter = pick_adapter(opts)?;
        let info = adapter.get_info();
        let have = adapter.features();
        let wanted = wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64;
        let features = have & wanted;
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("backend-wgpu"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::new(ErrorKind::Device, format!("request_device on {}: {e}", info.name)))?;
        let caps = DeviceCaps {
            description: format!("{} ({:?}, driver {} {})", info.name, info.backend, info.driver, info.driver_info),
            f64: features.contains(wgpu::Features::SHADER_F64),
            i64: features.contains(wgpu::Features::SHADER_INT64),
            limits,
        };
        Ok(DeviceContext { device, queue, caps, pipelines: Default::default() })
    }
}

fn instance_desc(api: ApiChoice) -> wgpu::InstanceDescriptor {
    let mut d = wgpu::InstanceDescriptor::new_without_display_handle();
    d.backends = backends(api);
    d
}
