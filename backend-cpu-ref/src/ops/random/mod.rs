//! RngBits, RngUniform, RngNormal and Sample (§2.12), all on the Philox4x32-10 stream of §1.9.
//!
//! These ops fix their arithmetic precision, so unlike the rest of cpu-ref they do not compute in
//! f64: for F32/F16/BF16 outputs (and every `Sample`) the values are computed in f32 operation by
//! operation, exactly as a GPU shader would, and only F64 outputs are computed in f64.

use crate::layout::{count, Bindings};
use crate::mem::try_vec;
use crate::value::{floats, from_floats, from_scalars, Scalar};
use backend_api::op::{RngBitsAttrs, RngNormalAttrs, RngUniformAttrs, SampleAttrs};
use backend_api::philox::philox4x32_10;
use backend_api::{bail, DType, Result, Tensor};

/// `2^-24`, the weight of one step of a 24-bit uniform.
const STEP: f64 = 1.0 / 16_777_216.0;

/// The `(key_lo, key_hi)` pair of a U32 `[2]` key tensor.
pub(crate) fn read_key(key: &Tensor, op: &str) -> Result<[u32; 2]> {
    if key.dtype() != DType::U32 {
        bail!(DType, "{op} key must be U32[2], got {}{:?}", key.dtype(), key.shape());
    }
    if key.shape() != [2] {
        bail!(Shape, "{op} key must be U32[2], got {}{:?}", key.dtype(), key.shape());
    }
    match key.to_vec::<u32>()?.as_slice() {
        &[lo, hi] => Ok([lo, hi]),
        _ => bail!(Shape, "{op} key must hold two words"),
    }
}

/// Block `b` of the stream: words `4b … 4b+3` (§1.9).
pub(crate) fn block(key: [u32; 2], seed: u64, b: u64) -> [u32; 4] {
    philox4x32_10([b as u32, (b >> 32) as u32, seed as u32, (seed >> 32) as u32], key)
}

/// The first `n` stream words, one Philox call per block of four (allocated fallibly).
fn words(key: [u32; 2], seed: u64, n: usize) -> Result<Vec<u32>> {
    let mut w = try_vec(n)?;
    for b in 0..n.div_ceil(4) {
        let blk = block(key, seed, b as u64);
        w.extend(blk.iter().take(n - 4 * b));
    }
    Ok(w)
}

/// `(word >> 8) · 2^-24`, exact in every float dtype.
fn unit(word: u32) -> f64 {
    (word >> 8) as f64 * STEP
}

/// `out[e] = word(e)` (§2.12.1).
pub fn rng_bits(key: &Tensor, a: &RngBitsAttrs, bindings: &Bindings) -> Result<Tensor> {
    let k = read_key(key, "RngBits")?;
    let dims = bindings.resolve(&a.shape)?;
    let w: Vec<Scalar> = words(k, a.seed, count(&dims)?)?.into_iter().map(|w| Scalar::I(w as i128)).collect();
    from_scalars(DType::U32, &dims, &w)
}

/// `out[e] = low + (high − low) · uniform(e)` (§2.12.2), in f32 for F32/F16/BF16 (bounds
/// converted to f32 first, then one f32 subtraction, multiplication and addition), in f64 for F64,
/// and rounded to the output dtype.
pub fn rng_uniform(key: &Tensor, a: &RngUniformAttrs, bindings: &Bindings) -> Result<Tensor> {
    let k = read_key(key, "RngUniform")?;
    let dims = bindings.resolve(&a.shape)?;
    let u = words(k, a.seed, count(&dims)?)?.into_iter().map(unit);
    let v: Vec<f64> = if a.dtype == DType::F64 {
        u.map(|u| a.low + (a.high - a.low) * u).collect()
    } else {
        let (lo, hi) = (a.low as f32, a.high as f32);
        u.map(|u| (lo + (hi - lo) * u as f32) as f64).collect()
    };
    from_floats(a.dtype, &dims, &v)
}

