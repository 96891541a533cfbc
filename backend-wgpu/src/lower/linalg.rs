//! MatMul, FusedMatMulBiasAct and DotGeneral (§2.6), and GroupedMatMul (`grouped.rs`, the same
//! GEMM kernels over expert-sorted row tiles): one tiled GEMM kernel (`shaders::linalg`)
//! that reads each operand through strides, so that broadcast batch dims, transposed layouts and
//! DotGeneral axis orders need no copy whenever the operand's row axes and column axes each
//! merge into one strided axis. Only DotGeneral operands whose axes do not merge (e.g. contracting
//! axes listed out of memory order) are first reordered into a scratch operand by a strided copy.
//!
//! The builders ([`matmul`], [`fused_matmul_bias_act`], [`dot_general`]) read and write any
//! [`Operand`] — node values, scratch tensors or windows of them — so another lowering can chain a
//! GEMM with other families' builders (see the composite-op test in `lower/tests.rs`).

use super::builder::{u32_of, vec4s, Kernel, Lower, Operand, Window};
use super::{collapse, Grid};
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use crate::Tuning;
use backend_api::op::{DotGeneralAttrs, Op, UnaryOp};
use backend_api::shape::try_numel;
use backend_api::shape::{broadcast_strides, strides};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result, Shape, TensorType};
use shaders::linalg::grouped::grouped_module;
use shaders::linalg::{
    acc_dtype, module, permute_module, splitk_module, DotPermuteParams, Epilogue, GemmParams, Tile, Variant,
};
use shaders::params::Params;

mod coop;
mod grouped;
mod quant;
mod quant_gemm;
mod quant_grouped;
mod quant_vec;
pub use grouped::grouped_matmul;
pub use quant::quant_matmul;
pub use quant_grouped::quant_grouped_matmul;

/// Batched GEMMs with at least this many 128 x 128 tiles use the large tile (enough workgroups
/// to fill a big GPU several times over); smaller ones use 64 x 64 tiles for parallelism. The
/// cooperative kernel's 128 x 256 tile needs as many tiles of its own size.
const LARGE_TILE_MIN_TILES: usize = 256;
/// More dispatches than this for one node means absurd sizes: refuse rather than record them.
const MAX_SPLIT_DISPATCHES: usize = 4096;
/// Products with at most this many rows (per batch matrix) use the skinny kernel.
const SKINNY_MAX_ROWS: usize = 8;
/// Split K until the skinny kernel has about this many workgroups (a few per SM of a big GPU)…
const SKINNY_TARGET_WORKGROUPS: usize = 1024;
/// …but keep at least this many k per split.
const SKINNY_MIN_CHUNK: usize = 256;
/// The wide skinny kernels split K (partial sums and a reduction kernel) only below this many
/// workgroups…
const GEMV_SPLIT_WORKGROUPS: usize = 64;
/// …and for at least this many k per split: a second kernel costs more than a few microseconds
/// of streaming.
const GEMV_MIN_CHUNK: usize = 4096;
/// Split K until the tiled kernel has about this many workgroups…
const TILED_TARGET_WORKGROUPS: usize = 512;
/// …but keep at least this many k per split (each split costs a pass over the output).
const TILED_MIN_CHUNK: usize = 512;
/// At most this many K splits.
const MAX_SPLITS: usize = 64;

/// MatMul of `x` `[..., M, K]` and `w` `[..., K, N]` (batch dims broadcast) into `out`
/// `[batch..., M, N]`.
pub fn matmul(b: &mut Lower<'_>, x: &Operand, w: &Operand, out: &Operand) -> Result<()> {
    check_types(&Op::MatMul, &[x, w], out)?;
    let g = matmul_gemm(x, w, None, out)?;
    gemm(b, &g, Epilogue::Store, out)
}

