//! The cooperative-matrix (tensor-core) variants of the GEMM: which tile, staging, K step and
//! buffering a product gets on a device, when K is split, the reduced-precision option for
//! F32/BF16 ([`crate::MatmulPrecision`]) and the `coop.*` overrides of [`crate::Tuning`].

use super::{Gemm, Strided};
use crate::device::DeviceCaps;
use crate::tuning::CoopStageChoice;
use crate::MatmulPrecision;
use backend_api::DType;
use shaders::linalg::{CoopShape, CoopTile, CoopVecTile, Variant, COOP_BK};
use wgpu::wgt::{CooperativeMatrixProperties, CooperativeScalarType};

/// Cooperative GEMMs split K only below this many workgroups (fewer than the SMs of a big GPU,
/// which would leave SMs idle): on the H200 a 1024³ product in 256 workgroups of 64 x 64 ran in
/// 30 µs unsplit, against 32 µs plus a 12 µs reduction with two splits of 128 x 128 tiles…
pub(super) const SPLIT_WORKGROUPS: usize = 128;
/// …and keep at least this many k per split (each split costs a pass over the output).
pub(super) const SPLIT_MIN_CHUNK: usize = 1024;

/// How much work a product has for the large tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Size {
    /// Enough 128 x 128 tiles for the 128 x 128 tile.
    pub large: bool,
    /// Enough 128 x 256 tiles for the 128 x 256 tile.
    pub huge: bool,
}

/// The cooperative-matrix variant for `g` on `caps`, if one applies: F16 products on devices
/// with f16 cooperative matrices (any layout), and F32/BF16 products under
/// [`MatmulPrecision::F16`] whose operands the vector kernel can load (whole 16-byte rows).
pub(super) fn coop_variant(caps: &DeviceCaps, g: &Gemm, size: Size) -> Option<Variant> {
    let reduced = matches!(g.dtype, DType::F32 | DType::BF16) && caps.matmul_precision == MatmulPrecision::F16;
    if g.dtype != DType::F16 && !reduced {
        return None;
    }
    let t = coop_tile(caps, size.large)?;
    let vec = coop_vec_tile(caps, g, t, size);
    if reduced {
        // Only the vector kernel rounds F32/BF16 to f16; other layouts stay exact (tiled).
        return vec.map(Variant::CoopVec);
    }
    if caps.tuning.coop_stage == Some(CoopStageChoice::Pairs) {
        return Some(Variant::Coop(t));
    }
    Some(vec.map_or(Variant::Coop(t), Variant::CoopVec))
}

/// The element-pair kernel's tile on `caps`, if the device can run a cooperative kernel: `f16`
/// kernels, one subgroup size (the kernel is sized in subgroups), an f16 x f16 -> f32
/// configuration with square fragments of a size naga writes (the largest reported), and the
/// workgroup memory and invocations for the tile. The 128 x 128 tile when `large` and it fits,
/// unless `coop.tile` forces a shape that fits.
pub(super) fn coop_tile(caps: &DeviceCaps, large: bool) -> Option<CoopTile> {
    let tile = base_tile(caps)?;
    let fits = |t: &CoopTile| t.workgroup_bytes() <= workgroup_limit(caps) && threads_fit(caps, t.threads());
    let forced = caps.tuning.coop_tile.map(&tile).filter(fits);
    let auto = [tile(CoopShape::Large)].into_iter().filter(|_| large).chain([tile(CoopShape::Small)]);
    forced.into_iter().chain(auto).find(fits)
}

/// The cooperative tile of a shape on `caps` (fragment size and subgroup size), if any.
fn base_tile(caps: &DeviceCaps) -> Option<impl Fn(CoopShape) -> CoopTile> {
    let sizes = caps.subgroups.as_ref()?;
    if !caps.f16 || sizes.min != sizes.max {
        return None;
    }
    let frag = caps.cooperative_matrix.iter().filter(|c| f16_to_f32_square(c)).map(|c| c.m_size).max()?;
    let subgroup = sizes.max;
    Some(move |shape| CoopTile { frag, subgroup, shape })
}

fn workgroup_limit(caps: &DeviceCaps) -> u64 {
    u64::from(caps.limits.max_compute_workgroup_storage_size)
}

fn threads_fit(caps: &DeviceCaps, threads: u32) -> bool {
    threads <= caps.limits.max_compute_invocations_per_workgroup && threads <= caps.limits.max_compute_workgroup_size_x
}

/// The vector-load kernel for `g`, when every staged 8-element group is exact (see
/// `linalg_coop_vec.wgsl`): A K-contiguous and B N-contiguous, K, N, the row strides and batch
/// strides multiples of 8, both windows whole 16-byte vectors (the split-K ranges are multiples
/// of 16, see [`adjust_split`]). `t` is the element-pair kernel's tile, whose fragment and
/// subgroup sizes it shares.
///
/// The automatic choice, fastest first as measured on the H200 (4096³ f16: 128 x 256 with K
/// step 32 at 192 TFLOP/s, 128 x 128 with K step 64 at 188, 128 x 128 with K step 32
/// double-buffered at 150): 128 x 256 when `size.huge`, then 128 x 128 with K step 64, then
/// with K step 32 when `size.large`, else 64 x 64 (1024³: 71 TFLOP/s without split-K, against
/// 68 for 128 x 128 plus a reduction); double-buffered where the workgroup memory allows, else
/// one buffer; the first that fits the device's workgroup memory and invocations. `coop.tile`,
/// `coop.bk` and `coop.buffers` are tried first where they fit.
pub(super) fn coop_vec_tile(caps: &DeviceCaps, g: &Gemm, t: CoopTile, size: Size) -> Option<CoopVecTile> {
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
    let tile = |shape| CoopTile { shape, ..t };
    let auto: Vec<(CoopShape, u32)> = [
        (size.huge, CoopShape::Huge, COOP_BK),
        (size.large, CoopShape::Large, 64),
        (size.large, CoopShape::Large, COOP_BK),
        (true, CoopShape::Small, COOP_BK),
    ]
    .into_iter()
    .filter_map(|(want, shape, bk)| want.then_some((shape, bk)))
    .collect();
    let tuning = &caps.tuning;
    let mut shapes: Vec<(CoopShape, u32)> = match (tuning.coop_tile, tuning.coop_bk) {
        (Some(shape), bk) => vec![(shape, bk.unwrap_or(COOP_BK))],
        (None, Some(bk)) => auto.iter().map(|&(shape, _)| (shape, bk)).collect(),
        (None, None) => Vec::new(),
    };
    shapes.extend(auto);
    let buffers: Vec<bool> = match tuning.coop_buffers {
        Some(n) => vec![n == 2, true, false],
        None => vec![true, false],
    };
    let fits = |v: &CoopVecTile| {
        v.renderable(g.dtype) && v.workgroup_bytes() <= workgroup_limit(caps) && threads_fit(caps, v.tile.threads())
    };
    shapes
        .iter()
        .flat_map(|&(shape, bk)| {
            buffers.iter().map(move |&double_buffer| CoopVecTile { tile: tile(shape), double_buffer, bk })
        })
        .find(fits)
}

/// An f16 x f16 -> f32 configuration with M = N = K of 8 or 16 (the sizes naga writes).
pub(super) fn f16_to_f32_square(c: &CooperativeMatrixProperties) -> bool {
    c.ab_type == CooperativeScalarType::F16
        && c.cr_type == CooperativeScalarType::F32
        && c.m_size == c.n_size
        && c.n_size == c.k_size
        && matches!(c.m_size, 8 | 16)
}
