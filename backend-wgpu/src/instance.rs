//! An instance of a [`Program`]: the arena (scratch) buffers of one executable and the bind groups
//! that tie the program's dispatches to them, the params and the constants. Made once per
//! (executable, variant); reused by every run.

use crate::compile::Program;
use crate::device::DeviceContext;
use crate::params::ParamStore;
use crate::plan::{Home, Loc};
use backend_api::{bail, Result};
use std::sync::Arc;

/// Arenas, bind groups and the readback buffer of one executable for one program.
pub(crate) struct Instance {
    /// The compiled program (shared with clones).
    pub program: Arc<Program>,
    arenas: Vec<wgpu::Buffer>,
    /// One bind group per dispatch of the program.
    pub bind_groups: Vec<wgpu::BindGroup>,
    /// Host-visible buffer that receives every host-placed output.
    pub staging: Option<wgpu::Buffer>,
    /// Offset of each output in `staging`.
    pub staging_offsets: Vec<u64>,
    /// Host-visible buffer that large host inputs are written into (see [`UPLOAD_STAGING_MIN`]).
    pub upload: Option<wgpu::Buffer>,
    /// Offset of each input (signature order) in `upload`.
    pub upload_offsets: Vec<u64>,
}

/// Runs whose host inputs total at least this many bytes write them through the instance's own
/// persistent upload buffer instead of `Queue::write_buffer`, which allocates (and, for large
/// sizes, pins) a fresh staging buffer on every call: 1.1–1.3 GB/s on the H200 for 64–256 MiB.
/// Smaller runs keep `write_buffer`, which does not wait for the previous run to finish.
pub(crate) const UPLOAD_STAGING_MIN: u64 = 256 * 1024;

/// Alignment of each input's range in the upload buffer (≥ wgpu's map and copy alignments).
const UPLOAD_ALIGN: u64 = 256;

impl Instance {
    /// Allocates the arenas and builds the bind groups.
    pub fn new(ctx: &DeviceContext, program: Arc<Program>, params: &ParamStore) -> Result<Instance> {
        // INDIRECT: control buffers (the last arenas) hold workgroup counts that kernels write.
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::INDIRECT;
        let arenas: Vec<wgpu::Buffer> = program
            .arena_sizes
            .iter()
            .map(|&size| {
                ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("arena"),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut inst = Instance {
            program: program.clone(),
            arenas,
            bind_groups: Vec::new(),
            staging: None,
            staging_offsets: Vec::new(),
            upload: None,
            upload_offsets: Vec::new(),
        };
        for d in &program.dispatches {
            let uniform = match d.per_iteration {
                // One block, selected per iteration by the dynamic offset.
                Some(blocks) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &d.uniform,
                    offset: 0,
                    size: std::num::NonZeroU64::new(blocks.block),
                }),
                None => d.uniform.as_entire_binding(),
            };
            let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform }];
            for (j, l) in d.bindings.iter().enumerate() {
                entries.push(wgpu::BindGroupEntry {
                    binding: j as u32 + 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: inst.buffer(l.home, params)?,
                        offset: l.offset,
                        size: std::num::NonZeroU64::new(l.size),
                    }),
                });
            }
            let bg = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &d.pipeline.layout,
                entries: &entries,
            });
            inst.bind_groups.push(bg);
        }
        let mut total = 0u64;
        for o in &program.outputs {
            inst.staging_offsets.push(total);
            total += o.loc.size;
        }
        inst.staging = (total > 0).then(|| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: total,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        inst.make_upload(ctx);
        Ok(inst)
    }

    /// Lays out every input in a persistent upload buffer when the inputs are large enough.
    fn make_upload(&mut self, ctx: &DeviceContext) {
        let mut total = 0u64;
        for l in &self.program.inputs {
            self.upload_offsets.push(total);
            total = (total + l.size).div_ceil(UPLOAD_ALIGN) * UPLOAD_ALIGN;
        }
        if total >= UPLOAD_STAGING_MIN {
            self.upload = Some(ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("upload"),
                size: total,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }));
        }
    }

    /// The buffer behind a location.
    pub fn buffer<'a>(&'a self, h: Home, params: &'a ParamStore) -> Result<&'a wgpu::Buffer> {
        let b = match h {
            Home::Arena(k) => self.arenas.get(k),
            Home::Param(k) => params.buffer(k),
            Home::Const(k) => self.program.consts.get(k),
        };
        match b {
            Some(b) => Ok(b),
            None => bail!(Device, "memory plan refers to a missing buffer {h:?}"),
        }
    }

    /// The location of input `k` (signature order).
    pub fn input(&self, k: usize) -> Option<Loc> {
        self.program.inputs.get(k).copied()
    }
}