/// Box–Muller in f64 from the word pair `(w0, w1)`: `r·cos θ` (`odd = false`) or `r·sin θ`.
pub(crate) fn box_muller_f64(w0: u32, w1: u32, odd: bool) -> f64 {
    let u1 = ((w0 >> 8) + 1) as f64 * STEP;
    let u2 = (w1 >> 8) as f64 * STEP;
    let r = (-2.0 * u1.ln()).sqrt();
    let theta = std::f64::consts::TAU * u2;
    if odd {
        r * theta.sin()
    } else {
        r * theta.cos()
    }
}

/// Box–Muller in f32, every operation rounded to f32 (u1 and u2 are exact in f32).
pub(crate) fn box_muller_f32(w0: u32, w1: u32, odd: bool) -> f32 {
    let u1 = ((w0 >> 8) + 1) as f32 * STEP as f32;
    let u2 = (w1 >> 8) as f32 * STEP as f32;
    let r = (-2.0f32 * u1.ln()).sqrt();
    let theta = std::f32::consts::TAU * u2;
    if odd {
        r * theta.sin()
    } else {
        r * theta.cos()
    }
}

/// `out[e] = mean + std · z(e)` (§2.12.3): element `e` uses words `2⌊e/2⌋` and `2⌊e/2⌋ + 1`
/// (the pair `(e mod 4) div 2` of block `e div 4`), cosine for even `e`, sine for odd `e`.
pub fn rng_normal(key: &Tensor, a: &RngNormalAttrs, bindings: &Bindings) -> Result<Tensor> {
    let k = read_key(key, "RngNormal")?;
    let dims = bindings.resolve(&a.shape)?;
    let n = count(&dims)?;
    // Round up to whole pairs so that the last odd element's partner word exists.
    let Some(even) = n.checked_add(n % 2) else { bail!(Shape, "RngNormal of {dims:?}: too many elements") };
    let w = words(k, a.seed, even)?;
    let (m32, s32) = (a.mean as f32, a.std as f32);
    let mut v = try_vec(n)?;
    for (e, pair) in (0..n).zip(w.chunks_exact(2).flat_map(|p| [p, p])) {
        let odd = e % 2 == 1;
        v.push(if a.dtype == DType::F64 {
            a.mean + a.std * box_muller_f64(pair[0], pair[1], odd)
        } else {
            (m32 + s32 * box_muller_f32(pair[0], pair[1], odd)) as f64
        });
    }
    from_floats(a.dtype, &dims, &v)
}

/// One token per row of `logits` (§2.12.4); row `r` draws with `uniform(r)`.
pub fn sample(logits: &Tensor, key: &Tensor, a: &SampleAttrs) -> Result<Tensor> {
    let k = read_key(key, "Sample")?;
    let dims = logits.shape();
    if !matches!(logits.dtype(), DType::F32 | DType::F16 | DType::BF16) {
        bail!(DType, "Sample logits must be F32, F16 or BF16, got {}{dims:?}", logits.dtype());
    }
    if dims.is_empty() {
        bail!(Shape, "Sample logits must be [..., V] (rank >= 1), got a scalar");
    }
    if !(a.temperature.is_finite() && a.temperature >= 0.0 && a.top_p > 0.0 && a.top_p <= 1.0) {
        bail!(Attribute, "Sample temperature {} / top_p {} out of range", a.temperature, a.top_p);
    }
    if a.index_dtype != DType::I32 && a.index_dtype != DType::I64 {
        bail!(Attribute, "Sample index_dtype must be I32 or I64, got {}", a.index_dtype);
    }
    let v = dims[dims.len() - 1];
    if v == 0 {
        bail!(Shape, "Sample logits {dims:?} have an empty vocabulary");
    }
    // F16/BF16 values convert exactly to f32; NaN logits count as −∞.
    let x: Vec<f32> = floats(logits, "Sample logits")?
        .into_iter()
        .map(|x| if x.is_nan() { f32::NEG_INFINITY } else { x as f32 })
        .collect();
    let rows = x.len() / v;
    let w = words(k, a.seed, if a.temperature == 0.0 { 0 } else { rows })?;
    let mut out = try_vec(rows)?;
    for (r, row) in x.chunks_exact(v).enumerate() {
        let u = w.get(r).map_or(0.0, |&w| unit(w) as f32);
        out.push(Scalar::I(sample_row(row, a, u) as i128));
    }
    from_scalars(a.index_dtype, &dims[..dims.len() - 1], &out)
}