/// FusedMatMulBiasAct: `activation(x · w + bias)` into `out`, `bias` broadcast to the output.
pub fn fused_matmul_bias_act(
    b: &mut Lower<'_>,
    activation: Option<UnaryOp>,
    x: &Operand,
    w: &Operand,
    bias: &Operand,
    out: &Operand,
) -> Result<()> {
    check_types(&Op::FusedMatMulBiasAct { activation }, &[x, w, bias], out)?;
    let g = matmul_gemm(x, w, Some(bias), out)?;
    gemm(b, &g, Epilogue::BiasAct(activation), out)
}

/// DotGeneral of `x` and `y` with the axes of `at` into `out` `[batch, lhs free, rhs free]`.
pub fn dot_general(b: &mut Lower<'_>, at: &DotGeneralAttrs, x: &Operand, y: &Operand, out: &Operand) -> Result<()> {
    check_types(&Op::DotGeneral(at.clone()), &[x, y], out)?;
    if out.numel() == 0 {
        return Ok(());
    }
    let plan = plan_dot_general(&x.dims, &y.dims, at)?;
    let lhs = dot_operand(b, x, &plan.lhs, &plan)?;
    let rhs = dot_operand(b, y, &plan.rhs, &plan)?;
    let g = Gemm {
        dtype: out.dtype,
        batch_dims: plan.batch_dims,
        m: plan.m,
        n: plan.n,
        k: plan.k,
        a: lhs,
        b: rhs,
        bias: None,
    };
    gemm(b, &g, Epilogue::Store, out)
}

/// Checks that `op` on `ins` is well typed and makes exactly `out`'s type, and that every operand
/// is addressable with the kernels' 32-bit element indices. The builders may be called on any
/// operands, not only a validated node's, and everything below indexes dims by these checks.
fn check_types(op: &Op, ins: &[&Operand], out: &Operand) -> Result<()> {
    let ty = |o: &Operand| TensorType { dtype: o.dtype, shape: Shape::of(&o.dims) };
    let types: Vec<TensorType> = ins.iter().map(|o| ty(o)).collect();
    let label = backend_api::spec::op_label(op);
    let want = backend_api::infer::infer(op, &types).map_err(|e| e.context(format!("{label} operands")))?;
    ensure!(
        want.len() == 1 && want.first() == Some(&ty(out)),
        Shape,
        "{label} of {types:?} makes {want:?}, not the {} {:?} operand it was given",
        out.dtype,
        out.dims
    );
    for (k, o) in ins.iter().enumerate() {
        fits_u32(o.numel(), &format!("elements of {label} operand {k}"))?;
    }
    fits_u32(out.numel(), "output elements")
}

/// How the GEMM kernel reads one operand: element (β, r, c) is at
/// `Σ β_d · batch[d] + r · rs + c · cs` of `window`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Strided {
    window: Window,
    batch: Vec<usize>,
    rs: usize,
    cs: usize,
}

/// One batched GEMM: out[β, i, j] = epilogue(Σ_k a[β, i, k] · b[β, k, j]), out contiguous.
struct Gemm {
    dtype: DType,
    batch_dims: Vec<usize>,
    m: usize,
    n: usize,
    k: usize,
    a: Strided,
    b: Strided,
    bias: Option<Strided>,
}

/// The GEMM of a (type-checked) MatMul or FusedMatMulBiasAct: batch dims broadcast by zero strides.
fn matmul_gemm(x: &Operand, w: &Operand, bias: Option<&Operand>, out: &Operand) -> Result<Gemm> {
    let (Some((xb, &[m, k])), Some((wb, &[_, n])), Some((ob, _))) =
        (x.dims.split_last_chunk::<2>(), w.dims.split_last_chunk::<2>(), out.dims.split_last_chunk::<2>())
    else {
        bail!(Shape, "MatMul operands must have rank >= 2, got {:?} and {:?}", x.dims, w.dims);
    };
    let batch_strides =
        |dims: &[usize], size: usize| -> Vec<usize> { broadcast_strides(dims, ob).iter().map(|s| s * size).collect() };
    let a = Strided { window: x.window, batch: batch_strides(xb, m * k), rs: k, cs: 1 };
    let bm = Strided { window: w.window, batch: batch_strides(wb, k * n), rs: n, cs: 1 };
    let bias = match bias {
        None => None,
        Some(bias) => {
            let s = broadcast_strides(&bias.dims, &out.dims);
            let Some((sb, &[rs, cs])) = s.split_last_chunk::<2>() else {
                bail!(Shape, "the bias strides {s:?} have no matrix axes");
            };
            Some(Strided { window: bias.window, batch: sb.to_vec(), rs, cs })
        }
    };
    Ok(Gemm { dtype: out.dtype, batch_dims: ob.to_vec(), m, n, k, a, b: bm, bias })
}

