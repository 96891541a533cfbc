//! Generators for `RngBits`, `RngUniform`, `RngNormal` and `Sample` (§2.12): output shapes of
//! rank 0–4 (empty ones included), keys and op seeds across the full u32/u64 range (high words
//! set), bounds and moments including `low = high` and `std = 0`; `Sample` with greedy,
//! temperature, top-k and top-p settings on logits with masked (−∞) and NaN entries.
//!
//! `Sample` is Exact under the spec's conformance rule: every generated row keeps `u · T` at least
//! 1e−4·T from every running-sum boundary of the reference and the probabilities that decide the
//! top-k/top-p cut at least 1e−4 (relative) apart. This is checked here on the host with the f32
//! arithmetic of §2.12.4 and `backend_api::philox`; a row failing it is redrawn, and a problem
//! whose rows cannot all be made safe falls back to greedy sampling (always exact).

use super::{per_dtype, skeleton, Skeleton, Variant};
use crate::problem::{Generated, ProblemBuilder};
use crate::shapes::MAX_NUMEL;
use crate::values::{float_tensor, Rng};
use backend_api::op::SampleAttrs;
use backend_api::philox::uniform;
use backend_api::{DType, Tensor};
use proptest::prelude::*;

/// Vocabulary sizes above this are unlikely to meet the boundary rule unfiltered; keep rows short.
const SAMPLE_NUMEL: usize = 20_000;
/// Redraws of one row's logits before the problem falls back to greedy.
const ROW_TRIES: usize = 40;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Bits,
    Uniform,
    Normal,
    Sample,
}

/// Variants for the randomness rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "RngBits" => Kind::Bits,
        "RngUniform" => Kind::Uniform,
        "RngNormal" => Kind::Normal,
        "Sample" => Kind::Sample,
        _ => return None,
    };
    per_dtype(row, move |dtype| {
        let (ranks, cap) = if kind == Kind::Sample { (1..=3, SAMPLE_NUMEL) } else { (0..=4, MAX_NUMEL) };
        skeleton(ranks, cap, 1)
            .prop_map(move |sk| match kind {
                Kind::Sample => sample_case(dtype, &sk),
                Kind::Bits | Kind::Uniform | Kind::Normal => rng_case(kind, dtype, &sk),
            })
            .boxed()
    })
}

/// A key: small, large or arbitrary words.
fn key_words(rng: &mut Rng) -> [u32; 2] {
    match rng.below(4) {
        0 => [0, 0],
        1 => [rng.below(16) as u32, rng.below(16) as u32],
        2 => [u32::MAX, u32::MAX - rng.below(4) as u32],
        _ => [rng.next_u64() as u32, rng.next_u64() as u32],
    }
}

/// An op seed: 0, small, or with the high word set.
fn op_seed(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => 0,
        1 => rng.below(100) as u64,
        _ => rng.next_u64(),
    }
}

fn rng_case(kind: Kind, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let key = Tensor::from_slice(&[2], &key_words(&mut rng))?;
    let seed = op_seed(&mut rng);
    let mut pb = ProblemBuilder::new();
    let k = pb.leaf(sk.kind(0), key)?;
    let shape = sk.shape.clone();
    let y = match kind {
        Kind::Uniform => {
            let (lo, hi) =
                rng.pick(&[(0.0, 1.0), (-1.0, 1.0), (-3.5, 10.25), (2.0, 2.0), (1e-3, 2e-3), (-1e4, 1e4), (-0.5, 0.0)]);
            pb.g().rng_uniform(k, shape, dtype, lo, hi, seed)?
        }
        Kind::Normal => {
            let (m, s) = rng.pick(&[(0.0, 1.0), (0.0, 0.02), (1.5, 3.0), (-4.0, 0.0), (10.0, 0.5)]);
            pb.g().rng_normal(k, shape, dtype, m, s, seed)?
        }
        Kind::Bits | Kind::Sample => pb.g().rng_bits(k, shape, seed)?,
    };
    pb.finish(&[y])
}

/// One row's logits: uniform at a random scale, with some −∞ (masked) and NaN entries.
fn row_logits(rng: &mut Rng, v: usize, scale: f64, rate: f64) -> Vec<f64> {
    (0..v)
        .map(|_| {
            if rng.chance(rate) {
                rng.pick(&[f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NAN])
            } else {
                rng.uniform(-scale, scale)
            }
        })
        .collect()
}

fn sample_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mut shape = sk.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = (*last).max(1);
    }
    let v = shape.last().copied().unwrap_or(1);
    let rows: usize = shape[..shape.len() - 1].iter().product();
    let words = key_words(&mut rng);
    let mut a = SampleAttrs {
        temperature: rng.pick(&[0.0f32, 1.0, 1.0, 0.7, 1.5, 0.25]),
        top_k: if rng.chance(0.5) { 0 } else { 1 + rng.below(v.min(64)) as u32 },
        top_p: rng.pick(&[1.0f32, 1.0, 0.9, 0.5, 0.95]),
        seed: op_seed(&mut rng),
        index_dtype: if rng.chance(0.5) { DType::I32 } else { DType::I64 },
    };
    let scale = rng.pick(&[2.0, 5.0, 15.0]);
    let rate = (sk.rate / 4.0).min(0.2);
    let mut vals = Vec::with_capacity(rows * v);
    for r in 0..rows {
        let u = uniform(words, a.seed, r as u64) as f32;
        let mut row = row_logits(&mut rng, v, scale, rate);
        let mut tries = 0;
        while a.temperature != 0.0 && !row_is_safe(&rounded(dtype, &row)?, &a, u) {
            tries += 1;
            if tries >= ROW_TRIES {
                a.temperature = 0.0;
                break;
            }
            row = row_logits(&mut rng, v, scale, rate);
        }
        vals.extend(row);
    }
    let x = float_tensor(dtype, &shape, &vals)?;
    let key = Tensor::from_slice(&[2], &words)?;
    let mut pb = ProblemBuilder::new();
    let xv = pb.leaf(sk.kind(0), x)?;
    let kv = pb.leaf(crate::problem::LeafKind::Input, key)?;
    let y = pb.g().sample(xv, kv, a)?;
    pb.finish(&[y])
}

