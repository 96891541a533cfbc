//! GroupedMatMul, QuantMatMul, QuantGroupedMatMul (§2.6.4–2.6.7).

use super::util::{dtype_is, index_input, out, rank_is, shape_is, st};
use crate::infer::{arity, dtype_in};
use crate::op::{GroupedMatMulAttrs, QuantFormat, QuantMatMulAttrs};
use crate::{bail, DType, DTypeSet, Dim, Result, TensorType};

pub(crate) fn grouped_matmul(_a: &GroupedMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "GroupedMatMul")?;
    let (x, w, e) = (&ins[0], &ins[1], &ins[2]);
    dtype_in(x, DTypeSet::FLOAT, "GroupedMatMul input x")?;
    if w.dtype != x.dtype {
        bail!(DType, "GroupedMatMul w {w} must have the dtype of x {x}");
    }
    index_input(e, "GroupedMatMul input expert")?;
    rank_is(x, 2, "GroupedMatMul x ([M, K])")?;
    rank_is(w, 3, "GroupedMatMul w ([E, K, N])")?;
    if w.shape.0[1] != x.shape.0[1] {
        bail!(Shape, "GroupedMatMul K mismatch: x {x} has K = {}, w {w} has K = {}", x.shape.0[1], w.shape.0[1]);
    }
    shape_is(e, &x.shape.0[..1], "GroupedMatMul expert ([M])")?;
    Ok(vec![out(x.dtype, vec![x.shape.0[0].clone(), w.shape.0[2].clone()])?])
}

pub(crate) fn quant_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let nw = a.format.num_weight_inputs();
    arity(ins, 1 + nw, &format!("QuantMatMul ({}: x and {nw} weight input(s))", a.format.name()))?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, "QuantMatMul input x")?;
    if x.rank() == 0 {
        bail!(Shape, "QuantMatMul x {x} must have rank >= 1 ([..., K])");
    }
    let k = super::util::static_at(x, x.rank() - 1, "QuantMatMul x (K)")?;
    let n = check_weights(a.format, k, &ins[1..])?;
    let mut dims = x.shape.0[..x.rank() - 1].to_vec();
    dims.push(st(n));
    Ok(vec![out(x.dtype, dims)?])
}

pub(crate) fn quant_grouped_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let nw = a.format.num_weight_inputs();
    arity(ins, 2 + nw, &format!("QuantGroupedMatMul ({}: x, {nw} weight input(s), expert)", a.format.name()))?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, "QuantGroupedMatMul input x")?;
    rank_is(x, 2, "QuantGroupedMatMul x ([M, K])")?;
    let k = super::util::static_at(x, 1, "QuantGroupedMatMul x (K)")?;
    let weights = &ins[1..1 + nw];
    let expert = &ins[1 + nw];
    index_input(expert, "QuantGroupedMatMul input expert")?;
    shape_is(expert, &x.shape.0[..1], "QuantGroupedMatMul expert ([M])")?;
    let mut lead: Option<&Dim> = None;
    let mut per_expert = Vec::with_capacity(nw);
    for (i, w) in weights.iter().enumerate() {
        let Some(e) = w.shape.0.first() else {
            bail!(Shape, "QuantGroupedMatMul weight input {i} {w} needs a leading expert dim E");
        };
        if let Some(prev) = lead {
            if prev != e {
                bail!(Shape, "QuantGroupedMatMul weight inputs disagree on E: {prev} and {e} (input {i} {w})");
            }
        }
        lead = Some(e);
        per_expert.push(TensorType { dtype: w.dtype, shape: crate::Shape(w.shape.0[1..].to_vec()) });
    }
    let n = check_weights(a.format, k, &per_expert).map_err(|e| e.context("per-expert weight slice"))?;
    Ok(vec![out(x.dtype, vec![x.shape.0[0].clone(), st(n)])?])
}

