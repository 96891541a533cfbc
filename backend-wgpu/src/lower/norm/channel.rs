//! GroupNorm and LayerNorm2d (§2.7.6–2.7.7) on `x [N, C, *spatial]` viewed as `[N, C, S]`, with
//! `shaders::norm::channel`.
//!
//! GroupNorm's group `(n, g)` is one contiguous run of `len = (C/G)·S` elements. A group of at
//! most `shaders::norm::MAX_HELD` elements is read once by one workgroup (registers). Larger ones
//! are split: [`SPLIT_PER_THREAD`]·256-element tiles, grouped into at most
//! [`MAX_CHUNKS`] chunks per group, one workgroup per chunk in two passes (partial moments, then
//! merge and normalise), so that a handful of large groups (N = 8, G = 32 over 56 × 56: 256
//! groups of 25 088) still spreads over thousands of workgroups. docs/DECISIONS.md has the
//! thresholds. `groupnorm.split` / `groupnorm.k` ([`crate::Tuning`]) force the form and the tile.
//!
//! LayerNorm2d runs one invocation per `(n, s)` column (`N·S` of them), reading its `C` channels
//! at stride `S`: neighbouring invocations read neighbouring positions.

use super::super::builder::{tensor_bytes, u32_of, Kernel, Lower, Operand};
use super::super::Grid;
use super::MAX_ELEMENTS;
use crate::pipelines::BindKind;
use backend_api::op::{GroupNormAttrs, LayerNorm2dAttrs};
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::norm::channel::{
    group_norm_apply, group_norm_held, group_norm_stats, layer_norm_2d as ln2d_module, ChannelNormParams, MAX_CHUNKS,
};
use shaders::norm::{held_per_thread, MAX_HELD};
use shaders::params::Params;

/// Elements per invocation of a split GroupNorm tile (a tile is this · 256 elements): 8 keeps
/// 2048-element tiles, enough work per workgroup to hide the reductions' barriers while the
/// 256 groups of the N = 8, C = 256, 56 × 56, G = 32 case still make 3 328 workgroups.
pub const SPLIT_PER_THREAD: u32 = 8;

/// `[N, C, S]` of a channel norm's operands after checking them.
struct Dims {
    n: usize,
    c: usize,
    s: usize,
}

/// GroupNorm of `x` in `a.num_groups` channel groups with `gamma` and optional `beta` (`[C]`).
pub fn group_norm(
    b: &mut Lower<'_>,
    a: &GroupNormAttrs,
    x: &Operand,
    gamma: &Operand,
    beta: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let Dims { n, c, s } = check("GroupNorm", x, gamma, beta, out)?;
    let g = a.num_groups as usize;
    ensure!(
        g >= 1 && c.is_multiple_of(g),
        Attribute,
        "GroupNorm num_groups {g} must be >= 1 and divide C = {c} of x {:?}",
        x.dims
    );
    let d = x.dtype;
    let rows = try_numel(&[n, g])?;
    let len = try_numel(&[c / g, s])?;
    let held = held_per_thread(len).filter(|_| !b.caps().tuning.groupnorm_split.unwrap_or(len > MAX_HELD));
    let k = b.caps().tuning.groupnorm_k.unwrap_or(SPLIT_PER_THREAD);
    // Sources first: an unsupported dtype is an error even for an empty tensor.
    let sources = match held {
        Some(kh) => (render("GroupNorm", d, group_norm_held(d, beta.is_some(), kh))?, None),
        None => {
            let stats = render("GroupNorm", d, group_norm_stats(d, k))?;
            (stats, Some(render("GroupNorm", d, group_norm_apply(d, beta.is_some(), k))?))
        }
    };
    if x.numel() == 0 {
        return Ok(());
    }
    let mut p = params(a.eps, rows, len, s)?;
    p.groups = u32_of(g, "groups")?;
    b.zero_if_packed(out)?;
    let ins: Vec<&Operand> = [x, gamma].into_iter().chain(beta).collect();
    match sources {
        (held, None) => {
            let grid = b.workgroups(rows)?;
            push(b, held, &ins, None, out, p, grid);
        }
        (stats, Some(apply)) => split(b, (stats, apply), &ins, out, p, k)?,
    }
    Ok(())
}

