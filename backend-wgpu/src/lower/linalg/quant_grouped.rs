//! QuantGroupedMatMul (§2.6.6): the device-side grouping of GroupedMatMul (`grouped.rs`, steps
//! 1–4) with row tiles of [`QUANT_ROWS`] rows, the rows of x moved into that padded layout, the
//! QuantMatMul kernel in its grouped form over the tiles (each workgroup's rows are one tile, and
//! it reads that tile's expert e from the tile table, so it decodes row `e · N + n` of the
//! weight inputs), and the products moved back to row order. The expert ids are never read on
//! the host and the weight stays in its quantised bytes (no dequantised copy). Rows of an
//! out-of-range expert (§1.6) come back as zero rows; E = 0 or K = 0 is one zeroing pass.

use super::super::builder::{product_flops, u32_of, Kernel, Lower, Operand};
use super::grouped::{group_rows, move_rows, Grouping};
use super::quant::params;
use crate::pipelines::BindKind;
use backend_api::op::QuantFormat;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::linalg::quant::{grouped_module_for, QUANT_ROWS};
use shaders::params::Params;

/// `out[m] = x[m] · W_eᵀ` for `e` the resolved `expert[m]`, where `W_e` is expert e's slice of
/// the weight inputs `ws` (each `[E, …]`, in the format's order) stored in `format`; `x` is
/// `[M, K]`, `expert` `[M]` of an index dtype and `out` `[M, N]` of x's dtype.
pub fn quant_grouped_matmul(
    b: &mut Lower<'_>,
    format: QuantFormat,
    x: &Operand,
    ws: &[Operand],
    expert: &Operand,
    out: &Operand,
) -> Result<()> {
    let what = || {
        let dims: Vec<_> = ws.iter().map(|w| (w.dtype, w.dims.clone())).collect();
        format!(
            "QuantGroupedMatMul {} (x {}{:?}, weights {dims:?}, expert {}{:?})",
            format.name(),
            x.dtype,
            x.dims,
            expert.dtype,
            expert.dims
        )
    };
    lower(b, format, x, ws, expert, out).map_err(|err| err.context(what()))
}

/// [`quant_grouped_matmul`] without the context of its errors.
fn lower(
    b: &mut Lower<'_>,
    format: QuantFormat,
    x: &Operand,
    ws: &[Operand],
    expert: &Operand,
    out: &Operand,
) -> Result<()> {
    let [m, k, e, n, wrow] = dims(format, x, ws, expert, out)?;
    // The per-expert slices have the shapes QuantMatMul's weight inputs have; checking them
    // here reports a bad shape even where E, M or N is 0.
    let slices: Vec<Operand> = ws.iter().map(per_expert).collect();
    params(format, &slices, [m, n, k, wrow])?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    if e == 0 || k == 0 {
        // Every row out of range, or every sum empty.
        return b.zero(out);
    }
    for (i, w) in ws.iter().enumerate() {
        u32_of(w.numel(), &format!("elements of weight input {i}"))?;
    }
    // The kernel forms the row e · N + n of every weight input.
    u32_of(e.saturating_mul(n), "weight rows over every expert")?;
    let rows = usize::try_from(QUANT_ROWS).unwrap_or(usize::MAX);
    let Grouping { padded, table, src, pos, .. } = group_rows(b, expert, e, rows, 1)?;
    let p = params(format, &slices, [padded, n, k, wrow])?;
    let dtypes: Vec<_> = ws.iter().map(|w| w.dtype).collect();
    let Some(source) = grouped_module_for(format, x.dtype, &dtypes) else {
        bail!(Unsupported, "x must be F32, F16 or BF16")
    };
    let source = source.map_err(|err| Error::new(ErrorKind::DType, err))?;
    let xs = b.temp(x.dtype, vec![padded, k])?;
    move_rows(b, x, &src, &xs)?;
    let ys = b.temp(x.dtype, vec![padded, n])?;
    // Every element of ys is stored once, by an atomic OR for packed dtypes.
    b.zero_if_packed(&ys)?;
    let mut bindings = vec![(xs.window, BindKind::Read)];
    bindings.extend(ws.iter().map(|w| (w.window, BindKind::Read)));
    bindings.push((ys.window, BindKind::Write));
    bindings.push((table.window, BindKind::Read));
    let grid = b.workgroups(usize::try_from(p.groups).unwrap_or(usize::MAX))?;
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: product_flops(1, padded, n, k, 1) });
    move_rows(b, &ys, &pos, out)
}

/// `[M, K, E, N, bytes per row of w]` after checking the operands' ranks, dims and dtypes.
fn dims(format: QuantFormat, x: &Operand, ws: &[Operand], expert: &Operand, out: &Operand) -> Result<[usize; 5]> {
    let &[m, k] = x.dims.as_slice() else { bail!(Shape, "x must be [M, K]") };
    ensure!(ws.len() == format.num_weight_inputs(), Arity, "{} weight inputs", ws.len());
    let Some(&[e, n, wrow]) = ws.first().map(|w| w.dims.as_slice()) else { bail!(Shape, "w must be [E, N, bytes]") };
    ensure!(ws.iter().all(|w| w.dims.first() == Some(&e)), Shape, "weight inputs disagree on E");
    ensure!(expert.dims == [m], Shape, "expert must be [M]");
    ensure!(matches!(expert.dtype, DType::I32 | DType::I64 | DType::U32), DType, "expert must be I32, I64 or U32");
    ensure!(out.dims == [m, n], Shape, "out {:?} is not [M, N]", out.dims);
    ensure!(out.dtype == x.dtype, DType, "out is {}, not x's dtype", out.dtype);
    ensure!(matches!(x.dtype, DType::F32 | DType::F16 | DType::BF16), Unsupported, "x must be F32, F16 or BF16");
    Ok([m, k, e, n, wrow])
}

/// The shape of one expert's slice of a weight input (its window is the whole input: the view
/// only feeds the shape checks and params shared with QuantMatMul).
fn per_expert(w: &Operand) -> Operand {
    Operand { window: w.window, dtype: w.dtype, dims: w.dims.get(1..).unwrap_or(&[]).to_vec() }
}

#[cfg(test)]
mod tests;
