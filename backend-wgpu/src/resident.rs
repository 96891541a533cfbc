//! Device-resident values of the wgpu backend: a buffer of their own (not an arena range, which
//! the next run overwrites), read back only on request.

use crate::device::DeviceContext;
use crate::scope::{self, scoped};
use backend_api::{bail, DType, DeviceStorage, Error, ErrorKind, Result, Tensor};
use std::any::Any;
use std::sync::Arc;

/// An output kept on the device.
pub(crate) struct WgpuTensor {
    /// The device it lives on (a value is only accepted by executables of the same device).
    pub ctx: Arc<DeviceContext>,
    /// Its buffer, `size` bytes (a multiple of 4, ≥ 16).
    pub buffer: wgpu::Buffer,
    /// The exact byte count of the data.
    pub bytes: u64,
    dtype: DType,
    shape: Vec<usize>,
}

impl WgpuTensor {
    /// A fresh buffer able to hold `size` bytes (a bindable size).
    /// Errs (`DeviceLimit`, `Device`) where the device cannot make it.
    pub fn alloc(
        ctx: &Arc<DeviceContext>,
        size: u64,
        bytes: u64,
        dtype: DType,
        shape: Vec<usize>,
    ) -> Result<WgpuTensor> {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let what = || format!("a device value of {dtype}{shape:?}");
        let buffer = scope::buffer(ctx, "device value", size, usage, &what)?;
        Ok(WgpuTensor { ctx: ctx.clone(), buffer, bytes, dtype, shape })
    }
}

impl DeviceStorage for WgpuTensor {
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn backend(&self) -> &str {
        "wgpu"
    }
    fn read(&self) -> Result<Tensor> {
        let dev = &self.ctx.device;
        let size = self.buffer.size();
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let what = || format!("the readback buffer of a device value of {}{:?}", self.dtype, self.shape);
        let staging = scope::buffer(&self.ctx, "device value readback", size, usage, &what)?;
        scoped(&self.ctx, what, || {
            let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read") });
            enc.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, size);
            self.ctx.queue.submit([enc.finish()]);
        })?;
        let data = read_mapped(&self.ctx, &staging, |view| {
            match usize::try_from(self.bytes).ok().and_then(|n| view.get(..n)) {
                Some(b) => {
                    let mut v = Vec::new();
                    if let Err(e) = v.try_reserve_exact(b.len()) {
                        bail!(Capacity, "cannot allocate {} bytes of host memory for a device value: {e}", b.len());
                    }
                    v.extend_from_slice(b);
                    Ok(v)
                }
                None => bail!(Device, "device value of {} bytes in a buffer of {size}", self.bytes),
            }
        })?;
        Tensor::from_bytes(self.dtype, &self.shape, data)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Maps the whole of `buf` in `mode`, waiting until the GPU no longer uses it.
pub(crate) fn map_and_wait(ctx: &DeviceContext, buf: &wgpu::Buffer, mode: wgpu::MapMode) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    buf.slice(..).map_async(mode, move |r| {
        let _ = tx.send(r);
    });
    // Poll without blocking for up to `spin_wait`: a blocking wait sleeps on a fence and wakes
    // tens of microseconds after the GPU finishes, which dominates small graphs' runs.
    let start = std::time::Instant::now();
    let mut done = None;
    while start.elapsed() < ctx.spin_wait {
        ctx.device
            .poll(wgpu::PollType::Poll)
            .map_err(|e| Error::new(ErrorKind::Device, format!("polling the GPU: {e}")))?;
        if let Ok(r) = rx.try_recv() {
            done = Some(r);
            break;
        }
        std::hint::spin_loop();
    }
    if done.is_none() {
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::new(ErrorKind::Device, format!("waiting for the GPU: {e}")))?;
    }
    match done.map_or_else(|| rx.recv(), Ok) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => bail!(Device, "mapping a {mode:?} buffer failed: {e}"),
        Err(_) => bail!(Device, "a {mode:?} mapping never completed"),
    }
}

/// Maps `staging` for reading (waiting for the GPU), hands its bytes to `f`, unmaps.
pub(crate) fn read_mapped<T>(
    ctx: &DeviceContext,
    staging: &wgpu::Buffer,
    f: impl FnOnce(&[u8]) -> Result<T>,
) -> Result<T> {
    map_and_wait(ctx, staging, wgpu::MapMode::Read)?;
    let result = {
        let view = staging.slice(..).get_mapped_range().map_err(|e| Error::new(ErrorKind::Device, format!("{e}")))?;
        f(&view)
    };
    staging.unmap();
    result
}
