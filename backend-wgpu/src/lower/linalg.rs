//! MatMul, FusedMatMulBiasAct and DotGeneral: one tiled GEMM kernel (`shaders::matmul`) that
//! reads each operand through strides, so that broadcast batch dims, transposed layouts and
//! DotGeneral axis orders need no copy whenever the operand's row axes and column axes each
//! merge into one strided axis. Only DotGeneral operands whose axes do not merge (e.g. contracting
//! axes listed out of memory order) are first reordered into a scratch buffer by a strided copy.

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::{collapse, push_u32_array, Grid};
use crate::pipelines::BindKind;
use backend_api::op::{DotGeneralAttrs, Op};
use backend_api::shape::{broadcast_strides, strides};
use backend_api::{bail, DType, Error, ErrorKind, Result};
use shaders::matmul::{acc_dtype, module, permute_module, splitk_module, Epilogue, Tile, Variant};

/// Batched GEMMs with at least this many 128 x 128 tiles use the large tile (enough workgroups
/// to fill a big GPU several times over); smaller ones use 64 x 64 tiles for parallelism.
const LARGE_TILE_MIN_TILES: usize = 256;
/// More dispatches than this for one node means absurd sizes: refuse rather than record them.
const MAX_SPLIT_DISPATCHES: usize = 4096;
/// Products with at most this many rows (per batch matrix) use the skinny kernel.
const SKINNY_MAX_ROWS: usize = 8;
/// Split K until the skinny kernel has about this many workgroups (a few per SM of a big GPU)…
const SKINNY_TARGET_WORKGROUPS: usize = 1024;
/// …but keep at least this many k per split.
const SKINNY_MIN_CHUNK: usize = 256;
/// Split K until the tiled kernel has about this many workgroups…
const TILED_TARGET_WORKGROUPS: usize = 512;
/// …but keep at least this many k per split (each split costs a pass over the output).
const TILED_MIN_CHUNK: usize = 512;
/// At most this many K splits.
const MAX_SPLITS: usize = 64;

/// Lowers one node of this family.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    match &ctx.node.op {
        Op::MatMul => lower_matmul(ctx, Epilogue::Store),
        Op::FusedMatMulBiasAct { activation } => lower_matmul(ctx, Epilogue::BiasAct(*activation)),
        Op::DotGeneral(at) => lower_dot_general(ctx, at),
        other => bail!(Unsupported, "{} is not a linear-algebra op", backend_api::spec::op_label(other)),
    }
}

/// How the GEMM kernel reads one operand: element (β, r, c) is at
/// `Σ β_d · batch[d] + r · rs + c · cs` of `buf`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Operand {
    buf: Buf,
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
    a: Operand,
    b: Operand,
    bias: Option<Operand>,
}

fn lower_matmul(ctx: &LowerCtx<'_>, epi: Epilogue) -> Result<Lowered> {
    let (d, out_dims) = &ctx.outputs[0];
    let (ad, bd) = (&ctx.inputs[0].1, &ctx.inputs[1].1);
    if ad.len() < 2 || bd.len() < 2 || out_dims.len() < 2 {
        bail!(Shape, "MatMul operands must have rank >= 2, got {ad:?} and {bd:?}");
    }
    let r = out_dims.len();
    let (m, k, n) = (ad[ad.len() - 2], ad[ad.len() - 1], bd[bd.len() - 1]);
    let batch_dims = out_dims[..r - 2].to_vec();
    let mat_strides = |dims: &[usize], size: usize| -> Vec<usize> {
        broadcast_strides(&dims[..dims.len() - 2], &batch_dims).iter().map(|s| s * size).collect()
    };
    let a = Operand { buf: Buf::In(0), batch: mat_strides(ad, m * k), rs: k, cs: 1 };
    let b = Operand { buf: Buf::In(1), batch: mat_strides(bd, k * n), rs: n, cs: 1 };
    let bias = match epi {
        Epilogue::Store => None,
        Epilogue::BiasAct(_) => {
            let s = broadcast_strides(&ctx.inputs[2].1, out_dims);
            Some(Operand { buf: Buf::In(2), batch: s[..r - 2].to_vec(), rs: s[r - 2], cs: s[r - 1] })
        }
    };
    let gemm = Gemm { dtype: *d, batch_dims, m, n, k, a, b, bias };
    let mut temps = vec![];
    let kernels = gemm_kernels(ctx, &gemm, epi, &mut temps)?;
    Ok(Lowered::Kernels { temps, kernels })
}