/// The token of one row given its uniform `u` (exact in f32).
fn sample_row(x: &[f32], a: &SampleAttrs, u: f32) -> usize {
    if a.temperature == 0.0 {
        // Strictly greater only: the smallest index of the maximum; 0 if every logit is −∞.
        return (1..x.len()).fold(0, |b, i| if x[i] > x[b] { i } else { b });
    }
    let Some(p) = probabilities(x, a.temperature) else {
        return 0;
    };
    draw(&p, &kept(&p, a.top_k, a.top_p), u)
}

/// Step 2: `p = softmax(x / temperature)` in f32, sums in index order; `None` when every `z` is
/// −∞; the `+∞` limit (uniform over the `+∞` entries) when the max is `+∞`.
fn probabilities(x: &[f32], temperature: f32) -> Option<Vec<f32>> {
    let z: Vec<f32> = x.iter().map(|&v| v / temperature).collect();
    // No NaN can occur: NaN logits became −∞ and the temperature is finite and > 0.
    let m = z.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    if m == f32::NEG_INFINITY {
        return None;
    }
    if m == f32::INFINITY {
        let n_inf = z.iter().filter(|&&v| v == f32::INFINITY).count();
        let q = 1.0f32 / n_inf as f32;
        return Some(z.iter().map(|&v| if v == f32::INFINITY { q } else { 0.0 }).collect());
    }
    let e: Vec<f32> = z.iter().map(|&v| (v - m).exp()).collect();
    let s = e.iter().fold(0.0f32, |s, &v| s + v);
    Some(e.iter().map(|&v| v / s).collect())
}

/// Steps 3–5: which tokens survive top-k and then top-p (renormalised over the top-k set).
fn kept(p: &[f32], top_k: u32, top_p: f32) -> Vec<bool> {
    let n = p.len();
    let mut order: Vec<usize> = (0..n).collect();
    // Stable sort by p descending: ties keep index order. No p is NaN.
    order.sort_by(|&i, &j| p[j].partial_cmp(&p[i]).unwrap_or(std::cmp::Ordering::Equal));
    let top_k = top_k as usize;
    let mut len = if top_k > 0 && top_k < n { top_k } else { n };
    if top_p < 1.0 {
        let total = order[..len].iter().fold(0.0f32, |s, &i| s + p[i]);
        let target = top_p * total;
        let mut run = 0.0f32;
        // The running sum ends at `total` ≥ `target`, so the loop always finds a prefix.
        for (c, &i) in order[..len].iter().enumerate() {
            run += p[i];
            if run >= target {
                len = c + 1;
                break;
            }
        }
    }
    let mut keep = vec![false; n];
    for &i in &order[..len] {
        keep[i] = true;
    }
    keep
}

/// Step 6: inverse CDF over the kept tokens in ascending index order, f32 running sums.
fn draw(p: &[f32], keep: &[bool], u: f32) -> usize {
    let kept = || (0..p.len()).filter(|&i| keep[i]);
    let total = kept().fold(0.0f32, |s, i| s + p[i]);
    let target = u * total;
    let mut run = 0.0f32;
    for i in kept() {
        run += p[i];
        if run > target {
            return i;
        }
    }
    // Only when `u · T` rounded up to `T`: the largest kept index with p > 0.
    kept().rfind(|&i| p[i] > 0.0).unwrap_or(0)
}

#[cfg(test)]
mod tests;
