//! Cumsum / CumsumBackward (§2.5.5–2.5.6) along any axis as a blocked tree scan in three passes:
//! (1) a workgroup per (row, block of 256) scans its block into a temp in the accumulator type and
//! writes the block total; (2) a workgroup per row turns the totals into exclusive block prefixes;
//! (3) an invocation per element adds its block prefix and stores. Every prefix is a sum tree of
//! depth ~log2(len) plus a short serial run, so float error stays at the (M)-scaled Approx class
//! for long axes, and integer sums wrap exactly. Rows of at most `SHORT_ROW` elements are scanned
//! serially by one invocation each (a short serial sum is as accurate, and needs no temps).
//! Pass 2's serial runs are ceil(nb / 256) block totals long: at most 16 for rows up to ~1M
//! elements; their worst-case error (run · eps · M) stays inside Approx up to ~10^8 per row.

use super::{around, check_size, shader, threads, SHORT_ROW};
use crate::lower::builder::{u32_of, Kernel, Lower, Operand};
use crate::pipelines::BindKind;
use backend_api::op::CumsumAttrs;
use backend_api::{bail, ensure, DType, Result};
use shaders::params::Params;
use shaders::reduce::scan::{acc_dtype, module, ScanParams, ScanStage};

/// Logical positions per block (`WG`).
const BLOCK: usize = 256;

/// Cumsum of `x` along `a.axis` into `out` (same dtype and dims).
pub fn cumsum(b: &mut Lower<'_>, a: &CumsumAttrs, x: &Operand, out: &Operand) -> Result<()> {
    scan(b, a.axis, a.exclusive, a.reverse, x, out)
}

/// CumsumBackward: the gradient `dx` of a Cumsum with attributes `a` from its output gradient `dy`.
pub fn cumsum_backward(b: &mut Lower<'_>, a: &CumsumAttrs, dy: &Operand, dx: &Operand) -> Result<()> {
    // the transpose of a prefix sum is the prefix sum in the other direction (§2.5.6)
    scan(b, a.axis, a.exclusive, !a.reverse, dy, dx)
}

/// A scan with the effective direction (`reverse` already flipped for the backward op).
fn scan(b: &mut Lower<'_>, axis: usize, exclusive: bool, reverse: bool, x: &Operand, out: &Operand) -> Result<()> {
    let d = x.dtype;
    let Some(acc) = acc_dtype(d) else {
        bail!(Unsupported, "no GPU Cumsum kernel for {d}");
    };
    ensure!(
        out.dtype == d && out.dims == x.dims,
        Shape,
        "Cumsum of {d}{:?} cannot write {}{:?}",
        x.dims,
        out.dtype,
        out.dims
    );
    check_size("Cumsum input", &x.dims)?;
    let (outer, len, inner) = around(&x.dims, axis)?;
    let rows = outer * inner;
    if rows * len == 0 {
        return Ok(());
    }
    let nb = len.div_ceil(BLOCK);
    let p = ScanParams {
        rows: u32_of(rows, "rows")?,
        len: u32_of(len, "row elements")?,
        inner: u32_of(inner, "row stride")?,
        nb: u32_of(nb, "row blocks")?,
        exclusive: u32::from(exclusive),
        reverse: u32::from(reverse),
        ..ScanParams::default()
    };
    b.zero_if_packed(out)?;
    if len <= SHORT_ROW {
        let source = shader("Cumsum", module(ScanStage::Rows, d), d)?;
        let bindings = vec![(x.window, BindKind::Read), (out.window, BindKind::Write)];
        b.push(Kernel { source, bindings, params: p.to_bytes(), grid: threads(rows), flops: None });
        return Ok(());
    }
    blocked(b, acc, &p, (rows, len, nb), x, out)
}

/// The three passes of a blocked scan of `rows` rows of `len` in `nb` blocks, with the in-block
/// scans and the block totals in temps of the accumulator dtype `acc`.
fn blocked(
    b: &mut Lower<'_>,
    acc: DType,
    p: &ScanParams,
    (rows, len, nb): (usize, usize, usize),
    x: &Operand,
    out: &Operand,
) -> Result<()> {
    let d = x.dtype;
    let local = shader("Cumsum", module(ScanStage::Local, d), d)?;
    let blocks = shader("Cumsum", module(ScanStage::Blocks, d), d)?;
    let combine = shader("Cumsum", module(ScanStage::Combine, d), d)?;
    let loc = b.temp(acc, vec![rows, len])?.window;
    let bs = b.temp(acc, vec![rows, nb])?.window;
    let params = p.to_bytes();
    // rows · nb ≤ rows · len, which check_size bounds
    let (local_grid, row_grid) = (b.workgroups(rows * nb)?, b.workgroups(rows)?);
    b.push(Kernel {
        source: local,
        bindings: vec![(x.window, BindKind::Read), (loc, BindKind::Write), (bs, BindKind::Write)],
        params: params.clone(),
        grid: local_grid,
        flops: None,
    });
    b.push(Kernel {
        source: blocks,
        bindings: vec![(bs, BindKind::Write)],
        params: params.clone(),
        grid: row_grid,
        flops: None,
    });
    b.push(Kernel {
        source: combine,
        bindings: vec![(loc, BindKind::Read), (bs, BindKind::Read), (out.window, BindKind::Write)],
        params,
        grid: threads(rows * len),
        flops: None,
    });
    Ok(())
}
