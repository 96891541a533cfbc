//! The reduce family (§2.5) on the builder, with `shaders::reduce`: Reduce (§2.5.1) here,
//! ArgMax/ArgMin (§2.5.2–2.5.3) in `arg.rs`, TopK (§2.5.4) in `topk.rs`, Cumsum/CumsumBackward
//! (§2.5.5–2.5.6) in `scan.rs`.
//!
//! Reduce splits the input's axes into kept axes (one output row per kept position) and reduced
//! axes (the row's elements), merging neighbours of the same kind, so any axis subset is addressed
//! through strides without a transpose. Short rows get one invocation per row; longer rows a
//! workgroup per row chunk with a tree reduction, and rows longer than one chunk are finished by
//! a second pass over the partials (which also keeps every workgroup's serial part short, so
//! float sums stay close to pairwise).
//!
//! The other ops work on rows along one axis: row `w = o·inner + j` is the `len` elements at
//! stride `inner` from `o·len·inner + j`, so any axis is addressed without a transpose.

mod arg;
mod scan;
mod topk;

pub use arg::{arg_max, arg_min};
pub use scan::{cumsum, cumsum_backward};
pub use topk::top_k;

// The random family's node-position lowering still takes its grids from here; it goes when that
// family moves to the builder (`Lower::workgroups`).

use super::builder::{u32_of, vec4s, Buf, Kernel, Lower, Operand, Window};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{ReduceAttrs, ReduceOp};
use backend_api::shape::strides;
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::params::Params;
use shaders::reduce::{acc_dtype, module, supported, Layout, ReduceParams, Stage};

/// Invocations per workgroup (`WG` in `common.wgsl`).
const WG: usize = 256;
/// Rows of at most this many elements are folded serially by one invocation (Reduce, arg-ops,
/// scans): a workgroup per row would leave most of its 256 invocations idle.
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
    // The kept and reduced dims split a tensor's dims, whose product the operand checked, so
    // these cannot overflow; saturating so that even a hand-made geometry cannot wrap.
    fn rows(&self) -> usize {
        self.kdims.iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }
    fn red(&self) -> usize {
        self.rdims.iter().fold(1usize, |n, &d| n.saturating_mul(d))
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

/// Reduce of `x` over `a.axes` into `out` (the kept dims, with or without size-1 reduced axes).
pub fn reduce(b: &mut Lower<'_>, a: &ReduceAttrs, x: &Operand, out: &Operand) -> Result<()> {
    let d = x.dtype;
    if !supported(a.op, d) {
        bail!(Unsupported, "Reduce.{} is not defined for {d}", a.op.name());
    }
    if let Some(k) = a.axes.iter().find(|&&k| k >= x.dims.len()) {
        bail!(Axis, "Reduce axis {k} out of range for shape {:?}", x.dims);
    }
    let g = geometry(&x.dims, &a.axes);
    let rows = out.numel();
    ensure!(
        out.dtype == d && g.rows() == rows,
        Shape,
        "Reduce.{} of {d}{:?} over {:?} cannot write {}{:?}",
        a.op.name(),
        x.dims,
        a.axes,
        out.dtype,
        out.dims
    );
    if rows == 0 {
        return Ok(());
    }
    // One element per row (no axes, or only size-1 axes): every op returns it unchanged. (Not
    // Bool: an input byte other than 0/1 must still come out as 1.) An output that cannot alias
    // (scratch) takes the one-invocation-per-row kernel below instead.
    if g.red() == 1 && d != DType::Bool && can_alias(out, x) {
        return b.alias(out, x);
    }
    if x.numel() >= MAX_ELEMENTS || rows >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Reduce input {:?} has more than 2^31 elements", x.dims);
    }
    // Before every pass: pass 1 of a two-pass reduction does not touch the output.
    b.zero_if_packed(out)?;
    plan(b, a.op, &g, x, out)
}

