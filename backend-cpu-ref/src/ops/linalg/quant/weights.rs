//! The weight inputs of every format of §2.6.7: [`check`] validates their dtypes and shapes
//! against `K` and finds `N`; [`decode`] turns them into the f32 matrix `W[N, K]`, row by row,
//! with the per-family decoders. Both hold the one exhaustive `match` over [`QuantFormat`].

use super::{fp8, ggml, int, kquants, nvfp4};
use crate::mem::try_vec;
use backend_api::op::QuantFormat;
use backend_api::{bail, DType, Result, TensorView};
use std::num::NonZeroUsize;

/// A weight input's dtype and shape (for an expert slice: the shape without the leading `E`).
pub(crate) type WeightType<'a> = (DType, &'a [usize]);

/// What [`check`] reports errors about: the op's name, the format and `K`.
struct Ctx<'a> {
    op: &'a str,
    format: QuantFormat,
    k: usize,
}

impl Ctx<'_> {
    /// Checks that input `what` has one of `dtypes` and exactly `shape`.
    fn expect(&self, what: &str, t: WeightType<'_>, dtypes: &[DType], shape: &[usize]) -> Result<()> {
        let (op, name, k) = (self.op, self.format.name(), self.k);
        if !dtypes.contains(&t.0) {
            bail!(DType, "{op} {name} (K = {k}): {what} must be {dtypes:?}, got {}{:?}", t.0, t.1);
        }
        if t.1 != shape {
            bail!(Shape, "{op} {name} (K = {k}): {what} must have shape {shape:?}, got {}{:?}", t.0, t.1);
        }
        Ok(())
    }

    /// The block size `B` (≥ 1) of a scale-tensor format.
    fn block(&self, block_size: u32) -> Result<NonZeroUsize> {
        match usize::try_from(block_size).ok().and_then(NonZeroUsize::new) {
            Some(b) => Ok(b),
            None => bail!(Attribute, "{} {}: block_size must be >= 1, got {block_size}", self.op, self.format.name()),
        }
    }

    /// `K` must be a multiple of `q`.
    fn multiple(&self, q: usize) -> Result<()> {
        if !self.k.is_multiple_of(q) {
            bail!(Shape, "{} {} needs K a multiple of {q}, got K = {}", self.op, self.format.name(), self.k);
        }
        Ok(())
    }
}

