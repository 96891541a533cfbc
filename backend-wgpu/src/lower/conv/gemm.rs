//! The implicit-GEMM form of Conv (`shaders::conv::gemm`): per batch item n and group g,
//! `out[n, g·Cgo + co, s] = Σ_k W[g·Cgo + co, k] · im2col(x)[k, s]` (+ bias) on the dense product
//! kernels, with the im2col formed on the fly and the (n, g) pairs as the product's batch. The
//! scalar register-tiled kernel everywhere; the cooperative-matrix kernel for F16 (and for BF16
//! under [`MatmulPrecision::F16`], rounded to f16 like the dense product) where the device has
//! one. No split-K: the (n, g) batch and the output positions give the grid its width.
//!
//! Padding taps contribute nothing, even against a NaN or infinite weight (docs/DECISIONS.md).
//! The masked scalar kernel skips them per product; the fast kernels multiply them by zero,
//! which is the same sum for a finite weight, so a large convolution with padding taps checks
//! its weight on the GPU and a gate (`lower::control`) dispatches one or the other ([`Plan`]).

use super::{bindings, ConvShape, SPATIAL};
use crate::device::DeviceCaps;
use crate::lower::builder::{product_flops, u32_of, Kernel, Lower, Operand, Window};
use crate::lower::control::gate_kernels;
use crate::lower::linalg::conv_coop_tile;
use crate::lower::Grid;
use crate::pipelines::BindKind;
use crate::MatmulPrecision;
use backend_api::shape::try_numel;
use backend_api::{bail, DType, Result};
use shaders::conv::gemm::{
    check_module, gemm_module, k_step, tiled_workgroup_bytes, ConvCheckParams, ConvGemmParams, ConvGeom, GemmKernel,
    CHECK_WORKGROUPS,
};
use shaders::linalg::{GemmParams, Tile};
use shaders::params::Params;

/// Products with at least this many 128 x 128 output tiles (over all (n, g) batches) use the
/// large cooperative tiles, as the dense GEMM does (`LARGE_TILE_MIN_TILES` there).
const LARGE_MIN_TILES: usize = 256;
/// …and the large scalar tiles from this many: the implicit im2col makes each staged element
/// dearer than the dense kernel's, and the small tiles' four times more workgroups hide it
/// better (3x3, 256 -> 256 channels, 8 x 56 x 56, 400 large tiles: 1447 µs small, 1597 large on
/// an H100).
const TILED_LARGE_MIN_TILES: usize = 1024;
/// Index headroom past M, N and K that the kernels' tile coordinates and K steps may reach (one
/// tile or K step; as the dense GEMM's `INDEX_HEADROOM`).
const HEADROOM: usize = 4096;
/// More dispatches than this for one node means absurd sizes: refuse rather than record them.
const MAX_DISPATCHES: usize = 4096;

/// The product kernel for `s` on `caps`, if the implicit GEMM can run there: the cooperative
/// kernel for F16 (BF16 under the reduced-precision option) where the device has one, else the
/// scalar tiled kernel (large tiles for problems with many of them) where its workgroup memory
/// fits; `None` for other dtypes or a device without the workgroup memory. With padding taps
/// this is the fast kernel, gated on a finite weight (see [`lower`]).
pub(super) fn gemm_kernel(s: &ConvShape, caps: &DeviceCaps) -> Option<GemmKernel> {
    let coop = s.dtype == DType::F16 || (s.dtype == DType::BF16 && caps.matmul_precision == MatmulPrecision::F16);
    if coop {
        if let Some(t) = conv_coop_tile(caps, large(s, LARGE_MIN_TILES)) {
            return Some(GemmKernel::Coop(t));
        }
    }
    tiled(s, caps).map(GemmKernel::Tiled)
}

/// Whether `s` is a product with at least `min_tiles` 128 x 128 output tiles.
fn large(s: &ConvShape, min_tiles: usize) -> bool {
    let (m, n) = (s.cgo(), try_numel(&s.output).unwrap_or(usize::MAX));
    let tiles = m.div_ceil(128).saturating_mul(n.div_ceil(128)).saturating_mul(s.n.saturating_mul(s.groups));
    m >= 128 && n >= 128 && tiles >= min_tiles
}

