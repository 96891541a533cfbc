//! The wide skinny (GEMV) kernels' shapes: which of `linalg_gemv.wgsl` (N-contiguous B) and
//! `linalg_gemv_dot.wgsl` (K-contiguous B, `x · Wᵀ`) reads a few-row GEMM's weights exactly as
//! 16-byte vectors, and its columns per workgroup, unroll and reduction ([`crate::Tuning`]'s
//! `gemv.*` keys override them).

use super::Gemm;
use crate::device::DeviceCaps;
use shaders::linalg::{gemv_columns, GemvTile, GEMV_THREADS};

/// The wide skinny kernels take as many columns per workgroup as keep at least this many
/// workgroups (two per SM of a big GPU) busy over the whole K.
const GEMV_TARGET_WORKGROUPS: usize = 256;
/// At most this many column invocations (N-contiguous) or columns (K-contiguous) per workgroup:
/// at least 4 K lanes.
const GEMV_MAX_CT: usize = 64;

/// The wide skinny kernel's shape for few-row GEMM `g`, when its vector loads of B are exact
/// (see the templates): F32/F16/BF16, K > 0, B's window and batch strides whole vectors of
/// `gemv_columns` elements, and either B N-contiguous with N and the row stride whole vectors,
/// or B K-contiguous with K and the column stride whole vectors.
pub(super) fn gemv_tile(caps: &DeviceCaps, g: &Gemm, batch: usize) -> Option<GemvTile> {
    let cw = usize::try_from(gemv_columns(g.dtype)?).ok()?;
    let vector_bytes = u64::try_from(cw.checked_mul(g.dtype.size())?).ok()?;
    let whole =
        g.k > 0 && g.b.batch.iter().all(|s| s.is_multiple_of(cw)) && g.b.window.bytes.is_multiple_of(vector_bytes);
    let ncontig = g.b.cs == 1 && g.n.is_multiple_of(cw) && g.b.rs.is_multiple_of(cw);
    let kcontig = g.b.rs == 1 && g.k.is_multiple_of(cw) && g.b.cs.is_multiple_of(cw);
    let tune = &caps.tuning;
    let kdot = !ncontig && kcontig && tune.gemv_kdot != Some(false);
    if !whole || !(ncontig || kdot) {
        return None;
    }
    let rows = g.m.next_power_of_two().min(4);
    let others = g.m.div_ceil(rows).saturating_mul(batch);
    // Column units: vectors of columns (N-contiguous) or columns (K-contiguous); K lanes are
    // useful up to half the vectors (K-contiguous) or rows (N-contiguous) of K.
    let (units, k_steps) = if kdot { (g.n, g.k / cw) } else { (g.n / cw, g.k) };
    let target = tune.gemv_workgroups.and_then(|t| usize::try_from(t).ok()).unwrap_or(GEMV_TARGET_WORKGROUPS);
    let ct = match tune.gemv_ct.and_then(|c| usize::try_from(c).ok()) {
        Some(c) if c.is_power_of_two() && c <= GEMV_MAX_CT => c,
        _ => columns_per_workgroup(units, others, k_steps, target)?,
    };
    let default = GemvTile::new(u32::try_from(ct).ok()?, u32::try_from(rows).ok()?);
    let unroll = tune.gemv_unroll.filter(|u| matches!(u, 1 | 2 | 4 | 8 | 16)).unwrap_or(default.unroll);
    let subgroups = caps.subgroups.is_some() && tune.gemv_subgroups != Some(false);
    Some(GemvTile { unroll, subgroups, kdot, ..default })
}

/// Column units per workgroup: the most that keep `target` workgroups over `units` columns and
/// `others` row blocks and batches, but no more K lanes than half of `k_steps` (short K spreads
/// over columns instead).
fn columns_per_workgroup(units: usize, others: usize, k_steps: usize, target: usize) -> Option<usize> {
    let threads = usize::try_from(GEMV_THREADS).ok()?;
    let mut ct = 1usize;
    while ct < GEMV_MAX_CT && units.div_ceil(ct * 2).saturating_mul(others) >= target {
        ct *= 2;
    }
    while ct < GEMV_MAX_CT && threads / ct > (k_steps / 2).max(1) {
        ct *= 2;
    }
    Some(ct)
}

#[cfg(test)]
mod tests {
    use super::super::tests::gemm_of;
    use super::*;
    use backend_api::DType;

    fn caps(subgroups: bool) -> DeviceCaps {
        let mut caps = DeviceCaps::for_tests();
        caps.subgroups = subgroups.then_some(crate::device::SubgroupSizes { min: 32, max: 32 });
        caps
    }

    /// A `[N, K]` weight read as B (`x · Wᵀ`): rows of W contiguous.
    fn kdot_of(d: DType, m: usize, n: usize, k: usize) -> Gemm {
        let mut g = gemm_of(d, m, n, k);
        (g.b.rs, g.b.cs) = (1, k);
        g.b.window.bytes = (n * k * d.size()) as u64;
        g
    }

    #[test]
    fn k_contiguous_weights_use_the_dot_kernel() {
        let t = gemv_tile(&caps(true), &kdot_of(DType::F32, 1, 4096, 4096), 1).unwrap();
        // 4096 columns, 16 per workgroup: 256 workgroups of 16 lanes per column.
        assert_eq!(t, GemvTile { subgroups: true, kdot: true, ..GemvTile::new(16, 1) });
        let small = gemv_tile(&caps(false), &kdot_of(DType::F16, 3, 256, 256), 1).unwrap();
        assert!(small.kdot && !small.subgroups && small.rows == 4);
        // K not whole vectors, an odd column stride: none.
        assert!(gemv_tile(&caps(true), &kdot_of(DType::F16, 1, 64, 60), 1).is_none());
        let mut odd = kdot_of(DType::F32, 1, 64, 64);
        odd.b.cs = 66;
        odd.b.window.bytes = 64 * 66 * 4;
        assert!(gemv_tile(&caps(true), &odd, 1).is_none());
    }

    #[test]
    fn overrides_apply_where_the_kernel_is_exact() {
        let mut c = caps(true);
        c.tuning.gemv_ct = Some(2);
        c.tuning.gemv_unroll = Some(16);
        c.tuning.gemv_subgroups = Some(false);
        let t = gemv_tile(&c, &kdot_of(DType::BF16, 1, 4096, 4096), 1).unwrap();
        assert_eq!((t.ct, t.unroll, t.subgroups, t.kdot), (2, 16, false, true));
        c.tuning.gemv_kdot = Some(false);
        assert!(gemv_tile(&c, &kdot_of(DType::BF16, 1, 4096, 4096), 1).is_none());
        // A forced column count never makes an unaligned operand vector-read.
        assert!(gemv_tile(&c, &kdot_of(DType::F32, 1, 64, 62), 1).is_none());
        let mut w = caps(false);
        w.tuning.gemv_workgroups = Some(64);
        let mut g = gemm_of(DType::F32, 1, 4096, 4096);
        g.b.window.bytes = 4096 * 4096 * 4;
        assert_eq!(gemv_tile(&w, &g, 1).unwrap().ct, 16);
    }
}