/// Checks the weight inputs `ws` of `format` for `K = k` (§2.6.7) and returns `N`. `op` names the
/// op in errors.
pub(crate) fn check(format: QuantFormat, ws: &[WeightType<'_>], k: usize, op: &str) -> Result<usize> {
    let cx = Ctx { op, format, k };
    let nw = format.num_weight_inputs();
    let (Some(&w), true) = (ws.first(), ws.len() == nw) else {
        bail!(Arity, "{op} {} takes {nw} weight input(s), got {}", format.name(), ws.len());
    };
    let &[n, _] = w.1 else {
        bail!(Shape, "{op} {} (K = {k}): w must have rank 2 ([N, ...]), got {}{:?}", format.name(), w.0, w.1);
    };
    let scales = [DType::F32, DType::F16];
    match format {
        QuantFormat::Int8Block { block_size } => {
            let nb = k.div_ceil(cx.block(block_size)?.get());
            cx.expect("w", w, &[DType::I8], &[n, k])?;
            cx.expect("scale", ws[1], &scales, &[n, nb])?;
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            let nb = k.div_ceil(cx.block(block_size)?.get());
            cx.expect("w", w, &[DType::U8, DType::I8], &[n, k])?;
            cx.expect("scale", ws[1], &scales, &[n, nb])?;
            cx.expect("zero (dtype of scale)", ws[2], &[ws[1].0], &[n, nb])?;
        }
        QuantFormat::Int4Block { block_size } => {
            let nb = k.div_ceil(cx.block(block_size)?.get());
            cx.expect("w", w, &[DType::U8], &[n, k.div_ceil(2)])?;
            cx.expect("scale", ws[1], &scales, &[n, nb])?;
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            cx.expect("w", w, &[DType::U8], &[n, k])?;
            let per_row = [n];
            let shape: &[usize] = if ws[1].1.len() == 1 { &per_row } else { &[] };
            cx.expect("scale ([] or [N])", ws[1], &[DType::F32], shape)?;
        }
        QuantFormat::Nvfp4 => {
            cx.multiple(16)?;
            cx.expect("w", w, &[DType::U8], &[n, k / 2])?;
            cx.expect("block_scale", ws[1], &[DType::U8], &[n, k / 16])?;
            cx.expect("global_scale", ws[2], &[DType::F32], &[])?;
        }
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => {
            let (qk, bb) = ggml_block(format, op)?;
            cx.multiple(qk)?;
            let Some(row) = (k / qk).checked_mul(bb) else {
                bail!(Shape, "{op} {}: K = {k} gives a row of more than usize::MAX bytes", format.name());
            };
            cx.expect("w", w, &[DType::U8], &[n, row])?;
        }
    }
    Ok(n)
}

/// `(QK, BB)` of a GGML block format.
fn ggml_block(format: QuantFormat, op: &str) -> Result<(usize, usize)> {
    match format.ggml_block() {
        Some(qb) => Ok(qb),
        None => bail!(Attribute, "{op}: {} is not a GGML block format", format.name()),
    }
}

/// A GGML block decoder: one block's bytes in, its values appended.
type BlockFn = fn(&[u8], &mut Vec<f32>);

/// `N` and the decoded `W[N, K]` (row-major f32) of weight inputs `ws` for `K = k`, after
/// [`check`] (so every row split below is by a non-zero size that divides its input exactly).
pub(crate) fn decode(format: QuantFormat, ws: &[TensorView<'_>], k: usize, op: &str) -> Result<(usize, Vec<f32>)> {
    let types: Vec<WeightType<'_>> = ws.iter().map(|v| (v.dtype(), v.shape())).collect();
    let n = check(format, &types, k, op)?;
    let Some(len) = n.checked_mul(k) else {
        bail!(Shape, "{op} {}: W [{n}, {k}] has more than usize::MAX elements", format.name());
    };
    let mut out = try_vec(len)?;
    if len == 0 {
        return Ok((n, out));
    }
    let byte = |i: usize| ws.get(i).map(|t| t.bytes()).unwrap_or(&[]);
    let float = |i: usize| ws.get(i).map(f32s).unwrap_or_else(|| Ok(Vec::new()));
    match format {
        QuantFormat::Int8Block { block_size } => {
            let (b, scale) = (nonzero(block_size)?, float(1)?);
            for (w, s) in byte(0).chunks_exact(k).zip(scale.chunks_exact(k.div_ceil(b.get()))) {
                int::int8_block_row(w, s, b, &mut out);
            }
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            let (b, scale, zero) = (nonzero(block_size)?, float(1)?, float(2)?);
            let signed = ws.first().is_some_and(|t| t.dtype() == DType::I8);
            let nb = k.div_ceil(b.get());
            let rows = byte(0).chunks_exact(k).zip(scale.chunks_exact(nb).zip(zero.chunks_exact(nb)));
            for (w, sz) in rows {
                int::int8_asym_row(w, signed, sz, b, &mut out);
            }
        }
        QuantFormat::Int4Block { block_size } => {
            let (b, scale) = (nonzero(block_size)?, float(1)?);
            for (w, s) in byte(0).chunks_exact(k.div_ceil(2)).zip(scale.chunks_exact(k.div_ceil(b.get()))) {
                int::int4_block_row(w, k, s, b, &mut out);
            }
        }
        QuantFormat::Fp8E4m3 => fp8_rows(byte(0), &float(1)?, false, k, &mut out),
        QuantFormat::Fp8E5m2 => fp8_rows(byte(0), &float(1)?, true, k, &mut out),
        QuantFormat::Nvfp4 => {
            let global = float(2)?.first().copied().unwrap_or(f32::NAN);
            for (w, bs) in byte(0).chunks_exact(k / 2).zip(byte(1).chunks_exact(k / 16)) {
                nvfp4::nvfp4_row(w, bs, global, &mut out);
            }
        }
        QuantFormat::Q4_0 => ggml_rows(format, ggml::q4_0, byte(0), &mut out)?,
        QuantFormat::Q4_1 => ggml_rows(format, ggml::q4_1, byte(0), &mut out)?,
        QuantFormat::Q5_0 => ggml_rows(format, ggml::q5_0, byte(0), &mut out)?,
        QuantFormat::Q5_1 => ggml_rows(format, ggml::q5_1, byte(0), &mut out)?,
        QuantFormat::Q8_0 => ggml_rows(format, ggml::q8_0, byte(0), &mut out)?,
        QuantFormat::Q2_K => ggml_rows(format, kquants::q2_k, byte(0), &mut out)?,
        QuantFormat::Q3_K => ggml_rows(format, kquants::q3_k, byte(0), &mut out)?,
        QuantFormat::Q4_K => ggml_rows(format, kquants::q4_k, byte(0), &mut out)?,
        QuantFormat::Q5_K => ggml_rows(format, kquants::q5_k, byte(0), &mut out)?,
        QuantFormat::Q6_K => ggml_rows(format, kquants::q6_k, byte(0), &mut out)?,
        QuantFormat::Q8_K => ggml_rows(format, kquants::q8_k, byte(0), &mut out)?,
    }
    if out.len() != len {
        // Unreachable after `check`; an error rather than a silently short matrix.
        bail!(Shape, "{op} {}: weight inputs decode to {} values, not N·K = {len}", format.name(), out.len());
    }
    Ok((n, out))
}

/// `B` as a non-zero size (a `check`ed attribute, so the error is only a guard).
fn nonzero(block_size: u32) -> Result<NonZeroUsize> {
    match usize::try_from(block_size).ok().and_then(NonZeroUsize::new) {
        Some(b) => Ok(b),
        None => bail!(Attribute, "block_size must be >= 1, got {block_size}"),
    }
}

/// Fp8 rows of `k` codes each; `scale` is one value (per tensor) or one per row.
fn fp8_rows(w: &[u8], scale: &[f32], e5: bool, k: usize, out: &mut Vec<f32>) {
    for (i, row) in w.chunks_exact(k).enumerate() {
        let s = if scale.len() == 1 { scale.first() } else { scale.get(i) };
        fp8::fp8_row(row, e5, s.copied().unwrap_or(f32::NAN), out);
    }
}

/// GGML rows: `N · K/QK` consecutive blocks of `BB` bytes (rows are whole blocks, so the blocks
/// of all rows follow each other), decoded by `f`.
fn ggml_rows(format: QuantFormat, f: BlockFn, w: &[u8], out: &mut Vec<f32>) -> Result<()> {
    let (_, bb) = ggml_block(format, "QuantMatMul")?;
    for block in w.chunks_exact(bb) {
        f(block, out);
    }
    Ok(())
}

/// The values of an F32 or F16 tensor as f32 (exact).
fn f32s(t: &TensorView<'_>) -> Result<Vec<f32>> {
    let mut v = try_vec(t.numel())?;
    match t.dtype() {
        DType::F32 => v.extend(t.bytes().chunks_exact(4).map(|c| ggml::f32_at(c, 0))),
        DType::F16 => v.extend(t.bytes().chunks_exact(2).map(|c| ggml::f16_at(c, 0))),
        d => bail!(DType, "expected an F32 or F16 scale tensor, got {d}{:?}", t.shape()),
    }
    Ok(v)
}
