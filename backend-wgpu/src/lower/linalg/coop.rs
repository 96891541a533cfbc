//! The cooperative-matrix (tensor-core) variants of the GEMM: which tile, staging, K step and
//! buffering a product gets on a device, the reduced-precision option for F32/BF16
//! ([`crate::MatmulPrecision`]) and the `coop.*` overrides of [`crate::Tuning`].

use super::{Gemm, Strided};
use crate::device::DeviceCaps;
use crate::tuning::CoopStageChoice;
use crate::MatmulPrecision;
use backend_api::DType;
use shaders::linalg::{CoopShape, CoopStage, CoopTile, CoopVecTile, Variant, COOP_BK};
use wgpu::wgt::{CooperativeMatrixProperties, CooperativeScalarType};

/// The cooperative-matrix variant for `g` on `caps`, if one applies: F16 products on devices
/// with f16 cooperative matrices (any layout), and F32/BF16 products under
/// [`MatmulPrecision::F16`] whose operands the word staging can round (whole 16-byte rows).
/// `large`: the problem has enough 128 x 128 tiles for the large tile.
pub(super) fn coop_variant(caps: &DeviceCaps, g: &Gemm, large: bool) -> Option<Variant> {
    let reduced = matches!(g.dtype, DType::F32 | DType::BF16) && caps.matmul_precision == MatmulPrecision::F16;
    if g.dtype != DType::F16 && !reduced {
        return None;
    }
    let t = coop_tile(caps, large)?;
    let vec = coop_vec_tile(caps, g, t);
    if reduced {
        // Only the word staging rounds F32/BF16 to f16; other layouts stay exact (tiled).
        return vec.map(|v| Variant::CoopVec(CoopVecTile { stage: CoopStage::Word, ..v }));
    }
    if caps.tuning.coop_stage == Some(CoopStageChoice::Pairs) {
        return Some(Variant::Coop(t));
    }
    Some(vec.map_or(Variant::Coop(t), Variant::CoopVec))
}

/// The cooperative-matrix tile on `caps`, if the device can run one: `f16` kernels, one subgroup
/// size (the kernel is sized in subgroups), an f16 x f16 -> f32 configuration with square
/// fragments of a size naga writes (the largest reported), and the workgroup memory and
/// invocations for the tile. The large tile when `large` and it fits, unless `coop.tile` forces
/// a shape that fits.
pub(super) fn coop_tile(caps: &DeviceCaps, large: bool) -> Option<CoopTile> {
    let sizes = caps.subgroups.as_ref()?;
    if !caps.f16 || sizes.min != sizes.max {
        return None;
    }
    let frag = caps.cooperative_matrix.iter().filter(|c| f16_to_f32_square(c)).map(|c| c.m_size).max()?;
    let fits = |t: &CoopTile| t.workgroup_bytes() <= workgroup_limit(caps) && threads_fit(caps, t.threads());
    let tile = |shape| CoopTile { frag, subgroup: sizes.max, shape };
    let forced = caps.tuning.coop_tile.map(tile).filter(fits);
    let auto = [tile(CoopShape::Large)].into_iter().filter(|_| large).chain([tile(CoopShape::Small)]);
    forced.into_iter().chain(auto).find(fits)
}

fn workgroup_limit(caps: &DeviceCaps) -> u64 {
    u64::from(caps.limits.max_compute_workgroup_storage_size)
}

fn threads_fit(caps: &DeviceCaps, threads: u32) -> bool {
    threads <= caps.limits.max_compute_invocations_per_workgroup && threads <= caps.limits.max_compute_workgroup_size_x
}

