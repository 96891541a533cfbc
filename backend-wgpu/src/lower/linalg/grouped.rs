//! GroupedMatMul (§2.6.4) with the grouping done on the device (the expert ids are never read
//! on the host):
//!
//! 1. `count`: each row resolves its expert (§1.6) and takes a slot of it (atomic counts);
//! 2. `scan`: the first row tile of each expert in a padded layout where every expert's rows
//!    fill whole tiles of P rows (`linalg_grouped_common.wgsl`);
//! 3. `tiles`: each tile's weight offset (its expert's matrix), every padded row marked empty;
//! 4. `place`: each row's padded position and the source row of each used padded row;
//! 5. a copy of x's rows into the padded layout (empty rows read zero): whole words where rows
//!    are whole words, else an element Gather;
//! 6. the grouped GEMM: the dense GEMM kernel of the variant the product would get, run over the
//!    tiles as a batch of `[P, K] x [K, N]` products whose weight offsets come from step 3;
//! 7. the same row move of the products back to the row order (rows of an out-of-range expert
//!    read zero).
//!
//! Every buffer is sized from the static shapes: the tiles in use never exceed
//! `T = min(M, M / P + min(E, M))` (each expert with rows wastes less than one tile, and each
//! tile in use holds a row). P is the row tile of the variant the dense `[M, K] x [K, N]`
//! product gets (the tensor-core kernel for F16 where the device has one, else the tiled
//! ones), so that big groups run at the dense kernel's speed with at most E partly filled
//! tiles; for at most 8 rows (decode) P = 1 and each row is one GEMV of its expert's matrix.
//!
//! Steps 1–4 (`group_rows`) and the row moves (`move_rows`) are shared with
//! QuantGroupedMatMul (`quant_grouped.rs`), whose tile table holds expert ids instead of weight
//! offsets.

use super::super::builder::{u32_of, Kernel, Lower, Operand};
use super::super::{indexing, Grid};
use super::{check_types, choose_variant, gemm_as, Gemm, Strided, SKINNY_MAX_ROWS};
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::op::{GroupedMatMulAttrs, Op};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::linalg::grouped::{
    count_module, place_module, rows_module, scan_module, tiles_module, GroupParams, GroupRowsParams, SCAN_THREADS,
};
use shaders::linalg::{Epilogue, Variant};
use shaders::params::Params;

/// GroupedMatMul of `x` `[M, K]`, `w` `[E, K, N]` and `expert` `[M]` (index dtype) into `out`
/// `[M, N]`.
pub fn grouped_matmul(b: &mut Lower<'_>, x: &Operand, w: &Operand, expert: &Operand, out: &Operand) -> Result<()> {
    check_types(&Op::GroupedMatMul(GroupedMatMulAttrs {}), &[x, w, expert], out)?;
    let (&[m, k], &[e, _, n]) = (x.dims.as_slice(), w.dims.as_slice()) else {
        bail!(Shape, "GroupedMatMul needs x [M, K] and w [E, K, N], got {:?} and {:?}", x.dims, w.dims);
    };
    if out.numel() == 0 {
        return Ok(());
    }
    if e == 0 || k == 0 {
        // Every row out of range, or every sum empty.
        return b.zero(out);
    }
    let (variant, rows) = plan(b.caps(), x, w, [m, n, k])?;
    let kn = checked(k, n, "elements of an expert's weight")?;
    let Grouping { tiles, padded, table: boff, src, pos } = group_rows(b, expert, e, rows, kn)?;
    // 5.–7. Sorted rows, their products, and the products in row order.
    let xs = b.temp(x.dtype, vec![padded, k])?;
    move_rows(b, x, &src, &xs)?;
    let ys = b.temp(out.dtype, vec![padded, n])?;
    let g = Gemm {
        dtype: out.dtype,
        batch_dims: vec![tiles],
        m: rows,
        n,
        k,
        a: Strided { window: xs.window, batch: vec![checked(rows, k, "elements of a row tile")?], rs: k, cs: 1 },
        b: Strided { window: w.window, batch: vec![kn], rs: n, cs: 1 },
        bias: None,
    };
    gemm_as(b, &g, variant, Epilogue::Store, &ys, Some(boff.window))?;
    move_rows(b, &ys, &pos, out)
}