/// The kernels of one GEMM writing `out` (contiguous `[batch, M, N]`): a zeroing pass for packed
/// dtypes, the product kernel (split into several dispatches when a grid axis exceeds the
/// device's limit) and, when K is split, the reduction of the partial sums (kept in scratch).
fn gemm(b: &mut Lower<'_>, g: &Gemm, epi: Epilogue, out: &Operand) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let variant = choose_variant(b.caps(), g, try_numel(&g.batch_dims)?)?;
    gemm_as(b, g, variant, epi, out, None)
}

/// [`gemm`] with the product kernel `variant`; with `table`, the grouped form of the kernel
/// (plain store only), whose batch β reads the weight at the offset `table[β]` (see
/// `grouped.rs`).
fn gemm_as(
    b: &mut Lower<'_>,
    g: &Gemm,
    variant: Variant,
    epi: Epilogue,
    out: &Operand,
    table: Option<Window>,
) -> Result<()> {
    let batch = try_numel(&g.batch_dims)?;
    let out_numel = out.numel();
    if out_numel == 0 {
        return Ok(());
    }
    fits_u32(out_numel, "output elements")?;
    ensure!(table.is_none() || epi == Epilogue::Store, Attribute, "a grouped GEMM stores plain products");
    let (bm, bn) = variant.block(g.dtype);
    let tile = |t: u32| usize::try_from(t).unwrap_or(usize::MAX).max(1);
    let blocks = [g.n.div_ceil(tile(bn)), g.m.div_ceil(tile(bm))];
    let workgroups = try_numel(&[blocks[0], blocks[1], batch])?;
    let (nsplit, kc) = forced_split(&b.caps().tuning, variant, g.k, out_numel)
        .unwrap_or_else(|| choose_split(variant, g.k, workgroups, out_numel));
    check_headroom(g, nsplit, kc)?;
    // Split-K: the product kernel writes partial sums to scratch and the reduction finishes.
    let (product_out, product_dtype, product_epi) = if nsplit > 1 {
        let acc = acc_dtype(g.dtype);
        (b.temp(acc, vec![nsplit, out_numel])?.window, acc, Epilogue::Store)
    } else {
        (out.window, g.dtype, epi)
    };
    let source = match table {
        None => render(module(g.dtype, product_dtype, variant, product_epi), g.dtype, epi)?,
        Some(_) => render(grouped_module(g.dtype, product_dtype, variant), g.dtype, epi)?,
    };
    // With K = 0 the operands are empty and never read; bind the output in their place, since an
    // empty range is bound as 4 bytes, less than one element of an 8-byte dtype.
    let operand = |s: &Strided| if g.k == 0 { out.window } else { s.window };
    let mut bindings = vec![(operand(&g.a), BindKind::Read), (operand(&g.b), BindKind::Read)];
    if let (Some(bias), Epilogue::BiasAct(_)) = (&g.bias, product_epi) {
        bindings.push((bias.window, BindKind::Read));
    }
    bindings.push((product_out, BindKind::Write));
    if let Some(t) = table {
        bindings.push((t, BindKind::Read));
    }
    // Packed outputs are stored with atomic ORs into zeroed memory, except where every word is
    // written whole by one invocation: the GEMV kernels for even N, and the tiled and
    // cooperative kernels, whose `store4` calls start on multiples of 4 columns and write two
    // whole words each when N is a multiple of 4 and the output starts on a word; not where
    // K is split (the reduction kernel stores elements).
    let whole = nsplit == 1
        && match variant {
            Variant::Gemv(t) => gemv::whole_words(&b.caps().tuning, t, g, out),
            Variant::Tiled(_) | Variant::TiledVec(_) | Variant::Coop(_) | Variant::CoopVec(_) => {
                g.n.is_multiple_of(4) && out.window.offset.is_multiple_of(4)
            }
            Variant::Skinny { .. } => false,
        };
    if !whole {
        b.zero_if_packed(out)?;
    }
    let split = Split { nbatch: batch, kc, nsplit };
    push_product(b, g, &split, variant, &source, &bindings, blocks)?;
    if nsplit > 1 {
        b.push(splitk_kernel(g, &split, epi, product_out, out)?);
    }
    Ok(())
}

