//! TopK (§2.5.4) along any axis: one workgroup per row bitonic-sorts (order-preserving key, index)
//! pairs in workgroup memory (`shaders::reduce::topk::module`) and writes the first k. Rows
//! longer than `shaders::reduce::topk::max_len` (`SORT_N`) are bitonic-sorted over temps
//! (`big_module`): blocks of `SORT_N` sorted in workgroup memory, then for every wider stage one
//! global dispatch per step of distance ≥ `SORT_N` and one workgroup-memory pass for the rest, so
//! a row of 2^p slots takes about (p − log2 SORT_N)²/2 global dispatches.

use super::{around, check_size, shader, threads, MAX_ELEMENTS};
use crate::lower::builder::{u32_of, Kernel, Lower, Operand, Window};
use crate::lower::Grid;
use crate::pipelines::BindKind;
use backend_api::op::TopKAttrs;
use backend_api::{bail, ensure, DType, Result};
use shaders::params::Params;
use shaders::reduce::topk::{big_module, key_bytes, max_len, module, TopKStage, TopkBigParams, TopkParams};

/// Workgroup memory both sorts keep their (key, index) pairs in: the WebGPU default limit.
const WG_MEMORY: u32 = 16384;

/// The rows of a TopK: `rows` rows of `len` elements at stride `inner`.
#[derive(Clone, Copy)]
struct Rows {
    rows: usize,
    len: usize,
    inner: usize,
}

/// TopK of `x` along `a.axis`: the `a.k` largest (or smallest) elements of every row into
/// `values` (x's dtype) and their indices into `indices` (`a.index_dtype`), both x's dims with
/// `a.k` along the axis.
pub fn top_k(b: &mut Lower<'_>, a: &TopKAttrs, x: &Operand, values: &Operand, indices: &Operand) -> Result<()> {
    let d = x.dtype;
    let source = shader("TopK", module(d, a.index_dtype), d)?;
    check_size("TopK input", &x.dims)?;
    let (outer, len, inner) = around(&x.dims, a.axis)?;
    let rows = outer * inner;
    if a.k > len {
        bail!(Attribute, "TopK k = {} exceeds the axis size {len}", a.k);
    }
    let n_out = rows * a.k;
    ensure!(
        values.dtype == d && indices.dtype == a.index_dtype && values.numel() == n_out && indices.numel() == n_out,
        Shape,
        "TopK of {d}{:?} (k = {}) cannot write {}{:?} and {}{:?}",
        x.dims,
        a.k,
        values.dtype,
        values.dims,
        indices.dtype,
        indices.dims
    );
    if n_out == 0 {
        return Ok(());
    }
    let wg_mem = b.caps().limits.max_compute_workgroup_storage_size;
    if wg_mem < WG_MEMORY {
        bail!(DeviceLimit, "TopK needs {WG_MEMORY} bytes of workgroup memory; the device has {wg_mem}");
    }
    let r = Rows { rows, len, inner };
    if len > max_len(d) {
        return long(b, a, r, x, (values, indices));
    }
    let pow2 = len.next_power_of_two();
    let p = TopkParams {
        rows: u32_of(rows, "rows")?,
        len: u32_of(len, "row elements")?,
        inner: u32_of(inner, "row stride")?,
        k: u32_of(a.k, "kept elements")?,
        pow2: u32_of(pow2, "sort slots")?,
        largest: u32::from(a.largest),
        ..TopkParams::default()
    };
    b.zero_if_packed(values)?;
    b.zero_if_packed(indices)?;
    let grid = b.workgroups(rows)?;
    let bindings =
        vec![(x.window, BindKind::Read), (values.window, BindKind::Write), (indices.window, BindKind::Write)];
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

/// Long rows: a bitonic sort of (key, index) pairs in temps (see the module doc).
fn long(b: &mut Lower<'_>, a: &TopKAttrs, r: Rows, x: &Operand, (values, indices): (&Operand, &Operand)) -> Result<()> {
    let d = x.dtype;
    let src = |s: TopKStage| shader("TopK", big_module(s, d, a.index_dtype), d);
    let (init, local, global, out) =
        (src(TopKStage::Init)?, src(TopKStage::Local)?, src(TopKStage::Global)?, src(TopKStage::Out)?);
    let sort_n = max_len(d);
    let pow2 = r.len.next_power_of_two();
    let slots = r.rows.checked_mul(pow2).filter(|&s| s < MAX_ELEMENTS);
    let Some(slots) = slots else {
        bail!(DeviceLimit, "TopK needs {} x {pow2} sort slots, more than 2^31", r.rows);
    };
    // a key is one or two u32 words
    let keys = b.temp(DType::U32, vec![slots, key_bytes(d) / 4])?.window;
    let idx = b.temp(DType::U32, vec![slots])?.window;
    let base = TopkBigParams {
        rows: u32_of(r.rows, "rows")?,
        len: u32_of(r.len, "row elements")?,
        inner: u32_of(r.inner, "row stride")?,
        k: u32_of(a.k, "kept elements")?,
        pow2: u32_of(pow2, "sort slots")?,
        largest: u32::from(a.largest),
        kk_lo: 2,
        kk_hi: u32_of(sort_n, "sort block")?,
        ..TopkBigParams::default()
    };
    let (tk, ti) = ((keys, BindKind::Write), (idx, BindKind::Write));
    let local_grid = b.workgroups(slots / sort_n)?;
    pass(b, &init, vec![(x.window, BindKind::Read), tk, ti], &base, threads(slots));
    pass(b, &local, vec![tk, ti], &base, local_grid);
    let mut kk = 2 * sort_n;
    while kk <= pow2 {
        let mut j = kk / 2;
        while j >= sort_n {
            let p = TopkBigParams { kk_hi: u32_of(kk, "stage width")?, j: u32_of(j, "step distance")?, ..base };
            pass(b, &global, vec![tk, ti], &p, threads(slots / 2));
            j /= 2;
        }
        let p = TopkBigParams { kk_lo: u32_of(kk, "stage width")?, kk_hi: u32_of(kk, "stage width")?, ..base };
        pass(b, &local, vec![tk, ti], &p, local_grid);
        kk *= 2;
    }
    b.zero_if_packed(values)?;
    b.zero_if_packed(indices)?;
    let out_bindings = vec![
        (x.window, BindKind::Read),
        (idx, BindKind::Read),
        (values.window, BindKind::Write),
        (indices.window, BindKind::Write),
    ];
    pass(b, &out, out_bindings, &base, threads(r.rows * a.k));
    Ok(())
}

/// One dispatch of a long-row pass.
fn pass(b: &mut Lower<'_>, source: &str, bindings: Vec<(Window, BindKind)>, p: &TopkBigParams, grid: Grid) {
    b.push(Kernel { source: source.to_string(), bindings, params: p.to_bytes(), grid, flops: None });
}