/// The vector-load variant of cooperative tile `t` for `g`, when every staged 8-element group
/// is exact (see `linalg_coop_vec.wgsl`): A K-contiguous and B N-contiguous, K, N, the row
/// strides and batch strides multiples of 8, both windows whole 16-byte vectors (the split-K
/// ranges are multiples of 16 and of the K step, see [`split_multiple`]). By default the
/// half-by-half staging with K step 32, double-buffered when the workgroup memory allows; the
/// `coop.stage`, `coop.bk` and `coop.buffers` overrides where they apply (direct loads only for
/// whole tiles of F16).
pub(super) fn coop_vec_tile(caps: &DeviceCaps, g: &Gemm, t: CoopTile) -> Option<CoopVecTile> {
    let whole = |s: &Strided, fast: usize| {
        fast == 1
            && s.rs.is_multiple_of(8)
            && s.batch.iter().all(|b| b.is_multiple_of(8))
            && s.window.bytes.is_multiple_of(16)
    };
    let ok = g.k > 0 && g.k.is_multiple_of(8) && g.n.is_multiple_of(8) && whole(&g.a, g.a.cs) && whole(&g.b, g.b.cs);
    if !ok {
        return None;
    }
    let tuning = &caps.tuning;
    let stage = match tuning.coop_stage {
        Some(CoopStageChoice::Vec(s)) => s,
        _ => CoopStage::Cvt,
    };
    let bks = tuning.coop_bk.map_or(vec![COOP_BK], |bk| vec![bk, COOP_BK]);
    let buffers: Vec<bool> = match tuning.coop_buffers {
        Some(n) => vec![n == 2, false],
        None => vec![true, false],
    };
    let fits = |v: &CoopVecTile| v.workgroup_bytes() <= workgroup_limit(caps);
    let stages = [stage, CoopStage::Cvt].into_iter().filter(|s| *s != CoopStage::Direct || direct_ok(g, t));
    stages
        .flat_map(|stage| {
            let buffers = &buffers;
            bks.iter().flat_map(move |&bk| {
                buffers.iter().map(move |&double_buffer| {
                    // Direct loads stage nothing: one form.
                    let double_buffer = double_buffer && stage != CoopStage::Direct;
                    CoopVecTile { tile: t, double_buffer, bk, stage }
                })
            })
        })
        .filter(|v| v.stage != CoopStage::Direct || g.k.is_multiple_of(usize::try_from(v.bk).unwrap_or(usize::MAX)))
        .find(fits)
}

/// Whether fragments can be loaded straight from `g`'s operands with tile `t`: F16 and whole
/// tiles along M and N (K is checked against the K step).
fn direct_ok(g: &Gemm, t: CoopTile) -> bool {
    let (tm, tn) = t.block();
    let whole = |n: usize, tile: u32| usize::try_from(tile).is_ok_and(|tile| tile > 0 && n.is_multiple_of(tile));
    g.dtype == DType::F16 && whole(g.m, tm) && whole(g.n, tn)
}

/// An f16 x f16 -> f32 configuration with M = N = K of 8 or 16 (the sizes naga writes).
pub(super) fn f16_to_f32_square(c: &CooperativeMatrixProperties) -> bool {
    c.ab_type == CooperativeScalarType::F16
        && c.cr_type == CooperativeScalarType::F32
        && c.m_size == c.n_size
        && c.n_size == c.k_size
        && matches!(c.m_size, 8 | 16)
}

/// What every K split of a cooperative GEMM must be a multiple of: 16 (whole 8-element groups),
/// and the K step for direct loads (every split whole steps).
pub(super) fn split_multiple(variant: Variant) -> usize {
    match variant {
        Variant::CoopVec(v) if v.stage == CoopStage::Direct => usize::try_from(v.bk).unwrap_or(16).max(16),
        _ => 16,
    }
}

/// The most K splits `coop.split` allows a cooperative GEMM (`None`: no override, or not a
/// cooperative variant).
pub(super) fn max_splits(caps: &DeviceCaps, variant: Variant) -> Option<usize> {
    match variant {
        Variant::Coop(_) | Variant::CoopVec(_) => caps.tuning.coop_split.and_then(|s| usize::try_from(s).ok()),
        _ => None,
    }
}

/// `(nsplit, kc)` of [`super::choose_split`] adjusted for a cooperative variant: at most
/// `coop.split` splits, and ranges that are multiples of [`split_multiple`]. Other variants keep
/// theirs.
pub(super) fn adjust_split(caps: &DeviceCaps, variant: Variant, k: usize, split: (usize, usize)) -> (usize, usize) {
    if !matches!(variant, Variant::Coop(_) | Variant::CoopVec(_)) {
        return split;
    }
    let s = max_splits(caps, variant).map_or(split.0, |max| split.0.min(max));
    if s <= 1 {
        return (1, k);
    }
    let kc = k.div_ceil(s).next_multiple_of(split_multiple(variant));
    (k.div_ceil(kc), kc)
}