/// Pushes the product kernel over a grid of `blocks` (column, row) tiles × splits × batches, as
/// several dispatches when an axis exceeds the device's per-dimension workgroup limit.
fn push_product(
    b: &mut Lower<'_>,
    g: &Gemm,
    split: &Split,
    variant: Variant,
    source: &str,
    bindings: &[(Window, BindKind)],
    blocks: [usize; 2],
) -> Result<()> {
    let max = usize::try_from(b.caps().limits.max_compute_workgroups_per_dimension).unwrap_or(usize::MAX).max(1);
    let grid = [blocks[0], blocks[1], split.nsplit * split.nbatch];
    let count = grid.iter().map(|x| x.div_ceil(max)).fold(1usize, usize::saturating_mul);
    if count > MAX_SPLIT_DISPATCHES {
        bail!(DeviceLimit, "a {}x{}x{} GEMM over {} batches needs {count} dispatches", g.m, g.n, g.k, split.nbatch);
    }
    for z0 in (0..grid[2]).step_by(max) {
        for m0 in (0..grid[1]).step_by(max) {
            for n0 in (0..grid[0]).step_by(max) {
                let wg = |total: usize, first: usize| u32_of((total - first).min(max), "workgroups");
                let params = gemm_params(g, split, variant, [m0, n0, z0])?;
                b.push(Kernel {
                    source: source.to_string(),
                    bindings: bindings.to_vec(),
                    params: params.to_bytes(),
                    grid: Grid::Workgroups([wg(grid[0], n0)?, wg(grid[1], m0)?, wg(grid[2], z0)?]),
                    flops: super::builder::product_flops(split.nbatch, g.m, g.n, g.k, count),
                });
            }
        }
    }
    Ok(())
}

/// How K is split: `nsplit` ranges of `kc` (the last may be shorter); `nbatch` batch matrices.
struct Split {
    nbatch: usize,
    kc: usize,
    nsplit: usize,
}

/// The reduction of split-K partial sums in `part` into `out`, with the node's epilogue.
fn splitk_kernel(g: &Gemm, split: &Split, epi: Epilogue, part: Window, out: &Operand) -> Result<Kernel> {
    let source = render(splitk_module(g.dtype, epi), g.dtype, epi)?;
    let mut bindings = vec![(part, BindKind::Read)];
    if let (Some(bias), Epilogue::BiasAct(_)) = (&g.bias, epi) {
        bindings.push((bias.window, BindKind::Read));
    }
    bindings.push((out.window, BindKind::Write));
    let params = gemm_params(g, split, Variant::Tiled(Tile::Small), [0, 0, 0])?;
    Ok(Kernel { source, bindings, params: params.to_bytes(), grid: threads(out.numel())?, flops: None })
}

fn render(src: Option<std::result::Result<String, String>>, d: DType, epi: Epilogue) -> Result<String> {
    let Some(src) = src else { bail!(Unsupported, "no GPU matmul kernel for {epi:?} on {d}") };
    src.map_err(|e| Error::new(ErrorKind::Device, e))
}

/// Index headroom the kernels' counters may run past M, N and the K splits (one tile, one K step,
/// a skinny iteration: at most 256; a wide skinny iteration: at most 16 x 256).
const INDEX_HEADROOM: usize = 4096;