/// The row as the op sees it: rounded to `dtype`, then f32.
fn rounded(dtype: DType, row: &[f64]) -> backend_api::Result<Vec<f32>> {
    let t = float_tensor(dtype, &[row.len()], row)?;
    Ok(t.view().to_f64_lossy().into_iter().map(|x| x as f32).collect())
}

/// Whether `a` and `b` are at least 1e−4 apart relative to the larger; exact zeros tie safely
/// (they are exactly 0 on every backend and never drawn).
fn far(a: f32, b: f32) -> bool {
    (a == 0.0 && b == 0.0) || (a - b).abs() >= 1e-4 * a.abs().max(b.abs())
}

/// §2.12.4 steps 2–5 in f32 (sums in order, as the reference): the kept set, or `None` when the
/// maximum is not finite (ties of 1/n∞) or a cut is closer than the rule allows.
fn kept_set(x: &[f32], a: &SampleAttrs) -> Option<(Vec<f32>, Vec<bool>)> {
    let x: Vec<f32> = x.iter().map(|&v| if v.is_nan() { f32::NEG_INFINITY } else { v }).collect();
    let n = x.len();
    let z: Vec<f32> = x.iter().map(|&v| v / a.temperature).collect();
    let m = z.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    if !m.is_finite() {
        return None;
    }
    let e: Vec<f32> = z.iter().map(|&v| (v - m).exp()).collect();
    let s = e.iter().fold(0.0f32, |s, &v| s + v);
    let p: Vec<f32> = e.iter().map(|&v| v / s).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| p[j].partial_cmp(&p[i]).unwrap_or(std::cmp::Ordering::Equal));
    let mut len = n;
    if a.top_k > 0 && (a.top_k as usize) < n {
        len = a.top_k as usize;
        if !far(p[order[len - 1]], p[order[len]]) {
            return None;
        }
    }
    if a.top_p < 1.0 {
        let total = order[..len].iter().fold(0.0f32, |s, &i| s + p[i]);
        let goal = a.top_p * total;
        let mut run = 0.0f32;
        for c in 0..len {
            let before = run;
            run += p[order[c]];
            if run >= goal {
                let last = c + 1 == len;
                if !far(before, goal) || !last && (!far(run, goal) || !far(p[order[c]], p[order[c + 1]])) {
                    return None;
                }
                len = c + 1;
                break;
            }
        }
    }
    let mut keep = vec![false; n];
    for &i in &order[..len] {
        keep[i] = true;
    }
    Some((p, keep))
}

/// The spec's conformance rule for one row with uniform `u` (always true for greedy).
pub(crate) fn row_is_safe(x: &[f32], a: &SampleAttrs, u: f32) -> bool {
    if a.temperature == 0.0 {
        return true;
    }
    let Some((p, keep)) = kept_set(x, a) else {
        return false;
    };
    let kept = || (0..p.len()).filter(|&i| keep[i]);
    let total = kept().fold(0.0f32, |s, i| s + p[i]);
    let goal = u * total;
    let mut run = 0.0f32;
    for i in kept() {
        run += p[i];
        if (run - goal).abs() < 1e-4 * total {
            return false;
        }
    }
    // the boundary at 0 (before the first kept token)
    goal >= 1e-4 * total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_cuts_and_boundaries_are_rejected() {
        let a = SampleAttrs { top_k: 1, ..SampleAttrs::default() };
        assert!(!row_is_safe(&[1.0, 1.0, 0.0], &a, 0.5), "tied top-1 cut");
        assert!(row_is_safe(&[3.0, 1.0, 0.0], &a, 0.5));
        let b = SampleAttrs::default();
        // p = (0.5, 0.5): u = 0.5 sits on the boundary
        assert!(!row_is_safe(&[0.0, 0.0], &b, 0.5));
        assert!(row_is_safe(&[0.0, 0.0], &b, 0.3));
        let g = SampleAttrs { temperature: 0.0, ..SampleAttrs::default() };
        assert!(row_is_safe(&[f32::NAN, 1.0], &g, 0.5));
    }
}

#[cfg(test)]
mod fallback {
    use super::*;
    use crate::problem::LeafKind;
    use backend_api::op::Op;

    #[test]
    fn most_sample_problems_keep_their_temperature() {
        let shapes: [&[usize]; 6] = [&[5], &[3, 7], &[2, 65], &[257], &[4, 255], &[2, 3, 64]];
        let (mut sampled, mut total) = (0, 0);
        for s in 0..300u64 {
            let sk =
                Skeleton { shape: shapes[s as usize % 6].to_vec(), kinds: vec![LeafKind::Input], seed: s, rate: 0.1 };
            let p = sample_case(DType::F32, &sk).unwrap();
            for n in p.graph.nodes() {
                if let Op::Sample(a) = &n.op {
                    total += 1;
                    sampled += usize::from(a.temperature != 0.0);
                }
            }
        }
        // temperature 0 is drawn for 1 in 6; falling back to greedy must stay rare
        assert!(sampled * 10 >= total * 7, "only {sampled} of {total} Sample problems are not greedy");
    }
}