/// Checks the weight inputs of `format` for `K = k` and returns `N`.
fn check_weights(format: QuantFormat, k: usize, ws: &[TensorType]) -> Result<usize> {
    let w = &ws[0];
    rank_is(w, 2, &format!("{} weight w", format.name()))?;
    let n = super::util::static_at(w, 0, &format!("{} weight w (N)", format.name()))?;
    match format {
        QuantFormat::Int8Block { block_size } => {
            dtype_is(w, DType::I8, "Int8Block w")?;
            shape_is(w, &[st(n), st(k)], "Int8Block w ([N, K])")?;
            check_scale(&ws[1], n, k, block_size, "Int8Block scale")?;
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            dtype_in(w, DTypeSet::of(&[DType::U8, DType::I8]), "Int8BlockAsym w")?;
            shape_is(w, &[st(n), st(k)], "Int8BlockAsym w ([N, K])")?;
            check_scale(&ws[1], n, k, block_size, "Int8BlockAsym scale")?;
            dtype_is(&ws[2], ws[1].dtype, "Int8BlockAsym zero (dtype of scale)")?;
            shape_is(&ws[2], &ws[1].shape.0, "Int8BlockAsym zero (shape of scale)")?;
        }
        QuantFormat::Int4Block { block_size } => {
            dtype_is(w, DType::U8, "Int4Block w")?;
            shape_is(w, &[st(n), st(k.div_ceil(2))], "Int4Block w ([N, ceil(K/2)])")?;
            check_scale(&ws[1], n, k, block_size, "Int4Block scale")?;
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            dtype_is(w, DType::U8, "Fp8 w")?;
            shape_is(w, &[st(n), st(k)], "Fp8 w ([N, K])")?;
            let s = &ws[1];
            dtype_is(s, DType::F32, "Fp8 scale")?;
            if !(s.shape.0.is_empty() || s.shape.0 == [st(n)]) {
                bail!(Shape, "Fp8 scale {s} must have shape [] (per tensor) or [{n}] (per row)");
            }
        }
        QuantFormat::Nvfp4 => check_nvfp4(ws, n, k)?,
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
        | QuantFormat::Q8_K => check_ggml(format, w, n, k)?,
    }
    Ok(n)
}

fn block_ok(block_size: u32, what: &str) -> Result<usize> {
    if block_size == 0 {
        bail!(Attribute, "{what}: block_size must be >= 1");
    }
    Ok(block_size as usize)
}

/// A per-block scale: F32 or F16, `[N, ⌈K/B⌉]`.
fn check_scale(s: &TensorType, n: usize, k: usize, block_size: u32, what: &str) -> Result<()> {
    let bs = block_ok(block_size, what)?;
    dtype_in(s, DTypeSet::of(&[DType::F32, DType::F16]), what)?;
    shape_is(s, &[st(n), st(k.div_ceil(bs))], &format!("{what} ([N, ceil(K/{bs})])"))
}

fn check_nvfp4(ws: &[TensorType], n: usize, k: usize) -> Result<()> {
    if !k.is_multiple_of(16) {
        bail!(Shape, "Nvfp4 needs K a multiple of 16, got K = {k}");
    }
    dtype_is(&ws[0], DType::U8, "Nvfp4 w")?;
    shape_is(&ws[0], &[st(n), st(k / 2)], "Nvfp4 w ([N, K/2])")?;
    dtype_is(&ws[1], DType::U8, "Nvfp4 block_scale")?;
    shape_is(&ws[1], &[st(n), st(k / 16)], "Nvfp4 block_scale ([N, K/16])")?;
    dtype_is(&ws[2], DType::F32, "Nvfp4 global_scale")?;
    shape_is(&ws[2], &[], "Nvfp4 global_scale ([])")
}

fn check_ggml(format: QuantFormat, w: &TensorType, n: usize, k: usize) -> Result<()> {
    let Some((qk, bb)) = format.ggml_block() else {
        bail!(Attribute, "{} is not a GGML block format", format.name());
    };
    if !k.is_multiple_of(qk) {
        bail!(Shape, "{} needs K a multiple of {qk}, got K = {k}", format.name());
    }
    dtype_is(w, DType::U8, &format!("{} w", format.name()))?;
    let row_bytes = super::util::mul(k / qk, bb, &format!("{} row bytes", format.name()))?;
    shape_is(w, &[st(n), st(row_bytes)], &format!("{} w ([N, K/{qk}·{bb}])", format.name()))
}
