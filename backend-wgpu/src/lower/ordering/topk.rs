//! TopK (§2.5.4) along any axis: one workgroup per row bitonic-sorts (order-preserving key, index)
//! pairs in workgroup memory (`shaders::ordering::topk_module`) and writes the first k. Rows
//! longer than `shaders::ordering::topk_max_len` (`SORT_N`) are bitonic-sorted over temps
//! (`topk_big_module`): blocks of `SORT_N` sorted in workgroup memory, then for every wider stage
//! one global dispatch per step of distance ≥ `SORT_N` and one workgroup-memory pass for the rest,
//! so a row of 2^p slots takes about (p − log2 SORT_N)²/2 global dispatches.

use super::super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::super::reduce::workgroup_grid;
use super::super::Grid;
use super::{around, check_size, shader};
use crate::pipelines::BindKind;
use backend_api::op::TopKAttrs;
use backend_api::{bail, Result};
use bytemuck::{Pod, Zeroable};
use shaders::ordering::{topk_big_module, topk_max_len, topk_module, TopKStage};

/// `Params` of `ordering_topk_big_common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BigParams {
    rows: u32,
    len: u32,
    inner: u32,
    k: u32,
    pow2: u32,
    largest: u32,
    kk_lo: u32,
    kk_hi: u32,
    j: u32,
    pad: [u32; 3],
}

/// `Params` of `ordering_topk.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    rows: u32,
    len: u32,
    inner: u32,
    k: u32,
    pow2: u32,
    largest: u32,
    pad: [u32; 2],
}

/// Lowers a TopK node (outputs: values, indices).
pub fn lower(ctx: &LowerCtx<'_>, a: &TopKAttrs) -> Result<Lowered> {
    let (d, dims) = &ctx.inputs[0];
    let d = *d;
    let source = shader("TopK", topk_module(d, a.index_dtype), d)?;
    check_size("TopK input", dims)?;
    let (outer, len, inner) = around(dims, a.axis)?;
    let rows = outer * inner;
    if a.k > len {
        bail!(Attribute, "TopK k = {} exceeds the axis size {len}", a.k);
    }
    if rows == 0 || a.k == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    // both sorts keep 16 KiB of (key, index) pairs in workgroup memory (the WebGPU default limit)
    let wg_mem = ctx.caps.limits.max_compute_workgroup_storage_size;
    if wg_mem < 16384 {
        bail!(DeviceLimit, "TopK needs 16384 bytes of workgroup memory; the device has {wg_mem}");
    }
    if len > topk_max_len(d) {
        return lower_long(ctx, a, rows, len, inner);
    }
    let pow2 = len.next_power_of_two();
    let p = Params {
        rows: rows as u32,
        len: len as u32,
        inner: inner as u32,
        k: a.k as u32,
        pow2: pow2 as u32,
        largest: a.largest as u32,
        pad: [0; 2],
    };
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, ctx.out_numel(0))));
    }
    kernels.push(Kernel {
        source,
        bindings: vec![(Buf::In(0), BindKind::Read), (Buf::Out(0), BindKind::Write), (Buf::Out(1), BindKind::Write)],
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: workgroup_grid(ctx, rows)?,
    });
    Ok(Lowered::Kernels { temps: vec![], kernels })
}

/// Long rows: a bitonic sort of (key, index) pairs in temps (see the module doc).
fn lower_long(ctx: &LowerCtx<'_>, a: &TopKAttrs, rows: usize, len: usize, inner: usize) -> Result<Lowered> {
    let d = ctx.inputs[0].0;
    let src = |s: TopKStage| shader("TopK", topk_big_module(s, d, a.index_dtype), d);
    let (init, local, global, out) =
        (src(TopKStage::Init)?, src(TopKStage::Local)?, src(TopKStage::Global)?, src(TopKStage::Out)?);
    let sort_n = topk_max_len(d);
    let pow2 = len.next_power_of_two();
    let slots = rows * pow2;
    if slots >= super::MAX_ELEMENTS {
        bail!(DeviceLimit, "TopK needs {rows} x {pow2} sort slots, more than 2^31");
    }
    let key_size = if matches!(d, backend_api::DType::F64 | backend_api::DType::I64) { 8 } else { 4 };
    let temps = vec![(slots * key_size) as u64, (slots * 4) as u64];
    let base = BigParams {
        rows: rows as u32,
        len: len as u32,
        inner: inner as u32,
        k: a.k as u32,
        pow2: pow2 as u32,
        largest: a.largest as u32,
        kk_lo: 2,
        kk_hi: sort_n as u32,
        j: 0,
        pad: [0; 3],
    };
    let (tk, ti) = ((Buf::Temp(0), BindKind::Write), (Buf::Temp(1), BindKind::Write));
    let kernel = |source: &String, bindings: Vec<(Buf, BindKind)>, p: BigParams, grid: Grid| Kernel {
        source: source.clone(),
        bindings,
        params: bytemuck::bytes_of(&p).to_vec(),
        grid,
    };
    let local_grid = workgroup_grid(ctx, slots / sort_n)?;
    let mut kernels = vec![
        kernel(&init, vec![(Buf::In(0), BindKind::Read), tk, ti], base, Grid::Threads(slots as u64)),
        kernel(&local, vec![tk, ti], base, local_grid),
    ];
    let mut kk = 2 * sort_n;
    while kk <= pow2 {
        let mut j = kk / 2;
        while j >= sort_n {
            let p = BigParams { kk_hi: kk as u32, j: j as u32, ..base };
            kernels.push(kernel(&global, vec![tk, ti], p, Grid::Threads((slots / 2) as u64)));
            j /= 2;
        }
        let p = BigParams { kk_lo: kk as u32, kk_hi: kk as u32, ..base };
        kernels.push(kernel(&local, vec![tk, ti], p, local_grid));
        kk *= 2;
    }
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, ctx.out_numel(0))));
    }
    let out_bindings = vec![
        (Buf::In(0), BindKind::Read),
        (Buf::Temp(1), BindKind::Read),
        (Buf::Out(0), BindKind::Write),
        (Buf::Out(1), BindKind::Write),
    ];
    kernels.push(kernel(&out, out_bindings, base, Grid::Threads((rows * a.k) as u64)));
    Ok(Lowered::Kernels { temps, kernels })
}
