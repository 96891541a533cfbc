//! The tiled GEMM kernels' choice: the scalar kernel (`linalg.wgsl`: every layout and float
//! dtype) or, for F32 operands whose vectorised axis is contiguous and aligned, the vector-load
//! kernel with double-buffered tiles (`linalg_tiled_vec.wgsl`); the tile and K step for the
//! shape; and the `gemm.*` overrides of [`crate::Tuning`], each applied only where the forced
//! variant computes the node exactly.
//!
//! Defaults from two H200 sweeps (kernel GPU time): at 4096³ the scalar 128 x 128 kernel ran
//! 33.8 TFLOP/s, the vector-load one double-buffered with K step 16 30.8, with K step 8 33.5,
//! single-buffered with K step 16 31.6 and single-buffered with K step 32 35.6 (the best: half
//! the barriers per k of K step 16, and the tile memory of one buffer); at 1024³ the vector-load
//! 64 x 64 tile without split-K ran 24.8 (K step 16, two buffers) and 25.5 (K step 32, one
//! buffer), ahead of every 128-row tile with or without split-K.

use super::{Gemm, Strided};
use crate::device::DeviceCaps;
use crate::Tuning;
use backend_api::{bail, DType, Result};
use shaders::linalg::{Tile, Variant, VecTile};

/// K step of the vector-load kernel: 32, single-buffered (see the module docs for the sweep;
/// 32 does not fit 128 x 128 tiles twice in 48 KiB).
const VEC_BK: u32 = 32;
/// Staged copies of the tiles of the vector-load kernel by default (one: see [`VEC_BK`]).
const VEC_BUFFERS: u32 = 1;
/// The vector-load kernel splits K only below this many workgroups (about two per SM of a
/// 132-SM GPU): the reduction kernel then costs more than the idle SMs it fills…
pub(super) const VEC_SPLIT_WORKGROUPS: usize = 256;
/// …and keeps at least this many k per split.
pub(super) const VEC_MIN_CHUNK: usize = 512;

/// The tiled variant for `g`; `large` when the shape (over all its batch matrices) has enough
/// 128 x 128 tiles to fill a big GPU. The vector-load kernel where [`vec_tile`] picks it, else
/// the scalar kernel, large or small (`gemm.tile` forces either where it fits).
pub(super) fn tiled_variant(caps: &DeviceCaps, g: &Gemm, large: bool) -> Result<Variant> {
    if let Some(t) = vec_tile(caps, g, large) {
        return Ok(Variant::TiledVec(t));
    }
    let limit = u64::from(caps.limits.max_compute_workgroup_storage_size);
    let want_large = match caps.tuning.gemm_tile {
        Some((128, 128)) => true,
        Some((64, 64)) => false,
        _ => large,
    };
    let large_ok = g.dtype != DType::F64 && Tile::Large.workgroup_bytes(g.dtype) <= limit;
    if large_ok && want_large {
        return Ok(Variant::Tiled(Tile::Large));
    }
    let need = Tile::Small.workgroup_bytes(g.dtype);
    if need > limit {
        bail!(DeviceLimit, "the GEMM kernel needs {need} bytes of workgroup memory, device allows {limit}");
    }
    Ok(Variant::Tiled(Tile::Small))
}

/// The vector-load kernel's tile for `g`, when every staged vector is exact (see
/// `linalg_tiled_vec.wgsl` and [`vec_layout`]) and `gemm.vec` is not `off`: the forced tile, K
/// step, buffers, A staging and prefetch where they render and fit the workgroup memory, else
/// the forced tile with the defaults (K step [`VEC_BK`], [`VEC_BUFFERS`] buffer, A k-major,
/// prefetch), else the automatic tile ([`auto_vec_tile`]), else 64 x 64; `None` when none fits.
fn vec_tile(caps: &DeviceCaps, g: &Gemm, large: bool) -> Option<VecTile> {
    let tuning: &Tuning = &caps.tuning;
    if g.dtype != DType::F32 || tuning.gemm_vec == Some(false) {
        return None;
    }
    // Every bound window then starts on 16 bytes, as `array<vec4<f32>>` bindings need.
    if caps.limits.min_storage_buffer_offset_alignment < 16 {
        return None;
    }
    let (a_kfast, b_nfast) = vec_layout(g)?;
    let limit = u64::from(caps.limits.max_compute_workgroup_storage_size);
    let fits = |t: &VecTile| t.renderable() && t.workgroup_bytes() <= limit;
    let (rm, rn) = auto_vec_tile(large);
    let auto = VecTile { rm, rn, bk: VEC_BK, a_kfast, b_nfast, a_rows: false, prefetch: true, buffers: VEC_BUFFERS };
    let tile = tuning.gemm_tile.map_or(auto, |(r, c)| VecTile { rm: r / 16, rn: c / 16, ..auto });
    let forced = VecTile {
        bk: tuning.gemm_bk.unwrap_or(VEC_BK),
        buffers: tuning.gemm_buffers.unwrap_or(VEC_BUFFERS),
        prefetch: tuning.gemm_prefetch.unwrap_or(true),
        // Staging as loaded applies to a K-contiguous A only.
        a_rows: a_kfast && tuning.gemm_a_rows == Some(true),
        ..tile
    };
    [forced, tile, auto, VecTile { rm: 4, rn: 4, ..auto }].into_iter().find(fits)
}

/// Outputs per thread (rows, columns) of the automatic vector-load tile: 128 x 128 for shapes
/// with enough of them (`large`), else 64 x 64. At 1024³ (64
/// tiles of 128 x 128 for the 132 SMs of an H200) 64 x 64 tiles without split-K measured faster
/// than 128 x 64 or 128 x 128 tiles, with or without it.
fn auto_vec_tile(large: bool) -> (u32, u32) {
    if large {
        (8, 8)
    } else {
        (4, 4)
    }
}

/// Which axis of each operand the vector-load kernel reads as vectors — (A along K, B along
/// N) — when every vector is exact: K > 0, and for each operand an axis of stride 1 whose
/// length is a multiple of 4 (K for a K-contiguous operand, M or N otherwise), with the other
/// stride, every batch stride and the window whole vectors. `None` otherwise.
fn vec_layout(g: &Gemm) -> Option<(bool, bool)> {
    if g.k == 0 {
        return None;
    }
    let a_kfast = if whole_vectors(&g.a, g.k, g.a.cs, g.a.rs) {
        true
    } else if whole_vectors(&g.a, g.m, g.a.rs, g.a.cs) {
        false
    } else {
        return None;
    };
    let b_nfast = if whole_vectors(&g.b, g.n, g.b.cs, g.b.rs) {
        true
    } else if whole_vectors(&g.b, g.k, g.b.rs, g.b.cs) {
        false
    } else {
        return None;
    };
    Some((a_kfast, b_nfast))
}

/// Whether `s` read as 4-vectors along an axis of length `len` and stride `fast` (the other
/// matrix axis has stride `other`) gives whole, aligned vectors: each starts at a multiple of 4
/// elements, lies inside or outside the matrix as a whole, and the window holds whole vectors
/// (at least one, which out-of-range lanes read).
fn whole_vectors(s: &Strided, len: usize, fast: usize, other: usize) -> bool {
    fast == 1
        && len.is_multiple_of(4)
        && other.is_multiple_of(4)
        && s.batch.iter().all(|b| b.is_multiple_of(4))
        && s.window.bytes.is_multiple_of(16)
        && s.window.bytes >= 16
}