/// Whether `out` may be declared as `x`'s memory ([`Lower::alias`]'s conditions).
fn can_alias(out: &Operand, x: &Operand) -> bool {
    matches!(out.window.buf, Buf::Out(_)) && out.window.offset == 0 && !matches!(x.window.buf, Buf::Temp(_))
}

/// Appends the reduction's kernels for geometry `g` (output rows ≥ 1).
fn plan(b: &mut Lower<'_>, op: ReduceOp, g: &Geometry, x: &Operand, out: &Operand) -> Result<()> {
    let (rows, red, d) = (g.rows(), g.red(), x.dtype);
    if red == 0 {
        // Empty rows: every output is the identity and x is never read. x's binding is too small
        // for an 8-byte array (the planner binds 4 bytes for an empty tensor), so bind a scratch
        // buffer instead.
        let empty = b.temp_bytes(16);
        let v = (op, d, Stage::Full, Layout::Threads);
        return pass(b, v, (empty, out.window), &params(g, 1, 0, 0)?, threads(rows));
    }
    if red <= SHORT_ROW {
        let v = (op, d, Stage::Full, Layout::Threads);
        return pass(b, v, (x.window, out.window), &params(g, 1, red, red)?, threads(rows));
    }
    let per_thread = PER_THREAD.max(red.div_ceil(WG * MAX_CHUNKS));
    let chunk_len = WG * per_thread;
    let chunks = red.div_ceil(chunk_len);
    if chunks == 1 {
        let grid = b.workgroups(rows)?;
        let v = (op, d, Stage::Full, Layout::Rows);
        return pass(b, v, (x.window, out.window), &params(g, 1, chunk_len, red)?, grid);
    }
    // Pass 1: rows × chunks partials in the accumulator dtype; pass 2 folds each row's partials
    // (at most MAX_CHUNKS = one chunk of the final pass).
    let partials = b.temp(acc_dtype(d), vec![rows, chunks])?;
    let Some(groups) = rows.checked_mul(chunks) else {
        bail!(DeviceLimit, "{rows} rows of {chunks} chunks overflow the workgroup count");
    };
    let grid1 = b.workgroups(groups)?;
    let v1 = (op, d, Stage::Partial, Layout::Rows);
    pass(b, v1, (x.window, partials.window), &params(g, chunks, chunk_len, red)?, grid1)?;
    let g2 = Geometry { kdims: vec![rows], kstr: vec![chunks], rdims: vec![chunks], rstr: vec![1] };
    let grid2 = b.workgroups(rows)?;
    let v2 = (op, d, Stage::Final, Layout::Rows);
    pass(b, v2, (partials.window, out.window), &params(&g2, 1, MAX_CHUNKS, red)?, grid2)
}

/// The params of one pass over geometry `g`: `chunks` workgroups per row of `chunk_len`
/// elements; `count` is the original reduced count (Mean's divisor).
fn params(g: &Geometry, chunks: usize, chunk_len: usize, count: usize) -> Result<ReduceParams> {
    Ok(ReduceParams {
        rows: u32_of(g.rows(), "output rows")?,
        red: u32_of(g.red(), "reduced elements")?,
        chunks: u32_of(chunks, "row chunks")?,
        chunk_len: u32_of(chunk_len, "chunk elements")?,
        count: u32_of(count, "reduced elements")?,
        nk: u32_of(g.kdims.len(), "kept axes")?,
        nr: u32_of(g.rdims.len(), "reduced axes")?,
        kdims: vec4s(&g.kdims, "kept axes")?,
        kstr: vec4s(&g.kstr, "kept strides")?,
        rdims: vec4s(&g.rdims, "reduced axes")?,
        rstr: vec4s(&g.rstr, "reduced strides")?,
        ..ReduceParams::default()
    })
}

