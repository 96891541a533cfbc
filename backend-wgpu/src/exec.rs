//! The executable: `set_param` uploads once; `run` writes inputs, records every dispatch in one
//! encoder, submits once and reads all outputs back through one mapped staging buffer.

use crate::device::DeviceContext;
use crate::pipelines::Pipeline;
use crate::plan::{Home, Loc};
use backend_api::{bail, check_run_inputs, check_slot, DType, Error, ErrorKind, Executable, Result, Signature, Tensor, TensorView};
use std::sync::Arc;

/// One recorded dispatch.
pub struct Dispatch {
    /// The pipeline.
    pub pipeline: Arc<Pipeline>,
    /// Its bind group (built at compile).
    pub bind_group: wgpu::BindGroup,
    /// Workgroup grid.
    pub workgroups: [u32; 3],
    /// Keeps the params uniform alive.
    pub _params: wgpu::Buffer,
}

/// Where a graph output is and what it holds.
pub struct OutputSlot {
    /// Its range.
    pub loc: Loc,
    /// Exact byte count (the range may be padded).
    pub bytes: u64,
    /// Dtype.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
}

/// A graph compiled for one wgpu device.
pub struct WgpuExecutable {
    ctx: Arc<DeviceContext>,
    sig: Signature,
    arenas: Vec<wgpu::Buffer>,
    params: Vec<wgpu::Buffer>,
    param_names: Vec<String>,
    param_set: Vec<bool>,
    consts: Vec<wgpu::Buffer>,
    dispatches: Vec<Dispatch>,
    inputs: Vec<Loc>,
    outputs: Vec<OutputSlot>,
    staging: Option<wgpu::Buffer>,
    staging_offsets: Vec<u64>,
}

impl WgpuExecutable {
    /// Assembles an executable from what `compile` built.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ctx: Arc<DeviceContext>,
        sig: Signature,
        arenas: Vec<wgpu::Buffer>,
        params: Vec<wgpu::Buffer>,
        param_names: Vec<String>,
        consts: Vec<wgpu::Buffer>,
        dispatches: Vec<Dispatch>,
        inputs: Vec<Loc>,
        outputs: Vec<OutputSlot>,
    ) -> WgpuExecutable {
        let mut staging_offsets = Vec::with_capacity(outputs.len());
        let mut total = 0u64;
        for o in &outputs {
            staging_offsets.push(total);
            total += o.loc.size;
        }
        let staging = (total > 0).then(|| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: total,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let param_set = vec![false; params.len()];
        WgpuExecutable {
            ctx, sig, arenas, params, param_names, param_set, consts, dispatches, inputs, outputs, staging, staging_offsets,
        }
    }

    /// Number of kernel dispatches one run records.
    pub fn dispatch_count(&self) -> usize {
        self.dispatches.len()
    }

    fn buffer(&self, h: Home) -> &wgpu::Buffer {
        match h {
            Home::Arena(k) => &self.arenas[k],
            Home::Param(k) => &self.params[k],
            Home::Const(k) => &self.consts[k],
        }
    }

    fn write(&self, loc: Loc, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let buf = self.buffer(loc.home);
        if bytes.len() % 4 == 0 {
            self.ctx.queue.write_buffer(buf, loc.offset, bytes);
        } else {
            let mut padded = bytes.to_vec();
            padded.resize(bytes.len().div_ceil(4) * 4, 0);
            self.ctx.queue.write_buffer(buf, loc.offset, &padded);
        }
    }

    /// Writes a run input or param. Bool bytes other than 0 read as true (§1.1) and ops always
    /// write 0 or 1, so they are normalised here, once, instead of in every kernel.
    fn write_value(&self, loc: Loc, v: &TensorView<'_>) {
        if v.dtype() == DType::Bool && v.bytes().iter().any(|&b| b > 1) {
            let norm: Vec<u8> = v.bytes().iter().map(|&b| (b != 0) as u8).collect();
            self.write(loc, &norm);
        } else {
            self.write(loc, v.bytes());
        }
    }

    fn read_back(&self, staging: &wgpu::Buffer) -> Result<Vec<Tensor>> {
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::new(ErrorKind::Device, format!("waiting for the GPU: {e}")))?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => bail!(Device, "mapping the readback buffer failed: {e}"),
            Err(_) => bail!(Device, "the readback mapping never completed"),
        }
        let view = slice.get_mapped_range().map_err(|e| Error::new(ErrorKind::Device, format!("{e}")))?;
        let mut out = Vec::with_capacity(self.outputs.len());
        for (o, &off) in self.outputs.iter().zip(&self.staging_offsets) {
            let bytes = view[off as usize..(off + o.bytes) as usize].to_vec();
            out.push(Tensor::from_bytes(o.dtype, &o.shape, bytes)?);
        }
        drop(view);
        staging.unmap();
        Ok(out)
    }
}

impl Executable for WgpuExecutable {
    fn signature(&self) -> &Signature {
        &self.sig
    }

    fn set_param(&mut self, name: &str, value: TensorView<'_>) -> Result<()> {
        let Some(k) = self.param_names.iter().position(|n| n == name) else {
            bail!(Input, "unknown param {name:?}; the graph's params are {:?}", self.param_names);
        };
        let Some(slot) = self.sig.params.iter().find(|s| s.name == name) else {
            bail!(Input, "param {name:?} missing from the signature");
        };
        check_slot(slot, &value, &mut Vec::new())?;
        self.write_value(Loc { home: Home::Param(k), offset: 0, size: 0 }, &value);
        self.param_set[k] = true;
        Ok(())
    }

    fn run(&mut self, inputs: &[(&str, TensorView<'_>)]) -> Result<Vec<Tensor>> {
        let ordered = check_run_inputs(&self.sig, inputs)?;
        if let Some(k) = self.param_set.iter().position(|s| !s) {
            bail!(Input, "param {:?} was never set; call set_param before run", self.param_names[k]);
        }
        let dev = &self.ctx.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        for (loc, v) in self.inputs.iter().zip(&ordered) {
            self.write_value(*loc, v);
        }
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("run") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
            for d in &self.dispatches {
                pass.set_pipeline(&d.pipeline.pipeline);
                pass.set_bind_group(0, &d.bind_group, &[]);
                pass.dispatch_workgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
            }
        }
        if let Some(st) = &self.staging {
            for (o, &off) in self.outputs.iter().zip(&self.staging_offsets) {
                enc.copy_buffer_to_buffer(self.buffer(o.loc.home), o.loc.offset, st, off, o.loc.size);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            bail!(Device, "the GPU rejected the run: {e}");
        }
        match &self.staging {
            Some(st) => self.read_back(st),
            None => self.outputs.iter().map(|o| Tensor::from_bytes(o.dtype, &o.shape, vec![])).collect(),
        }
    }
}