/// The kernels of one GEMM writing output 0 (scratch buffers appended to `temps`): a zeroing
/// pass for packed dtypes, the product kernel (split into several dispatches when a grid axis
/// exceeds the device's limit) and, when K is split, the reduction of the partial sums.
fn gemm_kernels(ctx: &LowerCtx<'_>, g: &Gemm, epi: Epilogue, temps: &mut Vec<u64>) -> Result<Vec<Kernel>> {
    let batch: usize = g.batch_dims.iter().product();
    let out_numel = batch * g.m * g.n;
    if out_numel == 0 {
        return Ok(vec![]);
    }
    fits_u32(out_numel, "output elements")?;
    for (name, numel) in ctx.inputs.iter().map(|(_, s)| s.iter().product::<usize>()).enumerate() {
        fits_u32(numel, &format!("elements of input {name}"))?;
    }
    let variant = choose_variant(ctx, g, batch)?;
    let (bm, bn) = variant.block(g.dtype);
    let blocks = [g.n.div_ceil(bn as usize), g.m.div_ceil(bm as usize)];
    let (nsplit, kc) = choose_split(variant, g.k, blocks[0] * blocks[1] * batch, out_numel);
    let acc = acc_dtype(g.dtype);
    // Split-K: the product kernel writes partial sums to scratch and the reduction finishes.
    let (product_out, product_dtype, product_epi) = if nsplit > 1 {
        temps.push((nsplit * out_numel * acc.size()) as u64);
        (Buf::Temp(temps.len() - 1), acc, Epilogue::Store)
    } else {
        (Buf::Out(0), g.dtype, epi)
    };
    let source = render(module(g.dtype, product_dtype, variant, product_epi), g.dtype, epi)?;
    // With K = 0 the operands are empty and never read; bind the output in their place, since an
    // empty range is bound as 4 bytes, less than one element of an 8-byte dtype.
    let operand_buf = |o: &Operand| if g.k == 0 { Buf::Out(0) } else { o.buf };
    let mut bindings = vec![(operand_buf(&g.a), BindKind::Read), (operand_buf(&g.b), BindKind::Read)];
    if let (Some(bias), Epilogue::BiasAct(_)) = (&g.bias, product_epi) {
        bindings.push((bias.buf, BindKind::Read));
    }
    bindings.push((product_out, BindKind::Write));
    let mut kernels = Vec::new();
    if shaders::is_packed(g.dtype) {
        kernels.push(zero_kernel(Buf::Out(0), words(g.dtype, out_numel)));
    }
    let max = ctx.caps.limits.max_compute_workgroups_per_dimension.max(1) as usize;
    let grid = [blocks[0], blocks[1], nsplit * batch];
    let count: usize = grid.iter().map(|x| x.div_ceil(max)).product();
    if count > MAX_SPLIT_DISPATCHES {
        bail!(DeviceLimit, "a {}x{}x{} GEMM over {batch} batches needs {count} dispatches", g.m, g.n, g.k);
    }
    let split = Split { nbatch: batch, kc, nsplit };
    for z0 in (0..grid[2]).step_by(max) {
        for m0 in (0..grid[1]).step_by(max) {
            for n0 in (0..grid[0]).step_by(max) {
                let wg = [(grid[0] - n0).min(max), (grid[1] - m0).min(max), (grid[2] - z0).min(max)];
                kernels.push(Kernel {
                    source: source.clone(),
                    bindings: bindings.clone(),
                    params: gemm_params(g, &split, variant, [m0, n0, z0])?,
                    grid: Grid::Workgroups(wg.map(|x| x as u32)),
                });
            }
        }
    }
    if nsplit > 1 {
        kernels.push(splitk_kernel(g, &split, epi, product_out)?);
    }
    Ok(kernels)
}

/// How K is split: `nsplit` ranges of `kc` (the last may be shorter); `nbatch` batch matrices.
struct Split {
    nbatch: usize,
    kc: usize,
    nsplit: usize,
}