/// The scalar tile for `s` (large for problems with many tiles) whose workgroup memory, presence
/// mask included, fits the device; `None` for dtypes other than F32, F16 and BF16.
fn tiled(s: &ConvShape, caps: &DeviceCaps) -> Option<Tile> {
    if !matches!(s.dtype, DType::F32 | DType::F16 | DType::BF16) {
        return None;
    }
    let limit = u64::from(caps.limits.max_compute_workgroup_storage_size);
    // `gemm.tile` forces one of the square tiles (the others are not rendered for convolutions)
    let forced = match caps.tuning.gemm_tile {
        Some((64, 64)) => Some(Tile::Small),
        Some((128, 128)) => Some(Tile::Large),
        _ => None,
    };
    forced
        .into_iter()
        .chain([Tile::Large].into_iter().filter(|_| large(s, TILED_LARGE_MIN_TILES)))
        .chain([Tile::Small])
        .find(|&t| tiled_workgroup_bytes(t, s.dtype) <= limit)
}

/// Whether some tap of some output position of `s` lands in the padding: padding before a dim,
/// or a last window that reaches past the input.
pub(super) fn padding_taps(s: &ConvShape) -> bool {
    (0..SPATIAL).any(|d| {
        let last = s.output[d].saturating_sub(1).saturating_mul(s.stride[d]);
        let reach = s.kernel[d].saturating_sub(1).saturating_mul(s.dilation[d]);
        s.pads_begin[d] > 0 || last.saturating_add(reach) >= s.input[d]
    })
}

/// How the implicit GEMM of a convolution runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Plan {
    /// No padding taps: kernel `k` alone, products with padding never arise.
    Plain(GemmKernel),
    /// Padding taps on a small product: the scalar tile with padding taps skipped per product.
    Masked(Tile),
    /// Padding taps on a large product: a check of the weight for NaN and ±∞ on the GPU, then a
    /// gate that dispatches kernel `fast` (padding taps multiplied by zero, exact for a finite
    /// weight) when it found none, the masked scalar tile `masked` otherwise.
    Gated { fast: GemmKernel, masked: Tile },
}

/// Products (multiply-adds over every (n, g) batch) from which a convolution with padding taps
/// takes the gated fast kernel: below it the check and the gate (two small dispatches, and an
/// empty one) would cost more than the masked kernel loses.
pub(super) const GATED_MIN_MACS: usize = 1 << 25;

/// The plan for `s` with fast kernel `k` on `caps`.
pub(super) fn plan(k: GemmKernel, s: &ConvShape, caps: &DeviceCaps) -> Result<Plan> {
    if !padding_taps(s) {
        return Ok(Plan::Plain(k));
    }
    let Some(masked) = tiled(s, caps) else {
        bail!(DeviceLimit, "Conv: no scalar implicit-GEMM tile fits the device's workgroup memory");
    };
    let taps = try_numel(&s.kernel)?;
    let macs =
        [s.n, s.groups, s.cgo(), s.cgi(), taps, try_numel(&s.output)?].iter().fold(1usize, |a, &v| a.saturating_mul(v));
    Ok(if macs >= GATED_MIN_MACS { Plan::Gated { fast: k, masked } } else { Plan::Masked(masked) })
}