/// The kernels are built without runtime checks, and their loop counters and tile coordinates
/// run up to a tile or a K step past M, N and the end of the last K split: those must not wrap
/// 32 bits (see `linalg_common.wgsl`).
fn check_headroom(g: &Gemm, nsplit: usize, kc: usize) -> Result<()> {
    let k_end = kc.saturating_mul(nsplit).max(g.k);
    for (v, what) in [(g.m, "rows"), (g.n, "columns"), (k_end, "contracted elements")] {
        fits_u32(v.saturating_add(INDEX_HEADROOM), what)?;
    }
    Ok(())
}

fn fits_u32(n: usize, what: &str) -> Result<()> {
    if u32::try_from(n).is_err() {
        bail!(DeviceLimit, "{n} {what} exceed the 32-bit indices of the GEMM kernel");
    }
    Ok(())
}

/// One invocation per element of `n`.
fn threads(n: usize) -> Result<Grid> {
    match u64::try_from(n) {
        Ok(n) => Ok(Grid::Threads(n)),
        Err(_) => bail!(DeviceLimit, "{n} invocations do not fit 64 bits"),
    }
}

/// The element-pair cooperative-matrix tile a product gets on `caps` (`large`: with enough 128 x
/// 128 tiles for the large one), if the device can run one: the implicit-GEMM convolution's
/// tensor-core form (`conv/gemm.rs`) uses the dense choice.
pub(crate) fn conv_coop_tile(caps: &DeviceCaps, large: bool) -> Option<shaders::linalg::CoopTile> {
    coop::coop_tile(caps, large)
}

/// The skinny kernel for few rows; else the cooperative-matrix kernel for F16 on devices that
/// have it (and for F32/BF16 under the reduced-precision option, see [`coop::coop_variant`]);
/// else a tiled kernel (`tiled.rs`: the vector-load one for aligned F32 operands of problems
/// below the large scale, else the scalar one, large tiles for big problems).
fn choose_variant(caps: &DeviceCaps, g: &Gemm, batch: usize) -> Result<Variant> {
    if g.m <= SKINNY_MAX_ROWS {
        if let Some(t) = gemv::gemv_tile(caps, g, batch) {
            return Ok(Variant::Gemv(t));
        }
        return Ok(Variant::Skinny { nfast: !(g.b.rs == 1 && g.b.cs != 1) });
    }
    let large_tiles = g.m.div_ceil(128).saturating_mul(g.n.div_ceil(128)).saturating_mul(batch);
    let large = g.m >= 128 && g.n >= 128 && large_tiles >= LARGE_TILE_MIN_TILES;
    let huge_tiles = g.m.div_ceil(128).saturating_mul(g.n.div_ceil(256)).saturating_mul(batch);
    let huge = large && g.n >= 256 && huge_tiles >= LARGE_TILE_MIN_TILES;
    if let Some(v) = coop::coop_variant(caps, g, coop::Size { large, huge }) {
        return Ok(v);
    }
    tiled::tiled_variant(caps, g, large)
}

/// The K split a `*.split` override forces on `variant` (`gemm.split` for the tiled kernels,
/// `coop.split` for the cooperative ones, `gemv.split` for the GEMV kernel; the skinny kernel
/// has none), as `(nsplit, kc)`: that many splits, fewer where a split would hold less than 16 k
/// or the partial sums would exceed 32-bit indices. Ranges start on multiples of 16, as the
/// vector-load kernels need. `None`: no override, the automatic choice stands.
fn forced_split(tuning: &Tuning, variant: Variant, k: usize, out_numel: usize) -> Option<(usize, usize)> {
    let want = match variant {
        Variant::Tiled(_) | Variant::TiledVec(_) => tuning.gemm_split,
        Variant::Coop(_) | Variant::CoopVec(_) => tuning.coop_split,
        Variant::Gemv(_) => tuning.gemv_split,
        Variant::Skinny { .. } => None,
    };
    let want = usize::try_from(want?).ok()?;
    // The partial sums must stay addressable with 32-bit indices.
    let by_index = usize::try_from(u32::MAX).unwrap_or(usize::MAX) / out_numel.max(1);
    let s = want.min(by_index).min(k.div_ceil(16));
    if s <= 1 {
        return Some((1, k));
    }
    let kc = k.div_ceil(s).next_multiple_of(16);
    Some((k.div_ceil(kc), kc))
}

