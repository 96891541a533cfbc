//! Reduce (§2.5.1): Sum, Mean, Max, Min, Prod over any set of axes, with `shaders::reduce`.
//!
//! The input's axes are split into kept axes (one output row per kept position) and reduced axes
//! (the row's elements), merging neighbours of the same kind, so any axis subset is addressed
//! through strides without a transpose. Short rows get one invocation per row; longer rows a
//! workgroup per row chunk with a tree reduction, and rows longer than one chunk are finished by
//! a second pass over the partials (which also keeps every workgroup's serial part short, so
//! float sums stay close to pairwise).

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::{push_u32_array, Grid};
use crate::pipelines::BindKind;
use backend_api::op::{Op, ReduceOp};
use backend_api::shape::strides;
use backend_api::{bail, DType, Error, ErrorKind, Result};
use shaders::reduce::{acc_dtype, module, supported, Layout, Stage};

/// Invocations per workgroup (`WG` in `common.wgsl`).
const WG: usize = 256;
/// Rows of at most this many elements are folded serially by one invocation.
const SHORT_ROW: usize = 64;
/// Elements one invocation folds serially in a row chunk (before the tree), at least.
const PER_THREAD: usize = 16;
/// Most chunks per row; the final pass folds that many partials in one chunk.
const MAX_CHUNKS: usize = WG * PER_THREAD;
/// Kernels index with u32 and add a chunk length to an index: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// Kept and reduced axes (merged), with their input strides.
#[derive(Debug, PartialEq)]
struct Geometry {
    kdims: Vec<usize>,
    kstr: Vec<usize>,
    rdims: Vec<usize>,
    rstr: Vec<usize>,
}

impl Geometry {
    fn rows(&self) -> usize {
        self.kdims.iter().product()
    }
    fn red(&self) -> usize {
        self.rdims.iter().product()
    }
}

/// Splits `dims` into kept and reduced axes; size-1 axes are dropped and an axis merges into the
/// previous one of its kind when they are adjacent in memory.
fn geometry(dims: &[usize], axes: &[usize]) -> Geometry {
    let st = strides(dims);
    let mut g = Geometry { kdims: vec![], kstr: vec![], rdims: vec![], rstr: vec![] };
    for (k, (&d, &s)) in dims.iter().zip(&st).enumerate() {
        if d == 1 {
            continue;
        }
        let (gd, gs) = if axes.contains(&k) { (&mut g.rdims, &mut g.rstr) } else { (&mut g.kdims, &mut g.kstr) };
        match (gd.last_mut(), gs.last_mut()) {
            (Some(ld), Some(ls)) if *ls == s * d => {
                *ld *= d;
                *ls = s;
            }
            _ => {
                gd.push(d);
                gs.push(s);
            }
        }
    }
    g
}

/// A 2-D workgroup grid of at least `n` workgroups (kernels bounds-check `wid.x + wid.y·nwg.x`).
pub(super) fn workgroup_grid(ctx: &LowerCtx<'_>, n: usize) -> Result<Grid> {
    let max = (ctx.caps.limits.max_compute_workgroups_per_dimension as usize).max(1);
    let x = n.clamp(1, max);
    let y = n.div_ceil(x).max(1);
    if y > max {
        bail!(DeviceLimit, "{n} workgroups exceed the device's {max}x{max} grid");
    }
    Ok(Grid::Workgroups([x as u32, y as u32, 1]))
}

fn to_u32(v: usize) -> Result<usize> {
    if u32::try_from(v).is_err() {
        bail!(DeviceLimit, "{v} does not fit the kernel's 32-bit indices");
    }
    Ok(v)
}

/// The uniform params: rows, red, chunks, chunk_len, count, nk, nr, then the four dim arrays.
fn params(g: &Geometry, chunks: usize, chunk_len: usize, count: usize) -> Result<Vec<u8>> {
    let mut p = Vec::new();
    push_u32_array(&mut p, &[g.rows(), g.red(), chunks, chunk_len], 1)?;
    push_u32_array(&mut p, &[to_u32(count)?, g.kdims.len(), g.rdims.len(), 0], 1)?;
    for a in [&g.kdims, &g.kstr, &g.rdims, &g.rstr] {
        push_u32_array(&mut p, a, 2)?;
    }
    Ok(p)
}

fn kernel(
    op: ReduceOp,
    d: DType,
    stage: Stage,
    layout: Layout,
    io: (Buf, Buf),
    params: Vec<u8>,
    grid: Grid,
) -> Result<Kernel> {
    let Some(src) = module(op, d, stage, layout) else {
        bail!(Unsupported, "Reduce.{} is not defined for {d}", op.name());
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("reduce shader: {e}")))?;
    Ok(Kernel { source, bindings: vec![(io.0, BindKind::Read), (io.1, BindKind::Write)], params, grid })
}

