//! An instance of a [`Program`]: the arena (scratch) buffers of one executable and the bind groups
//! that tie the program's dispatches to them, the params and the constants. Made once per
//! (executable, variant); reused by every run.

use crate::compile::{CompileStats, DispatchSpec, Program};
use crate::device::DeviceContext;
use crate::params::ParamStore;
use crate::plan::{Home, Loc};
use crate::scope;
use backend_api::{bail, Result, Signature, Slot};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Arenas, bind groups and the readback and upload buffers of one executable for one program.
pub(crate) struct Instance {
    /// The compiled program (shared with clones).
    pub program: Arc<Program>,
    arenas: Vec<wgpu::Buffer>,
    /// The bind group of each dispatch of the program (dispatches that bind the same pipeline,
    /// params block and ranges share one).
    pub bind_groups: Vec<wgpu::BindGroup>,
    /// The program's compile stats with this instance's part added.
    pub stats: CompileStats,
    /// Host-visible buffers that receive the host-placed outputs: several when together they
    /// exceed the device's `max_buffer_size` (each output fits one, as its arena range does).
    pub staging: Vec<wgpu::Buffer>,
    /// Where each output goes: (index in `staging`, byte offset).
    pub staging_offsets: Vec<(usize, u64)>,
    /// Host-visible buffers that large host inputs are written into (see [`UPLOAD_STAGING_MIN`]),
    /// split like `staging`.
    pub upload: Vec<wgpu::Buffer>,
    /// Where each input (signature order) goes: (index in `upload`, byte offset).
    pub upload_offsets: Vec<(usize, u64)>,
}

/// Runs whose host inputs total at least this many bytes write them through the instance's own
/// persistent upload buffer instead of `Queue::write_buffer`, which allocates (and, for large
/// sizes, pins) a fresh staging buffer on every call: 1.1–1.3 GB/s on the H200 for 64–256 MiB.
/// Smaller runs keep `write_buffer`, which does not wait for the previous run to finish.
pub(crate) const UPLOAD_STAGING_MIN: u64 = 256 * 1024;

/// Alignment of each input's range in the upload buffer (≥ wgpu's map and copy alignments).
const UPLOAD_ALIGN: u64 = 256;

/// Where [`pack`] put each range — (buffer, offset) — and the size of each buffer.
pub(crate) type Packing = (Vec<(usize, u64)>, Vec<u64>);

/// Packs ranges of `sizes` bytes (each aligned to `align`) into as few buffers of at most `max`
/// bytes as first-come order allows. Returns each range's (buffer, offset) and the buffer sizes;
/// errs naming the range (through `name`) that fits no buffer.
pub(crate) fn pack(sizes: &[u64], align: u64, max: u64, name: &dyn Fn(usize) -> String) -> Result<Packing> {
    let mut places = Vec::with_capacity(sizes.len());
    let mut buffers: Vec<u64> = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        if size > max {
            bail!(DeviceLimit, "{} of {size} bytes exceeds the device's max_buffer_size {max}", name(i));
        }
        let fits = |used: u64| used.checked_next_multiple_of(align).and_then(|o| o.checked_add(size).map(|e| (o, e)));
        let place = match buffers.last_mut().and_then(|used| fits(*used).filter(|&(_, e)| e <= max).map(|p| (used, p)))
        {
            Some((used, (offset, end))) => {
                *used = end;
                (buffers.len() - 1, offset)
            }
            None => {
                buffers.push(size);
                (buffers.len() - 1, 0)
            }
        };
        places.push(place);
    }
    Ok((places, buffers))
}

impl Instance {
    /// Allocates the arenas, builds the bind groups and the readback and upload buffers.
    pub fn new(ctx: &DeviceContext, program: Arc<Program>, params: &ParamStore, sig: &Signature) -> Result<Instance> {
        let start = Instant::now();
        // INDIRECT: control buffers (the last arenas) hold workgroup counts that kernels write.
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::INDIRECT;
        let arenas: Vec<wgpu::Buffer> = program
            .arena_sizes
            .iter()
            .enumerate()
            .map(|(k, &size)| scope::buffer(ctx, "arena", size, usage, &|| format!("arena {k}")))
            .collect::<Result<_>>()?;
        let mut inst = Instance {
            program: program.clone(),
            arenas,
            bind_groups: Vec::new(),
            stats: program.stats.clone(),
            staging: Vec::new(),
            staging_offsets: Vec::new(),
            upload: Vec::new(),
            upload_offsets: Vec::new(),
        };
        inst.make_bind_groups(ctx, params)?;
        inst.make_staging(ctx, sig)?;
        inst.make_upload(ctx, sig)?;
        inst.stats.instance = start.elapsed();
        Ok(inst)
    }

    /// Makes the bind group of every dispatch, one per distinct (pipeline, params range, storage
    /// ranges), all inside one pair of error scopes: a scope's push and pop, per bind group, cost
    /// more than the bind group. Where the batch fails, they are made again one scope each to
    /// name the dispatch.
    fn make_bind_groups(&mut self, ctx: &DeviceContext, params: &ParamStore) -> Result<()> {
        let program = self.program.clone();
        let what = || format!("the bind groups of {} dispatches", program.dispatches.len());
        let batch = scope::scoped(ctx, what, || self.distinct_bind_groups(ctx, &program, params, false));
        let (groups, distinct) = match batch {
            Ok(made) => made?,
            Err(e) => match self.distinct_bind_groups(ctx, &program, params, true) {
                Ok(_) => return Err(e),
                Err(named) => return Err(named),
            },
        };
        self.bind_groups = groups;
        self.stats.bind_groups = distinct;
        Ok(())
    }