/// Records the implicit GEMM of kernel `k` for Conv `s`.
pub(super) fn lower(
    b: &mut Lower<'_>,
    k: GemmKernel,
    s: &ConvShape,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let taps = try_numel(&s.kernel)?;
    let (m, n, kk) = (s.cgo(), try_numel(&s.output)?, try_numel(&[s.cgi(), taps])?);
    for (v, what) in [(m, "output channels per group"), (n, "output positions"), (kk, "input channels x taps")] {
        if u32::try_from(v.saturating_add(HEADROOM)).is_err() {
            bail!(DeviceLimit, "Conv: {v} {what} exceed the 32-bit indices of the implicit-GEMM kernel");
        }
    }
    let product =
        Product { s, dims: [m, n, kk], batch: try_numel(&[s.n, s.groups])?, bindings: bindings([w, x], bias, out) };
    // Packed outputs: every word is written whole by one invocation when each output row (S
    // columns) holds whole 4-column groups and the output starts on a word (see the dense GEMM).
    if !(n.is_multiple_of(4) && out.window.offset.is_multiple_of(4)) {
        b.zero_if_packed(out)?;
    }
    match plan(k, s, b.caps())? {
        Plan::Plain(k) => product.push(b, k, false),
        Plan::Masked(t) => product.push(b, GemmKernel::Tiled(t), true),
        Plan::Gated { fast, masked } => {
            let fast = b.record(|b| product.push(b, fast, false))?;
            let masked = b.record(|b| product.push(b, GemmKernel::Tiled(masked), true))?;
            let slots = check_weight(b, w)?;
            // the condition is "a slot is set": the fast kernel runs when it fails, the masked
            // one when it holds
            let gated: Vec<(Kernel, bool)> =
                fast.into_iter().map(|k| (k, true)).chain(masked.into_iter().map(|k| (k, false))).collect();
            gate_kernels(b, &slots, slots.numel(), &gated)
        }
    }
}

/// The weight check: one verdict per workgroup (1: some weight word holds a NaN or an infinity;
/// see `conv_gemm_check.wgsl`) in the slots it returns.
fn check_weight(b: &mut Lower<'_>, w: &Operand) -> Result<Operand> {
    let words = w.words();
    let groups = u32::try_from(words.div_ceil(256)).unwrap_or(u32::MAX).clamp(1, CHECK_WORKGROUPS);
    let slots = b.temp(DType::U32, vec![groups as usize])?;
    let p = ConvCheckParams {
        words: u32_of(usize::try_from(words).unwrap_or(usize::MAX), "weight words")?,
        ..Default::default()
    };
    b.push(Kernel {
        source: check_module(w.dtype)?,
        bindings: vec![(w.window, BindKind::Read), (slots.window, BindKind::Write)],
        params: p.to_bytes(),
        // Grid-strided: at most CHECK_WORKGROUPS workgroups, however large the weight.
        grid: Grid::Workgroups([groups, 1, 1]),
        flops: None,
    });
    Ok(slots)
}

/// One implicit GEMM: the convolution, its product sizes `[M, N, K]`, the (n, g) batch and the
/// kernels' bindings.
struct Product<'s> {
    s: &'s ConvShape,
    dims: [usize; 3],
    batch: usize,
    bindings: Vec<(Window, BindKind)>,
}

