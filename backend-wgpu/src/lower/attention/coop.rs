//! The tensor-core variant of the blocked kernel (`attention_flash_coop.wgsl`), chosen over
//! `attention_flash.wgsl` where the device and the problem allow it: F16 q, k, v; f16
//! cooperative matrices of 16 x 16 with f32 accumulators; one subgroup size of 16, 32 or 64;
//! head widths D and Dv multiples of 16 up to 256; every stride a multiple of 8 and q, k, v
//! stored in whole 16-byte vectors (the kernel loads 8 halves at once); the workgroup memory,
//! invocations and grid the kernel needs.

use super::flash::{bh_plane, input_bindings, variant};
use super::{Geometry, Operands};
use crate::device::DeviceCaps;
use crate::lower::builder::{u32_of, Kernel, Lower, Operand};
use crate::lower::Grid;
use crate::pipelines::BindKind;
use backend_api::{DType, Error, ErrorKind, Result};
use shaders::attention::coop::{coop_module, CoopAttnTile, COOP_BQ};
use shaders::params::Params;
use wgpu::wgt::CooperativeScalarType;

/// The tile for a problem of `dtype` with head widths `d`, `dv` on `caps`, if the tensor-core
/// kernel applies (`aligned`: strides and windows as the module doc says).
pub(super) fn choose(caps: &DeviceCaps, dtype: DType, d: usize, dv: usize, aligned: bool) -> Option<CoopAttnTile> {
    let sizes = caps.subgroups.as_ref()?;
    let frag16 = caps.cooperative_matrix.iter().any(|c| {
        c.ab_type == CooperativeScalarType::F16
            && c.cr_type == CooperativeScalarType::F32
            && c.m_size == 16
            && c.n_size == 16
            && c.k_size == 16
    });
    if dtype != DType::F16 || !caps.f16 || !frag16 || sizes.min != sizes.max || !aligned {
        return None;
    }
    let t = CoopAttnTile { subgroup: sizes.max, d: u32::try_from(d).ok()?, dv: u32::try_from(dv).ok()? };
    let lim = &caps.limits;
    let fits = t.workgroup_bytes() <= lim.max_compute_workgroup_storage_size
        && t.threads() <= lim.max_compute_invocations_per_workgroup
        && t.threads() <= lim.max_compute_workgroup_size_x;
    (t.valid() && fits).then_some(t)
}

/// Whether the strides of `g` are multiples of 8 and q, k, v are whole 16-byte vectors.
fn aligned(g: &Geometry, o: &Operands<'_>) -> bool {
    let p = &g.params;
    let strides = [p.q_sb, p.q_sh, p.q_si, p.k_sb, p.k_sg, p.k_sj, p.v_sb, p.v_sg, p.v_sj, p.o_sb, p.o_sh, p.o_si];
    let whole = |t: &Operand| t.window.offset.is_multiple_of(16) && t.window.bytes.is_multiple_of(16);
    strides.iter().all(|s| s.is_multiple_of(8))
        && [o.q, o.k, o.v].into_iter().all(whole)
        && o.out.window.offset.is_multiple_of(4)
}

/// The tile for this node on the lowering's device, if the tensor-core kernel applies.
pub(super) fn tile(b: &Lower<'_>, g: &Geometry, o: &Operands<'_>) -> Option<CoopAttnTile> {
    let blocks = g.sq.div_ceil(COOP_BQ as usize);
    let grid_ok = blocks <= b.caps().limits.max_compute_workgroups_per_dimension as usize;
    let t = choose(b.caps(), o.q.dtype, g.d, g.dv, aligned(g, o))?;
    grid_ok.then_some(t)
}

/// Lowers the node with the tensor-core kernel and tile `t` (from [`tile`]).
pub(super) fn run(b: &mut Lower<'_>, g: &Geometry, o: &Operands<'_>, t: CoopAttnTile) -> Result<()> {
    let v = variant(o);
    let Some(src) = coop_module(v, t) else {
        return Err(Error::new(ErrorKind::Unsupported, format!("no tensor-core attention kernel for {v:?} {t:?}")));
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("attention shader: {e}")))?;
    let (rows, planes) = bh_plane(b, g.b * g.hq)?;
    let mut p = g.params;
    p.bh_rows = rows;
    p.dv_chunks = 1;
    let mut bindings = input_bindings(o);
    // Every output word is written whole (Dv is even): no zeroing pass.
    bindings.push((o.out.window, BindKind::Write));
    let flops = [g.b, g.hq, g.sq, g.sk, g.d + g.dv, 2].iter().try_fold(1u64, |acc, &n| acc.checked_mul(n as u64));
    b.push(Kernel {
        source,
        bindings,
        params: p.to_bytes(),
        grid: Grid::Workgroups([u32_of(g.sq.div_ceil(COOP_BQ as usize), "workgroups")?, rows, planes]),
        flops,
    });
    Ok(())
}