    /// The bind group of each dispatch and the number of distinct ones; with `scoped`, each
    /// made inside error scopes of its own (see [`scope::scoped`]).
    fn distinct_bind_groups(
        &self,
        ctx: &DeviceContext,
        program: &Program,
        params: &ParamStore,
        scoped: bool,
    ) -> Result<(Vec<wgpu::BindGroup>, usize)> {
        type Key<'p> = (*const crate::pipelines::Pipeline, u64, u64, &'p [Loc]);
        let mut made: HashMap<Key<'_>, wgpu::BindGroup> = HashMap::new();
        let mut groups = Vec::with_capacity(program.dispatches.len());
        for (k, d) in program.dispatches.iter().enumerate() {
            let key = (Arc::as_ptr(&d.pipeline), d.params_offset, d.params_size, &d.bindings[..]);
            let bg = match made.get(&key) {
                Some(bg) => bg.clone(),
                None => {
                    let bg = self.bind_group(ctx, d, params, scoped).map_err(|e| e.context(format!("dispatch {k}")))?;
                    made.insert(key, bg.clone());
                    bg
                }
            };
            groups.push(bg);
        }
        Ok((groups, made.len()))
    }

    /// The bind group of dispatch `d`: its params block and its storage ranges; with `scoped`,
    /// made inside error scopes.
    fn bind_group(
        &self,
        ctx: &DeviceContext,
        d: &DispatchSpec,
        params: &ParamStore,
        scoped: bool,
    ) -> Result<wgpu::BindGroup> {
        // A repeated body's dispatch binds its first block; the dynamic offset selects the
        // iteration's.
        let uniform = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.program.uniform,
            offset: d.params_offset,
            size: std::num::NonZeroU64::new(d.params_size),
        });
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform }];
        for (j, l) in d.bindings.iter().enumerate() {
            let Some(binding) = u32::try_from(j).ok().and_then(|j| j.checked_add(1)) else {
                bail!(DeviceLimit, "a kernel with {} bindings", d.bindings.len())
            };
            entries.push(wgpu::BindGroupEntry {
                binding,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: self.buffer(l.home, params)?,
                    offset: l.offset,
                    size: std::num::NonZeroU64::new(l.size),
                }),
            });
        }
        let make = || {
            ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &d.pipeline.layout,
                entries: &entries,
            })
        };
        if !scoped {
            return Ok(make());
        }
        let what = || format!("a bind group of {} storage ranges", d.bindings.len());
        scope::scoped(ctx, what, make)
    }

    /// Lays out every output in readback buffers, split at the device's `max_buffer_size`.
    fn make_staging(&mut self, ctx: &DeviceContext, sig: &Signature) -> Result<()> {
        let sizes: Vec<u64> = self.program.outputs.iter().map(|o| o.loc.size).collect();
        let name = |i: usize| slot_name("output", i, &sig.outputs);
        let (places, buffers) = pack(&sizes, 4, ctx.caps.limits.max_buffer_size, &name)?;
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let what = |k: usize| {
            let outs: Vec<String> = places.iter().enumerate().filter(|(_, p)| p.0 == k).map(|(i, _)| name(i)).collect();
            format!("the readback buffer of {}", outs.join(", "))
        };
        for (k, &size) in buffers.iter().enumerate() {
            self.staging.push(scope::buffer(ctx, "readback", size, usage, &|| what(k))?);
        }
        self.staging_offsets = places;
        Ok(())
    }

    /// Lays out every input in persistent upload buffers when the inputs are large enough.
    fn make_upload(&mut self, ctx: &DeviceContext, sig: &Signature) -> Result<()> {
        let mut sizes = Vec::with_capacity(self.program.inputs.len());
        let mut total = 0u64;
        for l in &self.program.inputs {
            let Some(padded) = l.size.checked_next_multiple_of(UPLOAD_ALIGN) else {
                bail!(DeviceLimit, "an input of {} bytes", l.size)
            };
            total = total.saturating_add(padded);
            sizes.push(padded);
        }
        let name = |i: usize| slot_name("input", i, &sig.inputs);
        let (places, buffers) = pack(&sizes, UPLOAD_ALIGN, ctx.caps.limits.max_buffer_size, &name)?;
        if total >= UPLOAD_STAGING_MIN {
            let usage = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
            for (k, &size) in buffers.iter().enumerate() {
                let what = || {
                    let ins: Vec<String> =
                        places.iter().enumerate().filter(|(_, p)| p.0 == k).map(|(i, _)| name(i)).collect();
                    format!("the upload buffer of {}", ins.join(", "))
                };
                self.upload.push(scope::buffer(ctx, "upload", size, usage, &what)?);
            }
        }
        self.upload_offsets = places;
        Ok(())
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

/// "output 2 \"loss\"": the slot's position and, where the signature has it, its name.
fn slot_name(kind: &str, i: usize, slots: &[Slot]) -> String {
    match slots.get(i) {
        Some(s) => format!("{kind} {i} {:?} ({}{})", s.name, s.dtype, s.shape),
        None => format!("{kind} {i}"),
    }
}

#[cfg(test)]
mod tests {
    use super::pack;

    #[test]
    fn pack_splits_at_the_buffer_size_and_refuses_what_fits_none() {
        let name = |i: usize| format!("output {i}");
        let (places, buffers) = pack(&[600, 300, 600, 16], 256, 1000, &name).unwrap();
        assert_eq!(places, [(0, 0), (1, 0), (2, 0), (2, 768)]);
        assert_eq!(buffers, [600, 300, 768 + 16]);
        let (places, buffers) = pack(&[100, 100], 256, 1000, &name).unwrap();
        assert_eq!((places, buffers), (vec![(0, 0), (0, 256)], vec![356]));
        let e = pack(&[600, 2000], 4, 1000, &name).unwrap_err();
        assert!(e.to_string().contains("output 1"), "{e}");
    }
}