/// One pass of variant `(op, dtype, stage, layout)` reading `io.0` and writing `io.1`.
fn pass(
    b: &mut Lower<'_>,
    (op, d, stage, layout): (ReduceOp, DType, Stage, Layout),
    io: (Window, Window),
    p: &ReduceParams,
    grid: Grid,
) -> Result<()> {
    let Some(src) = module(op, d, stage, layout) else {
        bail!(Unsupported, "Reduce.{} is not defined for {d}", op.name());
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("reduce shader: {e}")))?;
    let bindings = vec![(io.0, BindKind::Read), (io.1, BindKind::Write)];
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

/// One invocation per item (`usize` → `u64` is lossless on every target wgpu runs on).
fn threads(n: usize) -> Grid {
    Grid::Threads(u64::try_from(n).unwrap_or(u64::MAX))
}

/// (outer, len, inner) around `axis` of `dims`.
fn around(dims: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    if axis >= dims.len() {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}");
    }
    let (Some(head), Some(tail), Some(&len)) = (dims.get(..axis), dims.get(axis + 1..), dims.get(axis)) else {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}")
    };
    Ok((try_numel(head)?, len, try_numel(tail)?))
}

/// Rejects tensors the u32 indexing of the kernels cannot address.
fn check_size(what: &str, dims: &[usize]) -> Result<()> {
    let n = try_numel(dims)?;
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{what} {dims:?} has more than 2^31 elements");
    }
    Ok(())
}

