//! The blocked fused kernel (`attention_flash.wgsl`): one workgroup per block of query rows,
//! value-column chunk and batch-head pair.

use super::{Geometry, Operands};
use crate::lower::builder::{u32_of, Kernel, Lower};
use crate::lower::Grid;
use crate::pipelines::BindKind;
use backend_api::{ensure, Error, ErrorKind, Result};
use shaders::attention::flash::{flash_module, AttnVariant, FlashTile};
use shaders::params::Params;

/// The variant of the node's operands.
pub(super) fn variant(o: &Operands<'_>) -> AttnVariant {
    AttnVariant { dtype: o.q.dtype, keep_mask: o.mask.is_some(), bias: o.bias.map(|t| t.dtype) }
}

/// The largest tile whose workgroup memory the device has.
fn tile(b: &Lower<'_>) -> FlashTile {
    let limit = b.caps().limits.max_compute_workgroup_storage_size;
    if FlashTile::LARGE.workgroup_bytes() <= limit {
        FlashTile::LARGE
    } else {
        FlashTile::SMALL
    }
}

/// The storage bindings: q, k, v, keep-mask, bias (as present), then the output.
pub(super) fn input_bindings(o: &Operands<'_>) -> Vec<(crate::lower::Window, BindKind)> {
    [Some(o.q), Some(o.k), Some(o.v), o.mask, o.bias]
        .into_iter()
        .flatten()
        .map(|t| (t.window, BindKind::Read))
        .collect()
}

/// The (y, z) plane of a grid carrying `n` batch-head pairs within the per-dimension limit:
/// (rows y, planes z).
pub(super) fn bh_plane(b: &Lower<'_>, n: usize) -> Result<(u32, u32)> {
    let max = b.caps().limits.max_compute_workgroups_per_dimension.max(1) as usize;
    let y = n.clamp(1, max);
    let z = n.div_ceil(y);
    ensure!(z <= max, DeviceLimit, "Attention: {n} batch-head pairs exceed the device's grid");
    Ok((u32_of(y, "grid rows")?, u32_of(z, "grid planes")?))
}

/// Lowers the node with the blocked kernel, on tensor cores where [`super::coop`] applies.
pub(super) fn run(b: &mut Lower<'_>, g: &Geometry, o: &Operands<'_>) -> Result<()> {
    if let Some(t) = super::coop::tile(b, g, o) {
        return super::coop::run(b, g, o, t);
    }
    let v = variant(o);
    let t = tile(b);
    let Some(src) = flash_module(v, t) else {
        let bias = o.bias.map(|t| t.dtype);
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("no attention kernel for q {} with bias {bias:?}", o.q.dtype),
        ));
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("attention shader: {e}")))?;
    let q_blocks = g.sq.div_ceil(t.bq as usize);
    let dv_chunks = g.dv.div_ceil(t.dvc as usize);
    let x = q_blocks.saturating_mul(dv_chunks);
    let max = b.caps().limits.max_compute_workgroups_per_dimension as usize;
    ensure!(
        x <= max,
        DeviceLimit,
        "Attention: {q_blocks} query blocks x {dv_chunks} value chunks exceed the device's {max} workgroups per dimension"
    );
    let (rows, planes) = bh_plane(b, g.b * g.hq)?;
    let mut p = g.params;
    p.bh_rows = rows;
    p.dv_chunks = u32_of(dv_chunks, "value chunks")?;
    let mut bindings = input_bindings(o);
    bindings.push((o.out.window, BindKind::Write));
    b.zero_if_packed(o.out)?;
    // 4 B Hq Sq Sk D flops (2 for the logits, 2 for P V with Dv): the rule PyTorch's benchmarks use.
    let flops = [g.b, g.hq, g.sq, g.sk, g.d + g.dv, 2].iter().try_fold(1u64, |acc, &n| acc.checked_mul(n as u64));
    b.push(Kernel {
        source,
        bindings,
        params: p.to_bytes(),
        grid: Grid::Workgroups([u32_of(x, "workgroups")?, rows, planes]),
        flops,
    });
    Ok(())
}
