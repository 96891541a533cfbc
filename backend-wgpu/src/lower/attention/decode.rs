//! The split kernel for few query rows per key/value head (`attention_decode.wgsl`, as in
//! flash-decoding) and the merge of its splits (`attention_combine.wgsl`).

use super::flash::{bh_plane, input_bindings, variant};
use super::{Geometry, Operands};
use crate::lower::builder::{u32_of, Kernel, Lower};
use crate::lower::Grid;
use crate::pipelines::BindKind;
use backend_api::{ensure, DType, Error, ErrorKind, Result};
use shaders::attention::flash::{combine_module, decode_module, DECODE_MAX_ROWS, DECODE_THREADS};
use shaders::params::Params;

/// Split the keys until the split kernel has about this many workgroups (several per SM of a
/// big GPU), so that one query row reads K and V at the memory's speed.
const TARGET_WORKGROUPS: usize = 1024;

/// Whether the split kernel takes this problem: few rows share each key/value head.
pub(super) fn fits(g: &Geometry) -> bool {
    (g.hq / g.hkv).saturating_mul(g.sq) <= DECODE_MAX_ROWS as usize
}

/// The union [lo, hi) of the key ranges of rows 0..Sq under the structural mask.
fn key_union(g: &Geometry) -> (usize, usize) {
    let p = &g.params;
    let delta = i64::from(p.delta);
    let lo = if p.mask_kind == 2 { (delta - i64::from(p.window) + 1).max(0) } else { 0 };
    let hi = if p.mask_kind == 0 { g.sk as i64 } else { (g.sq as i64 + delta).clamp(0, g.sk as i64) };
    (lo as usize, (hi.max(lo)) as usize)
}

fn unsupported(what: &str, d: DType) -> Error {
    Error::new(ErrorKind::Unsupported, format!("no attention {what} kernel for {d}"))
}

/// Whether the combine kernel can write the output two columns at a time as whole words: a
/// packed (F16/BF16) output with Dv, its strides and its window's offset even.
fn whole_words(g: &Geometry, o: &Operands<'_>) -> bool {
    let p = &g.params;
    shaders::is_packed(o.out.dtype)
        && g.dv.is_multiple_of(2)
        && [p.o_sb, p.o_sh, p.o_si].iter().all(|s| s.is_multiple_of(2))
        && o.out.window.offset.is_multiple_of(4)
}

/// Whether the split kernel can bind K as vectors of 4 elements (16 bytes of F32, 8 of
/// F16/BF16): D and K's strides multiples of 4, the window's offset and size multiples of the
/// vector, so every group of 4 widths of a key row is one aligned vector inside the binding.
fn k_vectors(g: &Geometry, o: &Operands<'_>) -> bool {
    let p = &g.params;
    let vec_bytes = 4 * o.k.dtype.size() as u64;
    g.d.is_multiple_of(4)
        && [p.k_sb, p.k_sg, p.k_sj].iter().all(|s| s.is_multiple_of(4))
        && o.k.window.offset.is_multiple_of(vec_bytes)
        && o.k.window.bytes.is_multiple_of(vec_bytes)
}

/// Lowers the node with the split kernel and the combine kernel.
pub(super) fn run(b: &mut Lower<'_>, g: &Geometry, o: &Operands<'_>) -> Result<()> {
    let rows = g.hq / g.hkv * g.sq;
    let rmax = rows.next_power_of_two().max(1);
    let v = variant(o);
    let device = |e: String| Error::new(ErrorKind::Device, format!("attention shader: {e}"));
    let split_src =
        decode_module(v, u32_of(rmax, "rows")?, k_vectors(g, o)).ok_or_else(|| unsupported("split", v.dtype))?;
    let pair_words = whole_words(g, o);
    let combine_src = combine_module(v.dtype, pair_words).ok_or_else(|| unsupported("combine", v.dtype))?;
    let nt = DECODE_THREADS as usize;
    let (lo, hi) = key_union(g);
    let blocks = (hi - lo).div_ceil(nt).max(1);
    let dv_chunks = g.dv.div_ceil(nt);
    let pairs = g.b * g.hkv;
    let wanted = TARGET_WORKGROUPS.div_ceil(pairs.saturating_mul(dv_chunks).max(1));
    // At most NT splits: the combine kernel reduces them in one workgroup.
    let chunk = blocks.div_ceil(wanted.clamp(1, blocks)).max(blocks.div_ceil(nt)) * nt;
    let splits = (hi - lo).div_ceil(chunk).max(1);
    let x = splits * dv_chunks;
    let max = b.caps().limits.max_compute_workgroups_per_dimension as usize;
    ensure!(x <= max, DeviceLimit, "Attention: {splits} key splits x {dv_chunks} value chunks exceed {max} workgroups");
    let part_rows = [pairs, splits, rows].iter().try_fold(1usize, |a, &n| a.checked_mul(n)).filter(|&n| n < (1 << 30));
    let Some(part_rows) = part_rows else {
        return Err(Error::new(ErrorKind::DeviceLimit, "Attention: split scratch rows overflow"));
    };
    let po = b.temp(DType::F32, vec![part_rows, g.dv])?;
    ensure!(po.numel() < (1 << 31), DeviceLimit, "Attention: split scratch of {part_rows} x {} values", g.dv);
    let pm = b.temp(DType::F32, vec![part_rows, 2])?;
    let mut p = g.params;
    p.chunk = u32_of(chunk, "keys per split")?;
    p.splits = u32_of(splits, "splits")?;
    p.dv_chunks = u32_of(dv_chunks, "value chunks")?;
    let (y, z) = bh_plane(b, pairs)?;
    p.bh_rows = y;
    let mut bindings = input_bindings(o);
    bindings.push((po.window, BindKind::Write));
    bindings.push((pm.window, BindKind::Write));
    let flops = [g.b, g.hq, g.sq, g.sk, g.d + g.dv, 2].iter().try_fold(1u64, |acc, &n| acc.checked_mul(n as u64));
    b.push(Kernel {
        source: split_src.map_err(device)?,
        bindings,
        params: p.to_bytes(),
        grid: Grid::Workgroups([u32_of(x, "workgroups")?, y, z]),
        flops,
    });
    let (y, z) = bh_plane(b, pairs * rows)?;
    p.bh_rows = y;
    let combine_chunks = if pair_words {
        g.dv.div_ceil(2 * nt)
    } else {
        b.zero_if_packed(o.out)?;
        dv_chunks
    };
    b.push(Kernel {
        source: combine_src.map_err(device)?,
        bindings: vec![(po.window, BindKind::Read), (pm.window, BindKind::Read), (o.out.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Workgroups([u32_of(combine_chunks, "value chunks")?, y, z]),
        flops: None,
    });
    Ok(())
}