/// The reduction of split-K partial sums in `part`, with the node's epilogue.
fn splitk_kernel(g: &Gemm, split: &Split, epi: Epilogue, part: Buf) -> Result<Kernel> {
    let source = render(splitk_module(g.dtype, epi), g.dtype, epi)?;
    let mut bindings = vec![(part, BindKind::Read)];
    if let (Some(bias), Epilogue::BiasAct(_)) = (&g.bias, epi) {
        bindings.push((bias.buf, BindKind::Read));
    }
    bindings.push((Buf::Out(0), BindKind::Write));
    let out_numel = split.nbatch * g.m * g.n;
    let params = gemm_params(g, split, Variant::Tiled(Tile::Small), [0, 0, 0])?;
    Ok(Kernel { source, bindings, params, grid: Grid::Threads(out_numel as u64) })
}

fn render(src: Option<std::result::Result<String, String>>, d: DType, epi: Epilogue) -> Result<String> {
    let Some(src) = src else { bail!(Unsupported, "no GPU matmul kernel for {epi:?} on {d}") };
    src.map_err(|e| Error::new(ErrorKind::Device, e))
}

fn fits_u32(n: usize, what: &str) -> Result<()> {
    if u32::try_from(n).is_err() {
        bail!(DeviceLimit, "{n} {what} exceed the 32-bit indices of the GEMM kernel");
    }
    Ok(())
}

/// The skinny kernel for few rows; else the large tile for big float32-family problems on
/// devices with the workgroup memory for it; else the small tile.
fn choose_variant(ctx: &LowerCtx<'_>, g: &Gemm, batch: usize) -> Result<Variant> {
    if g.m <= SKINNY_MAX_ROWS {
        return Ok(Variant::Skinny { nfast: !(g.b.rs == 1 && g.b.cs != 1) });
    }
    let limit = u64::from(ctx.caps.limits.max_compute_workgroup_storage_size);
    let large_tiles = g.m.div_ceil(128) * g.n.div_ceil(128) * batch;
    let large_ok = g.dtype != DType::F64 && Tile::Large.workgroup_bytes(g.dtype) <= limit;
    if large_ok && g.m >= 128 && g.n >= 128 && large_tiles >= LARGE_TILE_MIN_TILES {
        return Ok(Variant::Tiled(Tile::Large));
    }
    if Tile::Small.workgroup_bytes(g.dtype) > limit {
        bail!(
            DeviceLimit,
            "the GEMM kernel needs {} bytes of workgroup memory, device allows {limit}",
            Tile::Small.workgroup_bytes(g.dtype)
        );
    }
    Ok(Variant::Tiled(Tile::Small))
}

/// Splits K over several workgroups when the output alone gives too few of them to fill a large
/// GPU and K is long enough for every split to stay efficient. Returns (nsplit, kc).
fn choose_split(variant: Variant, k: usize, workgroups: usize, out_numel: usize) -> (usize, usize) {
    let (target, min_chunk) = match variant {
        Variant::Skinny { .. } => (SKINNY_TARGET_WORKGROUPS, SKINNY_MIN_CHUNK),
        Variant::Tiled(_) => (TILED_TARGET_WORKGROUPS, TILED_MIN_CHUNK),
    };
    let by_k = k / min_chunk;
    // The partial sums must stay addressable with 32-bit indices.
    let by_index = (u32::MAX as usize) / out_numel.max(1);
    let want = target.div_ceil(workgroups.max(1));
    let s = want.min(by_k).min(by_index).min(MAX_SPLITS);
    if s <= 1 {
        return (1, k);
    }
    let kc = k.div_ceil(s).next_multiple_of(16);
    (k.div_ceil(kc), kc)
}