/// The tables of steps 1–4: how the rows of x sit in the padded layout of row tiles.
pub(super) struct Grouping {
    /// Row tiles of the padded layout (T, a bound on the tiles in use).
    pub tiles: usize,
    /// Rows of the padded layout (T · P).
    pub padded: usize,
    /// U32 `[T]`: `e · unit` for the expert e of each tile in use, 0 for the tiles past them.
    pub table: Operand,
    /// U32 `[T · P]`: the row of x of each padded row, `NONE` for padding.
    pub src: Operand,
    /// U32 `[M]`: the padded row of each row of x, `NONE` for a row of an out-of-range expert.
    pub pos: Operand,
}

/// Steps 1–4 for the expert ids `expert` (`[M]`, index dtype, M ≥ 1) of `e` ≥ 1 experts and tiles
/// of `rows` rows; `unit` scales the tile table (the elements of one expert's weight for the
/// grouped GEMM's weight offsets, 1 for expert ids).
pub(super) fn group_rows(b: &mut Lower<'_>, expert: &Operand, e: usize, rows: usize, unit: usize) -> Result<Grouping> {
    let &[m] = expert.dims.as_slice() else { bail!(Shape, "grouped matmul expert ids {:?} must be [M]", expert.dims) };
    ensure!(m > 0 && e > 0 && rows > 0, Shape, "grouping {m} rows over {e} experts in tiles of {rows} rows");
    let tiles = (m / rows).saturating_add(e.min(m)).min(m);
    let padded = checked(tiles, rows, "padded rows")?;
    let p = GroupParams {
        m: u32_of(m, "rows")?,
        e: u32_of(e, "experts")?,
        rows_per_tile: u32_of(rows, "rows per tile")?,
        tiles: u32_of(tiles, "row tiles")?,
        expert_elems: u32_of(unit, "the tile table's unit")?,
        padded_rows: u32_of(padded, "padded rows")?,
        chunk: u32_of(e.div_ceil(SCAN_THREADS as usize), "experts per scan invocation")?,
        ..GroupParams::default()
    };
    // Tile table entries e · unit with e < E must fit too.
    u32_of(checked(e, unit, "table entries")?, "table entries")?;
    let ids = (expert.window, BindKind::Read);
    // 1. Counts and slots.
    let counts = b.temp(DType::U32, vec![e])?;
    b.zero(&counts)?;
    let slot = b.temp(DType::U32, vec![m])?;
    let source = shader(count_module(expert.dtype))?;
    let bindings = vec![ids, (counts.window, BindKind::Write), (slot.window, BindKind::Write)];
    push(b, source, bindings, &p, threads(m)?);
    // 2. First tile of each expert, and the tiles in use.
    let tstart = b.temp(DType::U32, vec![e.saturating_add(1)])?;
    let bindings = vec![(counts.window, BindKind::Read), (tstart.window, BindKind::Write)];
    push(b, scan_module(), bindings, &p, Grid::Workgroups([1, 1, 1]));
    // 3. Table entry of each tile; empty padded rows.
    let table = b.temp(DType::U32, vec![tiles])?;
    let src = b.temp(DType::U32, vec![padded])?;
    let bindings =
        vec![(tstart.window, BindKind::Read), (table.window, BindKind::Write), (src.window, BindKind::Write)];
    push(b, tiles_module(), bindings, &p, threads(padded)?);
    // 4. Padded position of each row, source row of each used padded row.
    let pos = b.temp(DType::U32, vec![m])?;
    let bindings = vec![
        ids,
        (tstart.window, BindKind::Read),
        (slot.window, BindKind::Read),
        (pos.window, BindKind::Write),
        (src.window, BindKind::Write),
    ];
    push(b, shader(place_module(expert.dtype))?, bindings, &p, threads(m)?);
    Ok(Grouping { tiles, padded, table, src, pos })
}

