//! Cumsum / CumsumBackward (§2.5.5–2.5.6) along any axis as a blocked tree scan in three passes:
//! (1) a workgroup per (row, block of 256) scans its block into a temp in the accumulator type and
//! writes the block total; (2) a workgroup per row turns the totals into exclusive block prefixes;
//! (3) an invocation per element adds its block prefix and stores. Every prefix is a sum tree of
//! depth ~log2(len) plus a short serial run, so float error stays at the (M)-scaled Approx class
//! for long axes, and integer sums wrap exactly. Rows of at most `SHORT_ROW` elements are scanned
//! serially by one invocation each (a short serial sum is as accurate, and needs no temps).
//! Pass 2's serial runs are ceil(nb / 256) block totals long: at most 16 for rows up to ~1M
//! elements; their worst-case error (run · eps · M) stays inside Approx up to ~10^8 per row.

use super::super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::super::reduce::workgroup_grid;
use super::super::Grid;
use super::{around, check_size, shader, SHORT_ROW};
use crate::pipelines::BindKind;
use backend_api::{DType, Result};
use bytemuck::{Pod, Zeroable};
use shaders::ordering::{scan_acc, scan_module, ScanStage};

/// Logical positions per block (`WG`).
const BLOCK: usize = 256;

/// `Params` of `ordering_scan_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    rows: u32,
    len: u32,
    inner: u32,
    nb: u32,
    exclusive: u32,
    reverse: u32,
    pad: [u32; 2],
}

/// Lowers a scan with the effective direction (`reverse` already flipped for the backward op).
pub fn lower(ctx: &LowerCtx<'_>, axis: usize, exclusive: bool, reverse: bool) -> Result<Lowered> {
    let (d, dims) = &ctx.inputs[0];
    let d = *d;
    let Some(acc) = scan_acc(d) else {
        backend_api::bail!(Unsupported, "no GPU Cumsum kernel for {d}");
    };
    check_size("Cumsum input", dims)?;
    let (outer, len, inner) = around(dims, axis)?;
    let rows = outer * inner;
    let n = rows * len;
    if n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    let nb = len.div_ceil(BLOCK);
    let p = Params {
        rows: rows as u32,
        len: len as u32,
        inner: inner as u32,
        nb: nb as u32,
        exclusive: exclusive as u32,
        reverse: reverse as u32,
        pad: [0; 2],
    };
    let params = bytemuck::bytes_of(&p).to_vec();
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, n)));
    }
    if len <= SHORT_ROW {
        let source = shader("Cumsum", scan_module(ScanStage::Rows, d), d)?;
        let bindings = vec![(Buf::In(0), BindKind::Read), (Buf::Out(0), BindKind::Write)];
        kernels.push(Kernel { source, bindings, params, grid: Grid::Threads(rows as u64) });
        return Ok(Lowered::Kernels { temps: vec![], kernels });
    }
    let temps = blocked(ctx, d, acc, (rows, len, nb), params, &mut kernels)?;
    Ok(Lowered::Kernels { temps, kernels })
}

/// The three passes of a blocked scan of `rows` rows of `len` in `nb` blocks, appended to
/// `kernels`; returns the temp sizes (in-block scans, block totals).
fn blocked(
    ctx: &LowerCtx<'_>,
    d: DType,
    acc: DType,
    (rows, len, nb): (usize, usize, usize),
    params: Vec<u8>,
    kernels: &mut Vec<Kernel>,
) -> Result<Vec<u64>> {
    let local = shader("Cumsum", scan_module(ScanStage::Local, d), d)?;
    let blocks = shader("Cumsum", scan_module(ScanStage::Blocks, d), d)?;
    let combine = shader("Cumsum", scan_module(ScanStage::Combine, d), d)?;
    let (loc, bs) = (Buf::Temp(0), Buf::Temp(1));
    kernels.extend([
        Kernel {
            source: local,
            bindings: vec![(Buf::In(0), BindKind::Read), (loc, BindKind::Write), (bs, BindKind::Write)],
            params: params.clone(),
            grid: workgroup_grid(ctx, rows * nb)?,
        },
        Kernel {
            source: blocks,
            bindings: vec![(bs, BindKind::Write)],
            params: params.clone(),
            grid: workgroup_grid(ctx, rows)?,
        },
    ]);
    kernels.push(Kernel {
        source: combine,
        bindings: vec![(loc, BindKind::Read), (bs, BindKind::Read), (Buf::Out(0), BindKind::Write)],
        params,
        grid: Grid::Threads((rows * len) as u64),
    });
    Ok(vec![(rows * len * acc.size()) as u64, (rows * nb * acc.size()) as u64])
}