/// The rendered module, or `Unsupported` when the family has no variant for `d`, or a `Device`
/// error when rendering failed.
fn shader(what: &str, src: Option<std::result::Result<String, String>>, d: DType) -> Result<String> {
    match src {
        Some(s) => s.map_err(|e| Error::new(ErrorKind::Device, format!("{what} shader: {e}"))),
        None => bail!(Unsupported, "no GPU kernel for {what} on {d}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceCaps;
    use crate::lower::Lowering;
    use backend_api::op::{ArgReduceAttrs, CumsumAttrs, TopKAttrs};

    fn caps() -> DeviceCaps {
        crate::device::DeviceCaps::for_tests()
    }

    fn operand(buf: Buf, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(buf, d, dims.to_vec()).unwrap()
    }

    /// Lowers with `f` on a builder for a node with `outputs` outputs.
    fn lowering(outputs: usize, f: impl FnOnce(&mut Lower<'_>) -> Result<()>) -> Result<Lowering> {
        let caps = caps();
        let mut b = Lower::new(&caps, outputs);
        f(&mut b)?;
        Ok(b.finish())
    }

    fn sum(axes: Vec<usize>) -> ReduceAttrs {
        ReduceAttrs { op: ReduceOp::Sum, axes, keep_dims: false }
    }

    #[test]
    fn long_packed_rows_zero_then_reduce_in_two_passes() {
        let x = operand(Buf::In(0), DType::F16, &[2, 150_000]);
        let out = operand(Buf::Out(0), DType::F16, &[2]);
        let l = lowering(1, |b| reduce(b, &sum(vec![1]), &x, &out)).unwrap();
        assert_eq!(l.kernels().len(), 3, "zero, partials, final");
        assert_eq!(l.kernels()[0].bindings, vec![(out.window, BindKind::Write)]);
        // 150 000 elements in chunks of 4096: 37 f32 partials per row
        assert_eq!(l.temps, vec![2 * 37 * 4]);
        assert_eq!(l.kernels()[1].grid, Grid::Workgroups([74, 1, 1]));
        assert_eq!(l.kernels()[2].bindings[0].0.buf, Buf::Temp(0));
        assert_eq!(l.kernels()[2].params.len(), std::mem::size_of::<ReduceParams>());
    }

    #[test]
    fn one_element_rows_alias_a_node_output_and_run_a_kernel_into_scratch() {
        let x = operand(Buf::In(0), DType::F32, &[3, 1]);
        let out = operand(Buf::Out(0), DType::F32, &[3]);
        let l = lowering(1, |b| reduce(b, &sum(vec![1]), &x, &out)).unwrap();
        assert!(l.kernels().is_empty() && l.aliases == vec![Some(x.window)]);
        let l = lowering(1, |b| {
            let t = b.temp(DType::F32, vec![3])?;
            reduce(b, &sum(vec![1]), &x, &t)
        })
        .unwrap();
        assert_eq!(l.kernels().len(), 1);
        assert_eq!(l.kernels()[0].grid, Grid::Threads(3));
        let bad = operand(Buf::Out(0), DType::F32, &[4]);
        assert!(lowering(1, |b| reduce(b, &sum(vec![1]), &x, &bad)).is_err(), "wrong output rows");
        assert!(lowering(1, |b| reduce(b, &sum(vec![2]), &x, &out)).is_err(), "axis out of range");
    }

    #[test]
    fn arg_and_scan_pick_their_layouts_by_row_length() {
        let a = ArgReduceAttrs { axis: 1, keep_dims: false, index_dtype: DType::I32 };
        for (len, grid) in [(64, Grid::Threads(5)), (65, Grid::Workgroups([5, 1, 1]))] {
            let x = operand(Buf::In(0), DType::F32, &[5, len]);
            let out = operand(Buf::Out(0), DType::I32, &[5]);
            let l = lowering(1, |b| arg_max(b, &a, &x, &out)).unwrap();
            assert_eq!((l.kernels().len(), l.kernels()[0].grid), (1, grid));
        }
        let c = CumsumAttrs { axis: 0, exclusive: false, reverse: false };
        let x = operand(Buf::In(0), DType::U8, &[600, 2]);
        let out = operand(Buf::Out(0), DType::U8, &[600, 2]);
        let l = lowering(1, |b| cumsum(b, &c, &x, &out)).unwrap();
        // zero, block scans, block prefixes, combine; in-block scans and 3 block totals per row
        assert_eq!(l.kernels().len(), 4);
        assert_eq!(l.temps, vec![600 * 2 * 4, 2 * 3 * 4]);
        let short = operand(Buf::In(0), DType::F32, &[64]);
        let l = lowering(1, |b| cumsum_backward(b, &c, &short, &operand(Buf::Out(0), DType::F32, &[64]))).unwrap();
        assert_eq!((l.kernels().len(), l.temps.len()), (1, 0));
    }

    #[test]
    fn long_top_k_rows_sort_over_temps() {
        let a = TopKAttrs { k: 5, axis: 0, largest: true, index_dtype: DType::I32 };
        let x = operand(Buf::In(0), DType::F32, &[3000]);
        let (v, i) = (operand(Buf::Out(0), DType::F32, &[5]), operand(Buf::Out(1), DType::I32, &[5]));
        let l = lowering(2, |b| top_k(b, &a, &x, &v, &i)).unwrap();
        // 4096 slots: init, local sort of 2048-blocks, one global step and one local pass, out
        assert_eq!(l.kernels().len(), 5);
        assert_eq!(l.temps, vec![4096 * 4, 4096 * 4]);
        let mut small = caps();
        small.limits.max_compute_workgroup_storage_size = 8192;
        let mut b = Lower::new(&small, 2);
        let e = top_k(&mut b, &a, &x, &v, &i).unwrap_err();
        assert_eq!(e.kind(), backend_api::ErrorKind::DeviceLimit);
        let big = TopKAttrs { k: 3001, ..a };
        assert!(lowering(2, |b| top_k(b, &big, &x, &v, &i)).is_err(), "k beyond the axis");
    }

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

    #[test]
    fn around_any_axis() {
        assert_eq!(around(&[2, 3, 4], 0).unwrap(), (1, 2, 12));
        assert_eq!(around(&[2, 3, 4], 1).unwrap(), (2, 3, 4));
        assert_eq!(around(&[2, 3, 4], 2).unwrap(), (6, 4, 1));
        assert!(around(&[2], 1).is_err());
    }
}