impl Product<'_> {
    /// Pushes the dispatches of kernel `k` (padding taps skipped when `masked`), split where the
    /// grid exceeds the device's per-dimension limit.
    fn push(&self, b: &mut Lower<'_>, k: GemmKernel, masked: bool) -> Result<()> {
        let (s, [m, n, kk], batch) = (self.s, self.dims, self.batch);
        let aligned = s.cgi().is_multiple_of(usize::try_from(k_step(k, s.dtype)).unwrap_or(usize::MAX));
        let source = gemm_module(k, s.dtype, s.bias, masked, aligned)?;
        let (bm, bn) = match k {
            GemmKernel::Tiled(t) => (t.shape(s.dtype).tm(), t.shape(s.dtype).tn()),
            GemmKernel::Coop(t) => t.block(),
        };
        let blk = |t: u32| usize::try_from(t).unwrap_or(usize::MAX).max(1);
        let grid = [n.div_ceil(blk(bn)), m.div_ceil(blk(bm)), batch];
        let max = usize::try_from(b.caps().limits.max_compute_workgroups_per_dimension).unwrap_or(usize::MAX).max(1);
        let count = grid.iter().map(|g| g.div_ceil(max)).fold(1usize, usize::saturating_mul);
        if count > MAX_DISPATCHES {
            bail!(DeviceLimit, "Conv: the implicit GEMM of {m}x{n}x{kk} over {batch} batches needs {count} dispatches");
        }
        let base = params(s, [m, n, kk], batch)?;
        for z0 in (0..grid[2]).step_by(max) {
            for m0 in (0..grid[1]).step_by(max) {
                for n0 in (0..grid[0]).step_by(max) {
                    let wg = |total: usize, first: usize| u32_of((total - first).min(max), "workgroups");
                    let mut p = base;
                    p.gemm.tile_m0 = u32_of(m0, "row tiles")?;
                    p.gemm.tile_n0 = u32_of(n0, "column tiles")?;
                    p.gemm.batch0 = u32_of(z0, "batch matrices")?;
                    b.push(Kernel {
                        source: source.clone(),
                        bindings: self.bindings.clone(),
                        params: p.to_bytes(),
                        grid: Grid::Workgroups([wg(grid[0], n0)?, wg(grid[1], m0)?, wg(grid[2], z0)?]),
                        flops: product_flops(batch, m, n, kk, count),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The params of the first dispatch: the product `[m, n, k]` over the (n, g) batch — A = `w`'s
/// group block (row stride K), B's batch offset `x`'s channel block, the bias's the group's
/// channels — and the geometry, strides that never move and dilations that never apply set to 1
/// (as the direct kernels do).
pub(super) fn params(s: &ConvShape, [m, n, k]: [usize; 3], batch: usize) -> Result<ConvGemmParams> {
    let in_total = try_numel(&s.input)?;
    let mut stride = [1u32; 4];
    let mut dilation = [1u32; 4];
    let mut pads = [0u32; 4];
    let mut in_sp = [0u32; 4];
    for d in 0..SPATIAL {
        if s.output[d] > 1 {
            stride[d] = u32_of(s.stride[d], "stride")?;
        }
        if s.kernel[d] > 1 {
            dilation[d] = u32_of(s.dilation[d], "dilation")?;
        }
        pads[d] = u32_of(s.pads_begin[d], "pads_begin")?;
        in_sp[d] = u32_of(s.input[d], "input positions")?;
    }
    in_sp[3] = u32_of(in_total, "input positions")?;
    let [kd, kh, kw] = s.kernel;
    let [_, oh, ow] = s.output;
    let geom = ConvGeom {
        in_sp,
        out_sp: [
            u32_of(try_numel(&[oh, ow])?, "output positions")?,
            u32_of(oh, "output rows")?,
            u32_of(ow, "output columns")?,
            u32_of(n, "output positions")?,
        ],
        taps: [
            u32_of(try_numel(&[kh, kw])?, "kernel taps")?,
            u32_of(kh, "kernel taps")?,
            u32_of(kw, "kernel taps")?,
            u32_of(try_numel(&[kd, kh, kw])?, "kernel taps")?,
        ],
        stride,
        dilation,
        pads,
        chan: [u32_of(s.cgi(), "input channels per group")?, 0, 0, 0],
    };
    let group_x = try_numel(&[s.cgi(), in_total])?;
    let gemm = GemmParams {
        m: u32_of(m, "output channels per group")?,
        n: u32_of(n, "output positions")?,
        k: u32_of(k, "input channels x taps")?,
        batch_rank: 2,
        a_kfast: 1,
        a_rs: u32_of(k, "elements of a weight row")?,
        a_cs: 1,
        bias_rs: 1,
        bias_cs: 0,
        b_nfast: 1,
        nbatch: u32_of(batch, "batch matrices")?,
        kc: u32_of(k, "input channels x taps")?,
        nsplit: 1,
        bdims: [[u32_of(s.n, "batch items")?, u32_of(s.groups, "groups")?, 0, 0], [0; 4]],
        a_bs: [[0, u32_of(try_numel(&[m, k])?, "elements of a weight group")?, 0, 0], [0; 4]],
        b_bs: [
            [
                u32_of(try_numel(&[s.cin, in_total])?, "elements of an input item")?,
                u32_of(group_x, "elements of an input group")?,
                0,
                0,
            ],
            [0; 4],
        ],
        bias_bs: [[0, u32_of(m, "output channels per group")?, 0, 0], [0; 4]],
        ..GemmParams::default()
    };
    Ok(ConvGemmParams { gemm, geom })
}