/// The kernel's params (see `matmul_common.wgsl`): scalars, then batch dims and per-operand
/// batch strides (collapsed).
fn gemm_params(g: &Gemm, split: &Split, variant: Variant, [m0, n0, z0]: [usize; 3]) -> Result<Vec<u8>> {
    let zero = vec![0; g.batch_dims.len()];
    let bias_batch = g.bias.as_ref().map_or(&zero, |b| &b.batch);
    let out_batch = strides(&g.batch_dims);
    let (dims, s) = collapse(&g.batch_dims, &[g.a.batch.clone(), g.b.batch.clone(), bias_batch.clone(), out_batch]);
    let (bias_rs, bias_cs) = g.bias.as_ref().map_or((0, 0), |b| (b.rs, b.cs));
    // Prefer the load order in which consecutive threads read consecutive addresses.
    let a_kfast = usize::from(!(g.a.rs == 1 && g.a.cs != 1));
    let b_nfast = match variant {
        Variant::Skinny { nfast } => usize::from(nfast),
        Variant::Tiled(_) => usize::from(!(g.b.rs == 1 && g.b.cs != 1)),
    };
    let scalars = [
        g.m,
        g.n,
        g.k,
        dims.len(),
        m0,
        n0,
        z0,
        a_kfast,
        g.a.rs,
        g.a.cs,
        g.b.rs,
        g.b.cs,
        bias_rs,
        bias_cs,
        b_nfast,
        split.nbatch,
        split.kc,
        split.nsplit,
        0,
        0,
    ];
    let mut params = Vec::with_capacity(192);
    push_u32_array(&mut params, &scalars, 5)?;
    push_u32_array(&mut params, &dims, 2)?;
    for st in &s[..3] {
        push_u32_array(&mut params, st, 2)?;
    }
    Ok(params)
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

/// Pure bookkeeping of DotGeneral: lhs is read as [batch, lhs free (M), contract (K)] and rhs as
/// [batch, contract (K), rhs free (N)], so the GEMM output is already [batch, lhs free, rhs free].
pub(crate) fn plan_dot_general(ld: &[usize], rd: &[usize], at: &DotGeneralAttrs) -> DotPlan {
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank).filter(|a| !batch.contains(a) && !contract.contains(a)).collect()
    };
    let lfree = free(ld.len(), &at.lhs_batch, &at.lhs_contract);
    let rfree = free(rd.len(), &at.rhs_batch, &at.rhs_contract);
    let prod = |dims: &[usize], axes: &[usize]| axes.iter().map(|&a| dims[a]).product::<usize>();
    DotPlan {
        batch_dims: at.lhs_batch.iter().map(|&a| ld[a]).collect(),
        m: prod(ld, &lfree),
        n: prod(rd, &rfree),
        k: prod(ld, &at.lhs_contract),
        lhs: operand_plan(ld, &at.lhs_batch, &lfree, &at.lhs_contract),
        rhs: operand_plan(rd, &at.rhs_batch, &at.rhs_contract, &rfree),
    }
}

fn operand_plan(dims: &[usize], batch: &[usize], rows: &[usize], cols: &[usize]) -> OperandPlan {
    let perm: Vec<usize> = batch.iter().chain(rows).chain(cols).copied().collect();
    let st = strides(dims);
    let view = match (merged_stride(dims, &st, rows), merged_stride(dims, &st, cols)) {
        (Some(rs), Some(cs)) => Some((batch.iter().map(|&a| st[a]).collect(), rs, cs)),
        _ => None,
    };
    OperandPlan { perm, split: (batch.len(), rows.len()), view }
}

/// The stride of `axes` (in that order) read as one flattened axis, if they merge: every
/// non-unit axis must step exactly over the next one. Unit axes never move; an empty or
/// all-unit group has size 1 and any stride (0).
fn merged_stride(dims: &[usize], st: &[usize], axes: &[usize]) -> Option<usize> {
    if axes.iter().any(|&a| dims[a] == 0) {
        return Some(0);
    }
    let live: Vec<usize> = axes.iter().copied().filter(|&a| dims[a] != 1).collect();
    let merges = live.windows(2).all(|w| st[w[0]] == st[w[1]] * dims[w[1]]);
    merges.then(|| live.last().map_or(0, |&a| st[a]))
}