/// The two passes of a split GroupNorm over `p.rows` groups of `p.len` elements, tiles of `k`·256.
fn split(
    b: &mut Lower<'_>,
    (stats, apply): (String, String),
    ins: &[&Operand],
    out: &Operand,
    mut p: ChannelNormParams,
    k: u32,
) -> Result<()> {
    let len = p.len as usize;
    let tile = k as usize * 256;
    // Tiles per chunk: as few as keep the chunks of a group within MAX_CHUNKS.
    let per_chunk = len.div_ceil(tile).div_ceil(MAX_CHUNKS).max(1);
    let span = tile * per_chunk;
    let chunks = len.div_ceil(span);
    // chunks <= len, so rows * chunks <= the element count (< 2^31)
    let total = try_numel(&[p.rows as usize, chunks])?;
    p.chunks = u32_of(chunks, "chunks")?;
    p.span = u32_of(span, "chunk elements")?;
    let Some(&x) = ins.first() else { bail!(Arity, "GroupNorm needs x") };
    let part_dtype = if x.dtype == DType::F64 { DType::F64 } else { DType::F32 };
    let part = b.temp(part_dtype, vec![total, 2])?;
    let grid = b.workgroups(total)?;
    b.push(Kernel {
        source: stats,
        bindings: vec![(x.window, BindKind::Read), (part.window, BindKind::Write)],
        params: p.to_bytes(),
        grid,
        flops: None,
    });
    push(b, apply, ins, Some(&part), out, p, grid);
    Ok(())
}

/// LayerNorm2d of `x` with `gamma` and optional `beta` (`[C]`).
pub fn layer_norm_2d(
    b: &mut Lower<'_>,
    a: &LayerNorm2dAttrs,
    x: &Operand,
    gamma: &Operand,
    beta: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let Dims { n, c, s } = check("LayerNorm2d", x, gamma, beta, out)?;
    let source = render("LayerNorm2d", x.dtype, ln2d_module(x.dtype, beta.is_some()))?;
    if x.numel() == 0 {
        return Ok(());
    }
    let columns = try_numel(&[n, s])?;
    let p = params(a.eps, columns, c, s)?;
    b.zero_if_packed(out)?;
    let ins: Vec<&Operand> = [x, gamma].into_iter().chain(beta).collect();
    push(b, source, &ins, None, out, p, Grid::Threads(p.rows.into()));
    Ok(())
}

/// Params for `rows` runs of `len` elements over `spatial` positions: one chunk per run.
fn params(eps: f32, rows: usize, len: usize, spatial: usize) -> Result<ChannelNormParams> {
    let len = u32_of(len, "elements per group")?;
    Ok(ChannelNormParams {
        rows: u32_of(rows, "rows")?,
        len,
        spatial: u32_of(spatial, "spatial positions")?,
        groups: 1,
        eps,
        chunks: 1,
        span: len,
        pad0: 0,
    })
}

/// Appends a kernel binding x, the partial moments if any, gamma, beta if any, then out.
fn push(
    b: &mut Lower<'_>,
    source: String,
    ins: &[&Operand],
    part: Option<&Operand>,
    out: &Operand,
    p: ChannelNormParams,
    grid: Grid,
) {
    let mut bindings: Vec<_> = ins.iter().map(|o| (o.window, BindKind::Read)).collect();
    if let Some(part) = part {
        bindings.insert(1, (part.window, BindKind::Read));
    }
    bindings.push((out.window, BindKind::Write));
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
}

/// The rendered module, or `Unsupported` (non-float dtype) / `Device` (a rendering bug).
fn render(op: &str, d: DType, src: Option<std::result::Result<String, String>>) -> Result<String> {
    let Some(src) = src else { bail!(Unsupported, "no GPU kernel for {op} on {d}") };
    src.map_err(|e| Error::new(ErrorKind::Device, format!("{op} shader: {e}")))
}