/// The GEMM variant of the grouped product and its rows per tile P: for at most
/// [`SKINNY_MAX_ROWS`] rows, the variant of a batch of M one-row products (P = 1); else the
/// variant of the dense `[M, K] x [K, N]` product, P its row tile.
fn plan(caps: &DeviceCaps, x: &Operand, w: &Operand, [m, n, k]: [usize; 3]) -> Result<(Variant, usize)> {
    let kn = checked(k, n, "elements of an expert's weight")?;
    let rows = if m <= SKINNY_MAX_ROWS { 1 } else { m };
    let probe = Gemm {
        dtype: x.dtype,
        batch_dims: vec![m / rows],
        m: rows,
        n,
        k,
        a: Strided { window: x.window, batch: vec![checked(rows, k, "elements of x")?], rs: k, cs: 1 },
        b: Strided { window: w.window, batch: vec![kn], rs: n, cs: 1 },
        bias: None,
    };
    let variant = choose_variant(caps, &probe, m / rows)?;
    if rows == 1 {
        return Ok((variant, 1));
    }
    let tile = usize::try_from(variant.block(x.dtype).0).unwrap_or(usize::MAX);
    if tile == 0 {
        bail!(DeviceLimit, "the {variant:?} GEMM kernel has no rows per tile");
    }
    Ok((variant, tile))
}

/// `out` row r = `x` row `table[r]` (u32), zeros where the entry is not a row: one invocation per
/// word where rows are whole words (no zeroing pass, no atomics), else the element Gather.
pub(super) fn move_rows(b: &mut Lower<'_>, x: &Operand, table: &Operand, out: &Operand) -> Result<()> {
    let (&[src_rows, width], &[rows, out_width]) = (x.dims.as_slice(), out.dims.as_slice()) else {
        bail!(Shape, "GroupedMatMul row move of {:?} into {:?}", x.dims, out.dims);
    };
    let row_bytes = checked(width, x.dtype.size(), "bytes of a row")?;
    let whole = row_bytes.is_multiple_of(4)
        && x.window.offset.is_multiple_of(4)
        && out.window.offset.is_multiple_of(4)
        && src_rows > 0
        && width == out_width
        && x.dtype == out.dtype
        && table.dtype == DType::U32
        && table.numel() == rows;
    if !whole {
        return indexing::gather(b, 0, x, table, out);
    }
    let row_words = row_bytes / 4;
    let words = checked(rows, row_words, "words of the rows moved")?;
    if words == 0 {
        return Ok(());
    }
    let p = GroupRowsParams {
        words: u32_of(words, "words of the rows moved")?,
        row_words: u32_of(row_words, "words per row")?,
        src_rows: u32_of(src_rows, "rows")?,
        ..GroupRowsParams::default()
    };
    let bindings = vec![(x.window, BindKind::Read), (table.window, BindKind::Read), (out.window, BindKind::Write)];
    b.push(Kernel { source: rows_module(), bindings, params: p.to_bytes(), grid: threads(words)?, flops: None });
    Ok(())
}

fn checked(a: usize, b: usize, what: &str) -> Result<usize> {
    match a.checked_mul(b) {
        Some(v) => Ok(v),
        None => bail!(DeviceLimit, "GroupedMatMul: {a} x {b} {what} overflow the address space"),
    }
}

fn shader(r: std::result::Result<String, String>) -> Result<String> {
    r.map_err(|e| Error::new(ErrorKind::Device, format!("GroupedMatMul shader: {e}")))
}

fn threads(n: usize) -> Result<Grid> {
    match u64::try_from(n) {
        Ok(n) => Ok(Grid::Threads(n)),
        Err(_) => bail!(DeviceLimit, "GroupedMatMul: {n} invocations do not fit 64 bits"),
    }
}

fn push(b: &mut Lower<'_>, source: String, bindings: Vec<(super::Window, BindKind)>, p: &GroupParams, grid: Grid) {
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
}

#[cfg(test)]
mod tests;