/// Splits K over several workgroups when the output alone gives too few of them to fill a large
/// GPU and K is long enough for every split to stay efficient. Returns (nsplit, kc).
fn choose_split(variant: Variant, k: usize, workgroups: usize, out_numel: usize) -> (usize, usize) {
    let (target, min_chunk) = match variant {
        Variant::Skinny { .. } => (SKINNY_TARGET_WORKGROUPS, SKINNY_MIN_CHUNK),
        Variant::Gemv(_) if workgroups >= GEMV_SPLIT_WORKGROUPS => return (1, k),
        Variant::Gemv(_) => (GEMV_SPLIT_WORKGROUPS, GEMV_MIN_CHUNK),
        Variant::Tiled(_) => (TILED_TARGET_WORKGROUPS, TILED_MIN_CHUNK),
        Variant::Coop(_) | Variant::CoopVec(_) => (coop::SPLIT_WORKGROUPS, coop::SPLIT_MIN_CHUNK),
        Variant::TiledVec(_) => (tiled::VEC_SPLIT_WORKGROUPS, tiled::VEC_MIN_CHUNK),
    };
    let by_k = k / min_chunk;
    // The partial sums must stay addressable with 32-bit indices.
    let by_index = usize::try_from(u32::MAX).unwrap_or(usize::MAX) / out_numel.max(1);
    let want = target.div_ceil(workgroups.max(1));
    let s = want.min(by_k).min(by_index).min(MAX_SPLITS);
    if s <= 1 {
        return (1, k);
    }
    let kc = k.div_ceil(s).next_multiple_of(16);
    (k.div_ceil(kc), kc)
}

/// The kernel's [`GemmParams`] (see `linalg_common.wgsl`) for the dispatch whose first tiles are
/// (`m0`, `n0`, `z0`): scalars, then batch dims and per-operand batch strides (collapsed).
fn gemm_params(g: &Gemm, split: &Split, variant: Variant, [m0, n0, z0]: [usize; 3]) -> Result<GemmParams> {
    let zero = vec![0; g.batch_dims.len()];
    let bias_batch = g.bias.as_ref().map_or(&zero, |b| &b.batch);
    let out_batch = strides(&g.batch_dims);
    let (dims, s) = collapse(&g.batch_dims, &[g.a.batch.clone(), g.b.batch.clone(), bias_batch.clone(), out_batch]);
    let batch_strides = |k: usize| vec4s::<2>(s.get(k).map_or(&[][..], |v| &v[..]), "batch strides");
    let (bias_rs, bias_cs) = g.bias.as_ref().map_or((0, 0), |b| (b.rs, b.cs));
    // Prefer the load order in which consecutive threads read consecutive addresses.
    let a_kfast = !(g.a.rs == 1 && g.a.cs != 1);
    let b_nfast = match variant {
        Variant::Skinny { nfast } => nfast,
        // Reads B along columns by construction.
        Variant::Gemv(_) => true,
        Variant::Tiled(_) | Variant::TiledVec(_) | Variant::Coop(_) | Variant::CoopVec(_) => {
            !(g.b.rs == 1 && g.b.cs != 1)
        }
    };
    Ok(GemmParams {
        m: u32_of(g.m, "rows")?,
        n: u32_of(g.n, "columns")?,
        k: u32_of(g.k, "contracted elements")?,
        batch_rank: u32_of(dims.len(), "batch dims")?,
        tile_m0: u32_of(m0, "row tiles")?,
        tile_n0: u32_of(n0, "column tiles")?,
        batch0: u32_of(z0, "batch matrices")?,
        a_kfast: u32::from(a_kfast),
        a_rs: u32_of(g.a.rs, "elements of the lhs row stride")?,
        a_cs: u32_of(g.a.cs, "elements of the lhs column stride")?,
        b_rs: u32_of(g.b.rs, "elements of the rhs row stride")?,
        b_cs: u32_of(g.b.cs, "elements of the rhs column stride")?,
        bias_rs: u32_of(bias_rs, "elements of the bias row stride")?,
        bias_cs: u32_of(bias_cs, "elements of the bias column stride")?,
        b_nfast: u32::from(b_nfast),
        nbatch: u32_of(split.nbatch, "batch matrices")?,
        kc: u32_of(split.kc, "elements of a K split")?,
        nsplit: u32_of(split.nsplit, "K splits")?,
        bdims: vec4s(&dims, "batch dims")?,
        a_bs: batch_strides(0)?,
        b_bs: batch_strides(1)?,
        bias_bs: batch_strides(2)?,
        ..GemmParams::default()
    })
}