fn lower_dot_general(ctx: &LowerCtx<'_>, at: &DotGeneralAttrs) -> Result<Lowered> {
    let d = ctx.outputs[0].0;
    let plan = plan_dot_general(&ctx.inputs[0].1, &ctx.inputs[1].1, at);
    let out_numel = ctx.out_numel(0);
    if out_numel == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    let mut temps = Vec::new();
    let mut kernels = Vec::new();
    let mut operand = |k: usize, p: &OperandPlan| -> Result<Operand> {
        let dims = &ctx.inputs[k].1;
        if plan.k == 0 {
            // Empty operand, never read (see `gemm_kernels`): no copy.
            return Ok(Operand { buf: Buf::In(k), batch: vec![0; plan.batch_dims.len()], rs: 0, cs: 0 });
        }
        if let Some((batch, rs, cs)) = &p.view {
            return Ok(Operand { buf: Buf::In(k), batch: batch.clone(), rs: *rs, cs: *cs });
        }
        let t = temps.len();
        let numel: usize = dims.iter().product();
        temps.push((numel * d.size()) as u64);
        kernels.extend(permute_kernels(d, dims, &p.perm, Buf::In(k), Buf::Temp(t))?);
        Ok(contiguous_operand(Buf::Temp(t), dims, p))
    };
    let a = operand(0, &plan.lhs)?;
    let b = operand(1, &plan.rhs)?;
    let gemm = Gemm { dtype: d, batch_dims: plan.batch_dims, m: plan.m, n: plan.n, k: plan.k, a, b, bias: None };
    kernels.extend(gemm_kernels(ctx, &gemm, Epilogue::Store, &mut temps)?);
    Ok(Lowered::Kernels { temps, kernels })
}

/// The strides of an operand copied contiguously in `perm` order.
fn contiguous_operand(buf: Buf, dims: &[usize], p: &OperandPlan) -> Operand {
    let pd: Vec<usize> = p.perm.iter().map(|&a| dims[a]).collect();
    let (nb, nr) = p.split;
    let cols: usize = pd[nb + nr..].iter().product();
    let rows: usize = pd[nb..nb + nr].iter().product();
    let batch = strides(&pd[..nb]).iter().map(|s| s * rows * cols).collect();
    Operand { buf, batch, rs: cols, cs: 1 }
}