/// Lowers a Reduce node.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    let Op::Reduce(a) = &ctx.node.op else {
        bail!(Unsupported, "{} is not a reduction", backend_api::spec::op_label(&ctx.node.op));
    };
    let (d, dims) = &ctx.inputs[0];
    let d = *d;
    if !supported(a.op, d) {
        bail!(Unsupported, "Reduce.{} is not defined for {d}", a.op.name());
    }
    let rows = ctx.out_numel(0);
    if rows == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    let g = geometry(dims, &a.axes);
    if g.red() == 1 && d != DType::Bool {
        // One element per row (no axes, or only size-1 axes): every op returns it unchanged.
        // (Not Bool: an input byte other than 0/1 must still come out as 1.)
        return Ok(Lowered::Alias(0));
    }
    let numel: usize = dims.iter().product();
    if numel >= MAX_ELEMENTS || rows >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Reduce input {dims:?} has more than 2^31 elements");
    }
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        // Before every pass: pass 1 of a two-pass reduction does not touch the output.
        kernels.push(zero_kernel(Buf::Out(0), words(d, rows)));
    }
    let temps = plan(ctx, a.op, d, &g, &mut kernels)?;
    Ok(Lowered::Kernels { temps, kernels })
}

/// Appends the reduction's kernels for geometry `g` (output rows ≥ 1); returns the temp sizes.
fn plan(ctx: &LowerCtx<'_>, op: ReduceOp, d: DType, g: &Geometry, kernels: &mut Vec<Kernel>) -> Result<Vec<u64>> {
    let (rows, red) = (g.rows(), g.red());
    let out = Buf::Out(0);
    if red == 0 {
        // Empty rows: every output is the identity and x is never read. x's binding is too small
        // for an 8-byte array (the planner binds 4 bytes for an empty tensor), so bind a scratch
        // buffer instead.
        let p = params(g, 1, 0, 0)?;
        kernels.push(kernel(op, d, Stage::Full, Layout::Threads, (Buf::Temp(0), out), p, Grid::Threads(rows as u64))?);
        return Ok(vec![16]);
    }
    let io = (Buf::In(0), out);
    if red <= SHORT_ROW {
        let p = params(g, 1, red, red)?;
        kernels.push(kernel(op, d, Stage::Full, Layout::Threads, io, p, Grid::Threads(rows as u64))?);
        return Ok(vec![]);
    }
    let per_thread = PER_THREAD.max(red.div_ceil(WG * MAX_CHUNKS));
    let chunk_len = WG * per_thread;
    let chunks = red.div_ceil(chunk_len);
    if chunks == 1 {
        let p = params(g, 1, chunk_len, red)?;
        kernels.push(kernel(op, d, Stage::Full, Layout::Rows, io, p, workgroup_grid(ctx, rows)?)?);
        return Ok(vec![]);
    }
    // Pass 1: rows × chunks partials in the accumulator dtype; pass 2 folds each row's partials
    // (at most MAX_CHUNKS = one chunk of the final pass).
    let p1 = params(g, chunks, chunk_len, red)?;
    let grid1 = workgroup_grid(ctx, rows * chunks)?;
    kernels.push(kernel(op, d, Stage::Partial, Layout::Rows, (Buf::In(0), Buf::Temp(0)), p1, grid1)?);
    let g2 = Geometry { kdims: vec![rows], kstr: vec![chunks], rdims: vec![chunks], rstr: vec![1] };
    let p2 = params(&g2, 1, MAX_CHUNKS, red)?;
    kernels.push(kernel(op, d, Stage::Final, Layout::Rows, (Buf::Temp(0), out), p2, workgroup_grid(ctx, rows)?)?);
    Ok(vec![(rows * chunks * acc_dtype(d).size()) as u64])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_merges_neighbours_of_one_kind() {
        // [2, 3, 4, 5] reducing axes 1 and 2: kept [2] and [5], which are not adjacent in memory.
        let g = geometry(&[2, 3, 4, 5], &[1, 2]);
        assert_eq!(g, Geometry { kdims: vec![2, 5], kstr: vec![60, 1], rdims: vec![12], rstr: vec![5] });
        // Size-1 axes vanish and let their neighbours merge.
        let g = geometry(&[4, 1, 6, 7], &[0, 2]);
        assert_eq!(g, Geometry { kdims: vec![7], kstr: vec![1], rdims: vec![24], rstr: vec![7] });
        let g = geometry(&[4, 6, 7], &[0, 2]);
        assert_eq!(g, Geometry { kdims: vec![6], kstr: vec![7], rdims: vec![4, 7], rstr: vec![42, 1] });
        let g = geometry(&[3, 1, 5], &[0, 1]);
        assert_eq!(g, Geometry { kdims: vec![5], kstr: vec![1], rdims: vec![3], rstr: vec![5] });
        let g = geometry(&[3, 5], &[0, 1]);
        assert_eq!((g.rows(), g.red()), (1, 15));
        let g = geometry(&[3, 0], &[1]);
        assert_eq!((g.rows(), g.red()), (3, 0));
    }
}