/// Where DotGeneral's operand axes go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DotPlan {
    /// Output batch dims (order of `lhs_batch`).
    pub batch_dims: Vec<usize>,
    /// Product of the lhs free dims.
    pub m: usize,
    /// Product of the rhs free dims.
    pub n: usize,
    /// Product of the contracting dims.
    pub k: usize,
    /// lhs read as [batch, M, K].
    pub lhs: OperandPlan,
    /// rhs read as [batch, K, N].
    pub rhs: OperandPlan,
}

/// How one DotGeneral operand becomes a batched matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OperandPlan {
    /// Axis order [batch…, row axes…, column axes…] of this operand.
    pub perm: Vec<usize>,
    /// Number of batch axes and of row axes at the front of `perm` (the rest are columns).
    pub split: (usize, usize),
    /// Strides (batch strides, row stride, column stride) reading the operand in place, when
    /// its row axes and its column axes each merge into one strided axis; `None` when it must be
    /// copied into `perm` order first.
    pub view: Option<(Vec<usize>, usize, usize)>,
}

/// `v[a]` for each of `axes`, or an `Axis` error.
fn pick(v: &[usize], axes: &[usize]) -> Result<Vec<usize>> {
    axes.iter()
        .map(|&a| match v.get(a) {
            Some(&x) => Ok(x),
            None => bail!(Axis, "axis {a} out of range for rank {}", v.len()),
        })
        .collect()
}

/// Pure bookkeeping of DotGeneral: lhs is read as [batch, lhs free (M), contract (K)] and rhs as
/// [batch, contract (K), rhs free (N)], so the GEMM output is already [batch, lhs free, rhs free].
pub(crate) fn plan_dot_general(ld: &[usize], rd: &[usize], at: &DotGeneralAttrs) -> Result<DotPlan> {
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank).filter(|a| !batch.contains(a) && !contract.contains(a)).collect()
    };
    let lfree = free(ld.len(), &at.lhs_batch, &at.lhs_contract);
    let rfree = free(rd.len(), &at.rhs_batch, &at.rhs_contract);
    let prod = |dims: &[usize], axes: &[usize]| -> Result<usize> { try_numel(&pick(dims, axes)?) };
    Ok(DotPlan {
        batch_dims: pick(ld, &at.lhs_batch)?,
        m: prod(ld, &lfree)?,
        n: prod(rd, &rfree)?,
        k: prod(ld, &at.lhs_contract)?,
        lhs: operand_plan(ld, &at.lhs_batch, &lfree, &at.lhs_contract)?,
        rhs: operand_plan(rd, &at.rhs_batch, &at.rhs_contract, &rfree)?,
    })
}

fn operand_plan(dims: &[usize], batch: &[usize], rows: &[usize], cols: &[usize]) -> Result<OperandPlan> {
    let perm: Vec<usize> = batch.iter().chain(rows).chain(cols).copied().collect();
    let st = strides(dims);
    let group = |axes: &[usize]| -> Result<Option<usize>> { Ok(merged_stride(&pick(dims, axes)?, &pick(&st, axes)?)) };
    let view = match (group(rows)?, group(cols)?) {
        (Some(rs), Some(cs)) => Some((pick(&st, batch)?, rs, cs)),
        _ => None,
    };
    Ok(OperandPlan { perm, split: (batch.len(), rows.len()), view })
}