/// Copies `src` (dims `dims`) into `dst` with its axes in `perm` order.
fn permute_kernels(d: DType, dims: &[usize], perm: &[usize], src: Buf, dst: Buf) -> Result<Vec<Kernel>> {
    let n: usize = dims.iter().product();
    fits_u32(n, "elements of a DotGeneral operand")?;
    let st = strides(dims);
    let pd: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
    let ps: Vec<usize> = perm.iter().map(|&a| st[a]).collect();
    let (cd, cs) = collapse(&pd, &[ps]);
    let mut params = Vec::with_capacity(80);
    push_u32_array(&mut params, &[n, cd.len(), 0, 0], 1)?;
    push_u32_array(&mut params, &cd, 2)?;
    push_u32_array(&mut params, cs.first().map_or(&[][..], |s| &s[..]), 2)?;
    let source = permute_module(d).map_err(|e| Error::new(ErrorKind::Device, e))?;
    let mut kernels = Vec::with_capacity(2);
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(dst, words(d, n)));
    }
    kernels.push(Kernel {
        source,
        bindings: vec![(src, BindKind::Read), (dst, BindKind::Write)],
        params,
        grid: Grid::Threads(n as u64),
    });
    Ok(kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralAttrs {
        DotGeneralAttrs {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        }
    }

    #[test]
    fn plain_matmul_is_a_view() {
        let p = plan_dot_general(&[3, 4], &[4, 5], &attrs(&[], &[], &[1], &[0]));
        assert_eq!((p.m, p.n, p.k), (3, 5, 4));
        assert_eq!(p.lhs.view, Some((vec![], 4, 1)));
        assert_eq!(p.rhs.view, Some((vec![], 5, 1)));
    }

    #[test]
    fn transposed_operands_are_views() {
        // lhs [K, M] contracted on axis 0, rhs [N, K] contracted on axis 1: A^T · B^T.
        let p = plan_dot_general(&[4, 3], &[5, 4], &attrs(&[], &[], &[0], &[1]));
        assert_eq!((p.m, p.n, p.k), (3, 5, 4));
        assert_eq!(p.lhs.view, Some((vec![], 1, 3)));
        assert_eq!(p.rhs.view, Some((vec![], 1, 4)));
    }

    #[test]
    fn batch_in_the_middle() {
        // lhs [M=2, B=3, K=4], rhs [B=3, K=4, N=5]: batch strides follow each operand's layout.
        let p = plan_dot_general(&[2, 3, 4], &[3, 4, 5], &attrs(&[1], &[0], &[2], &[1]));
        assert_eq!(p.batch_dims, vec![3]);
        assert_eq!((p.m, p.n, p.k), (2, 5, 4));
        assert_eq!(p.lhs.view, Some((vec![4], 12, 1)));
        assert_eq!(p.rhs.view, Some((vec![20], 5, 1)));
        assert_eq!(p.lhs.perm, vec![1, 0, 2]);
        assert_eq!(p.rhs.perm, vec![0, 1, 2]);
    }

    #[test]
    fn multi_axis_groups_merge_only_in_memory_order() {
        // Contracting axes (1, 2) of [2, 3, 4] merge; (2, 1) do not and need a copy.
        let ok = plan_dot_general(&[2, 3, 4], &[3, 4, 6], &attrs(&[], &[], &[1, 2], &[0, 1]));
        assert_eq!((ok.m, ok.n, ok.k), (2, 6, 12));
        assert_eq!(ok.lhs.view, Some((vec![], 12, 1)));
        assert_eq!(ok.rhs.view, Some((vec![], 6, 1)));
        let swapped = plan_dot_general(&[2, 3, 4], &[4, 3, 6], &attrs(&[], &[], &[2, 1], &[0, 1]));
        assert_eq!(swapped.lhs.view, None);
        assert_eq!(swapped.lhs.perm, vec![0, 2, 1]);
        assert_eq!(swapped.lhs.split, (0, 1));
        assert_eq!(swapped.rhs.view, Some((vec![], 6, 1)));
    }

    #[test]
    fn free_axes_split_by_a_contracting_axis_need_a_copy() {
        // lhs [2, 4, 3] with contract axis 1: free axes 0 and 2 are not adjacent in memory.
        let p = plan_dot_general(&[2, 4, 3], &[4, 5], &attrs(&[], &[], &[1], &[0]));
        assert_eq!((p.m, p.n, p.k), (6, 5, 4));
        assert_eq!(p.lhs.view, None);
        assert_eq!(p.lhs.perm, vec![0, 2, 1]);
        let c = contiguous_operand(Buf::Temp(0), &[2, 4, 3], &p.lhs);
        assert_eq!((c.rs, c.cs), (4, 1));
    }

    #[test]
    fn outer_product_and_unit_axes() {
        // No contracting axes: K = 1, any strides.
        let p = plan_dot_general(&[3], &[5], &attrs(&[], &[], &[], &[]));
        assert_eq!((p.m, p.n, p.k), (3, 5, 1));
        assert!(p.lhs.view.is_some() && p.rhs.view.is_some());
        // Unit axes never block a merge.
        let q = plan_dot_general(&[2, 1, 3, 4], &[4, 5], &attrs(&[], &[], &[3], &[0]));
        assert_eq!(q.lhs.view, Some((vec![], 4, 1)));
        assert_eq!(q.m, 6);
    }

    #[test]
    fn split_k_only_for_few_workgroups_and_long_k() {
        let skinny = Variant::Skinny { nfast: true };
        let tiled = Variant::Tiled(Tile::Small);
        assert_eq!(choose_split(skinny, 200, 2, 210), (1, 200));
        assert_eq!(choose_split(skinny, 1100, 2, 210), (4, 288));
        assert_eq!(choose_split(skinny, 4096, 64, 4096), (16, 256));
        assert_eq!(choose_split(skinny, 0, 1, 10), (1, 0));
        assert_eq!(choose_split(tiled, 1030, 4, 4225), (2, 528));
        assert_eq!(choose_split(tiled, 4096, 1024, 1 << 24), (1, 4096));
        // Every split is non-empty.
        for k in [513, 1000, 4097, 100_000] {
            let (s, kc) = choose_split(skinny, k, 1, 1);
            assert!(kc * (s - 1) < k && kc * s >= k, "k {k}: {s} x {kc}");
        }
    }

    #[test]
    fn contracting_dim_zero() {
        let p = plan_dot_general(&[3, 0], &[0, 5], &attrs(&[], &[], &[1], &[0]));
        assert_eq!((p.m, p.n, p.k), (3, 5, 0));
        assert!(p.lhs.view.is_some() && p.rhs.view.is_some());
    }
}
