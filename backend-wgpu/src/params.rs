//! Params on the device: one buffer per distinct param name, uploaded by `set_param`, shared by
//! every compiled variant and every `clone_shared` clone of an executable.

use crate::device::DeviceContext;
use crate::plan::bindable;
use crate::scope;
use backend_api::{bail, check_slot, Result, Signature, TensorView};
use std::sync::Mutex;

/// The param buffers of one executable family, in signature order (`Home::Param(k)`).
pub(crate) struct ParamStore {
    names: Vec<String>,
    buffers: Vec<wgpu::Buffer>,
    set: Mutex<Vec<bool>>,
}

impl ParamStore {
    /// Allocates a buffer per param of `sig` (params have static shapes).
    pub fn new(ctx: &DeviceContext, sig: &Signature) -> Result<ParamStore> {
        let mut buffers = Vec::with_capacity(sig.params.len());
        for p in &sig.params {
            let Some(dims) = p.shape.as_static() else {
                bail!(Shape, "param {:?} has symbolic shape {}; params are static", p.name, p.shape)
            };
            let what = || format!("param {:?} ({}{})", p.name, p.dtype, p.shape);
            let size = crate::lower::builder::tensor_bytes(p.dtype, &dims)
                .and_then(bindable)
                .map_err(|e| e.context(what()))?;
            let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
            buffers.push(scope::buffer(ctx, &p.name, size, usage, &what)?);
        }
        let names = sig.params.iter().map(|p| p.name.clone()).collect();
        Ok(ParamStore { names, buffers, set: Mutex::new(vec![false; sig.params.len()]) })
    }

    /// Buffer of param `k`.
    pub fn buffer(&self, k: usize) -> Option<&wgpu::Buffer> {
        self.buffers.get(k)
    }

    /// Checks and uploads param `name`.
    pub fn upload(&self, ctx: &DeviceContext, sig: &Signature, name: &str, value: &TensorView<'_>) -> Result<()> {
        let Some(k) = self.names.iter().position(|n| n == name) else {
            bail!(Input, "unknown param {name:?}; the graph's params are {:?}", self.names);
        };
        let Some(slot) = sig.params.get(k) else { bail!(Input, "param {name:?} missing from the signature") };
        check_slot(slot, value, &mut Vec::new()).map_err(|e| e.context(format!("param {name:?}")))?;
        let Some(buf) = self.buffers.get(k) else { bail!(Device, "param {name:?} has no buffer") };
        let what = || format!("the upload of param {name:?}");
        scope::scoped(ctx, what, || crate::exec::write_value(ctx, buf, 0, value))??;
        let Ok(mut set) = self.set.lock() else { bail!(Device, "the params lock was poisoned by a panic") };
        if let Some(s) = set.get_mut(k) {
            *s = true;
        }
        Ok(())
    }

    /// Errs naming the first param never set.
    pub fn check_all_set(&self, sig: &Signature) -> Result<()> {
        let Ok(set) = self.set.lock() else { bail!(Device, "the params lock was poisoned by a panic") };
        if let Some(p) = set.iter().position(|s| !s).and_then(|k| sig.params.get(k)) {
            bail!(Input, "param {:?} ({}{}) was never set; call set_param before run", p.name, p.dtype, p.shape);
        }
        Ok(())
    }
}