/// The stride of a group of axes with `dims` and strides `st` (in that order) read as one
/// flattened axis, if they merge: every non-unit axis must step exactly over the next one. Unit
/// axes never move; an empty or all-unit group has size 1 and any stride (0).
fn merged_stride(dims: &[usize], st: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    let live: Vec<(usize, usize)> = dims.iter().zip(st).filter(|(&d, _)| d != 1).map(|(&d, &s)| (d, s)).collect();
    let merges = live.windows(2).all(|w| matches!(w, [(_, s0), (d1, s1)] if *s0 == s1 * d1));
    merges.then(|| live.last().map_or(0, |&(_, s)| s))
}

/// How the GEMM reads DotGeneral operand `x` planned as `p`: in place when its axes merge, else
/// from a scratch copy in `perm` order.
fn dot_operand(b: &mut Lower<'_>, x: &Operand, p: &OperandPlan, plan: &DotPlan) -> Result<Strided> {
    if plan.k == 0 {
        // Empty operand, never read (see `gemm`): no copy.
        return Ok(Strided { window: x.window, batch: vec![0; plan.batch_dims.len()], rs: 0, cs: 0 });
    }
    if let Some((batch, rs, cs)) = &p.view {
        return Ok(Strided { window: x.window, batch: batch.clone(), rs: *rs, cs: *cs });
    }
    let t = b.temp(x.dtype, pick(&x.dims, &p.perm)?)?;
    permute(b, x, &p.perm, &t)?;
    contiguous_operand(t.window, &x.dims, p)
}

/// The strides of an operand copied contiguously in `perm` order into `window`.
fn contiguous_operand(window: Window, dims: &[usize], p: &OperandPlan) -> Result<Strided> {
    let pd = pick(dims, &p.perm)?;
    let (nb, nr) = p.split;
    let Some((bd, rest)) = pd.split_at_checked(nb) else { bail!(Axis, "{nb} batch axes of {pd:?}") };
    let Some((rd, cd)) = rest.split_at_checked(nr) else { bail!(Axis, "{nr} row axes of {rest:?}") };
    let (rows, cols) = (try_numel(rd)?, try_numel(cd)?);
    let matrix = try_numel(&[rows, cols])?;
    let batch = strides(bd).iter().map(|&s| try_numel(&[s, matrix])).collect::<Result<_>>()?;
    Ok(Strided { window, batch, rs: cols, cs: 1 })
}

/// Copies `x` into `out` (same dtype, `x`'s axes in `perm` order).
fn permute(b: &mut Lower<'_>, x: &Operand, perm: &[usize], out: &Operand) -> Result<()> {
    let n = x.numel();
    fits_u32(n, "elements of a DotGeneral operand")?;
    let pd = pick(&x.dims, perm)?;
    let ps = pick(&strides(&x.dims), perm)?;
    ensure!(
        out.dtype == x.dtype && out.dims == pd,
        Shape,
        "a {:?} copy of {:?} cannot fill {:?}",
        perm,
        x.dims,
        out.dims
    );
    let (cd, cs) = collapse(&pd, &[ps]);
    let p = DotPermuteParams {
        n: u32_of(n, "elements")?,
        rank: u32_of(cd.len(), "dims")?,
        dims: vec4s(&cd, "dims of a DotGeneral operand")?,
        strides: vec4s(cs.first().map_or(&[][..], |s| &s[..]), "strides of a DotGeneral operand")?,
        ..DotPermuteParams::default()
    };
    let source = permute_module(x.dtype).map_err(|e| Error::new(ErrorKind::Device, e))?;
    b.zero_if_packed(out)?;
    b.push(Kernel {
        source,
        bindings: vec![(x.window, BindKind::Read), (out.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: threads(n)?,
        flops: None,
    });
    Ok(())
}

mod gemv;
mod tiled;

#[cfg(test)]
mod tests;