/// `[N, C, S]` after checking x (rank >= 2, fewer than 2^31 elements), out (dtype and dims of
/// x), gamma and beta (dtype of x, C elements) and that every window holds its tensor.
fn check(op: &str, x: &Operand, gamma: &Operand, beta: Option<&Operand>, out: &Operand) -> Result<Dims> {
    let d = x.dtype;
    let (Some(&n), Some(&c)) = (x.dims.first(), x.dims.get(1)) else {
        bail!(Shape, "{op} x {d}{:?} must be [N, C, *spatial] (rank >= 2)", x.dims)
    };
    ensure!(
        out.dtype == d && out.dims == x.dims,
        Shape,
        "{op} of {d}{:?} cannot write {}{:?}",
        x.dims,
        out.dtype,
        out.dims
    );
    for (name, t) in [("gamma", Some(gamma)), ("beta", beta)] {
        if let Some(t) = t {
            ensure!(
                t.dtype == d && t.numel() == c,
                Shape,
                "{op} {name} {}{:?} must be {d}[{c}] (the C of x {:?})",
                t.dtype,
                t.dims,
                x.dims
            );
        }
    }
    if x.numel() >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{op} input {:?} has more than 2^31 elements", x.dims);
    }
    for o in [x, gamma, out].into_iter().chain(beta) {
        let need = tensor_bytes(o.dtype, &o.dims)?;
        ensure!(o.window.bytes >= need, Shape, "{op} operand {:?} has a window of {} bytes", o.dims, o.window.bytes);
    }
    let s = try_numel(x.dims.get(2..).unwrap_or(&[]))?;
    Ok(Dims { n, c, s })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceCaps;
    use crate::lower::Buf;

    /// The kernels' sources and grids of a GroupNorm on `dims` with `g` groups.
    fn lowered(caps: &DeviceCaps, d: DType, dims: &[usize], g: u32) -> Vec<(String, Grid)> {
        let mut b = Lower::new(caps, 1);
        let x = Operand::whole(Buf::In(0), d, dims.to_vec()).unwrap();
        let gamma = Operand::whole(Buf::In(1), d, vec![dims[1]]).unwrap();
        let out = Operand::whole(Buf::Out(0), d, dims.to_vec()).unwrap();
        group_norm(&mut b, &GroupNormAttrs { num_groups: g, eps: 1e-5 }, &x, &gamma, None, &out).unwrap();
        b.finish().kernels().iter().map(|k| (k.source.clone(), k.grid)).collect()
    }

    #[test]
    fn small_groups_are_one_pass_large_ones_split() {
        let caps = DeviceCaps::for_tests();
        let one = lowered(&caps, DType::F32, &[2, 4, 8, 8], 2);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].1, Grid::Workgroups([4, 1, 1]));
        // the benchmark case: 256 groups of 25 088 elements, 13 chunks each
        let split = lowered(&caps, DType::F32, &[8, 256, 56, 56], 32);
        assert_eq!(split.len(), 2);
        assert!(split[0].0.contains("part[2u * w]") && split[1].0.contains("st_out"));
        assert_eq!(split[0].1, Grid::Workgroups([256 * 13, 1, 1]));
        // packed dtypes zero the output first
        assert_eq!(lowered(&caps, DType::F16, &[1, 2, 9000], 1).len(), 3);
    }

    #[test]
    fn huge_groups_keep_at_most_max_chunks() {
        let caps = DeviceCaps::for_tests();
        let len = 600 * 2048 + 5;
        let k = lowered(&caps, DType::F32, &[1, 1, len], 1);
        let Grid::Workgroups([w, 1, 1]) = k[0].1 else { panic!("{:?}", k[0].1) };
        assert!(w as usize <= MAX_CHUNKS && w > 128, "{w}");
    }

    #[test]
    fn tuning_forces_the_form() {
        let mut caps = DeviceCaps::for_tests();
        caps.tuning.set_pair("groupnorm.split=on").unwrap();
        caps.tuning.set_pair("groupnorm.k=1").unwrap();
        let k = lowered(&caps, DType::F32, &[2, 4, 300], 2);
        // 600 elements per group in 256-element tiles: 3 chunks
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].1, Grid::Workgroups([4 * 3, 1, 1]));
        caps.tuning.set_pair("groupnorm.split=off").unwrap();
        assert_eq!(lowered(&caps, DType::F32, &[2, 4, 300], 2).len(), 1);
        // a group too large to hold splits whatever the override
        assert_eq!(lowered(&caps, DType::F32, &[1, 1, MAX_HELD + 1], 1).len(), 2);
    }

    #[test]
    fn bad_operands_are_errors() {
        let caps = DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let x = Operand::whole(Buf::In(0), DType::F32, vec![2, 6, 3]).unwrap();
        let gamma = Operand::whole(Buf::In(1), DType::F32, vec![6]).unwrap();
        let out = Operand::whole(Buf::Out(0), DType::F32, vec![2, 6, 3]).unwrap();
        let bad = GroupNormAttrs { num_groups: 4, eps: 1e-5 };
        let e = group_norm(&mut b, &bad, &x, &gamma, None, &out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Attribute);
        let short = Operand::whole(Buf::In(1), DType::F32, vec![5]).unwrap();
        let e = layer_norm_2d(&mut b, &LayerNorm2dAttrs::default(), &x, &short, None, &out).unwrap_err();
        assert!(e.message().contains("gamma"), "{e}");
        let xi = Operand::whole(Buf::In(0), DType::I32, vec![2, 6, 3]).unwrap();
        let e = layer_norm_2d(&mut b, &LayerNorm2dAttrs::default(), &xi, &gamma, None, &out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Shape);
    }
}
