//! Generators for the shape and movement ops (§2.3): `Reshape` (incl. `-1` and zero-sized
//! shapes), `Transpose` (every permutation, negative entries), `Reverse` (any subset of axes), `Narrow` (every axis, negative
//! starts, steps, empty results), `Concat` (1–4 inputs, zero-sized ones), `Expand` (rank growth,
//! 1 → 0), `Pad` (all three modes, per-axis pads up to the mode's limits). All dtypes; values
//! are arbitrary bits of the dtype, subnormals and NaNs included, since these ops only move them.

use super::{per_dtype, skeleton, Skeleton, Variant};
use crate::problem::{Generated, ProblemBuilder};
use crate::shapes::{axis_form, broadcast_partner, numel, support, MAX_NUMEL};
use crate::values::{any_tensor, Rng};
use backend_api::op::PadMode;
use backend_api::DType;
use proptest::prelude::*;

type CaseFn = fn(DType, &Skeleton) -> Generated;

/// Variants for the movement rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let (ranks, case): (std::ops::RangeInclusive<usize>, CaseFn) = match row {
        "Reshape" => (0..=5, reshape_case),
        "Transpose" => (0..=5, transpose_case),
        "Reverse" => (0..=5, reverse_case),
        "Narrow" => (1..=5, narrow_case),
        "Concat" => (1..=5, concat_case),
        "Expand" => (0..=5, expand_case),
        "Pad" => (0..=5, pad_case),
        _ => return None,
    };
    per_dtype(row, move |dtype| skeleton(ranks.clone(), MAX_NUMEL / 4, 4).prop_map(move |sk| case(dtype, &sk)).boxed())
}

fn single_input(
    dtype: DType,
    sk: &Skeleton,
    rng: &mut Rng,
) -> backend_api::Result<(ProblemBuilder, backend_api::Value)> {
    let t = any_tensor(rng, dtype, &sk.shape, sk.rate, true)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), t)?;
    Ok((pb, x))
}

fn reshape_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let target = reshape_target(&mut rng, &sk.shape);
    let (mut pb, x) = single_input(dtype, sk, &mut rng)?;
    let y = pb.g().reshape(x, &target)?;
    pb.finish(&[y])
}

/// A random shape with the element count of `dims` (at most one entry written as −1).
fn reshape_target(rng: &mut Rng, dims: &[usize]) -> Vec<i64> {
    let n = numel(dims);
    let rank = rng.below(6);
    let t: Vec<usize> = if n == 0 {
        let mut t: Vec<usize> = (0..rank.max(1)).map(|_| rng.pick(&[1, 2, 3, 5])).collect();
        let i = rng.below(t.len());
        t[i] = 0;
        t
    } else {
        let r = if n == 1 { rank } else { rank.max(1) };
        let mut t = vec![1usize; r];
        for f in prime_factors(n) {
            let i = rng.below(r);
            if let Some(d) = t.get_mut(i) {
                *d *= f;
            }
        }
        t
    };
    let mut out: Vec<i64> = t.iter().map(|&d| d as i64).collect();
    if !out.is_empty() && rng.chance(0.3) {
        let i = rng.below(out.len());
        let others: usize = t.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, d)| *d).product();
        if others != 0 {
            out[i] = -1;
        }
    }
    out
}

fn prime_factors(mut n: usize) -> Vec<usize> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            f.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        f.push(n);
    }
    f
}

fn transpose_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let r = sk.shape.len();
    let perm: Vec<i64> = rng.permutation(r).into_iter().map(|p| axis_form(&mut rng, p, r)).collect();
    let (mut pb, x) = single_input(dtype, sk, &mut rng)?;
    let y = pb.g().transpose(x, &perm)?;
    pb.finish(&[y])
}

/// A random subset of the axes (possibly empty), in random order and forms (negative or not).
fn reverse_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let r = sk.shape.len();
    let keep = rng.below(r + 1);
    let axes: Vec<i64> = rng.permutation(r).into_iter().take(keep).map(|a| axis_form(&mut rng, a, r)).collect();
    let (mut pb, x) = single_input(dtype, sk, &mut rng)?;
    let y = pb.g().reverse(x, &axes)?;
    pb.finish(&[y])
}

fn narrow_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let r = sk.shape.len();
    let axis = rng.below(r);
    let d = sk.shape.get(axis).copied().unwrap_or(0);
    let step = rng.pick(&[1, 1, 1, 2, 3, 5, d.max(1)]);
    let start = rng.int_in(0, d as i64) as usize;
    let max_len = if start < d { (d - 1 - start) / step + 1 } else { 0 };
    let len = match rng.below(10) {
        0 => 0,
        1..=3 => max_len,
        _ => rng.int_in(1.min(max_len as i64), max_len as i64) as usize,
    };
    let start_form = if start > 0 && start < d && rng.chance(0.3) { start as i64 - d as i64 } else { start as i64 };
    let (mut pb, x) = single_input(dtype, sk, &mut rng)?;
    let y = pb.g().narrow(x, axis_form(&mut rng, axis, r), start_form, len, step)?;
    pb.finish(&[y])
}

fn concat_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let r = sk.shape.len();
    let axis = rng.below(r);
    let n = 1 + rng.below(4);
    let mut pb = ProblemBuilder::new();
    let mut xs = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = sk.shape.clone();
        if let Some(d) = s.get_mut(axis) {
            *d = rng.pick(&[0, 1, 2, 3, 5, 63, 64, 65]);
        }
        if support(&s) > MAX_NUMEL / 8 {
            if let Some(d) = s.get_mut(axis) {
                *d = rng.pick(&[0, 1]);
            }
        }
        let t = any_tensor(&mut rng, dtype, &s, sk.rate, true)?;
        xs.push(pb.leaf(sk.kind(i), t)?);
    }
    let y = pb.g().concat(&xs, axis_form(&mut rng, axis, r))?;
    pb.finish(&[y])
}

fn expand_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let target = sk.shape.clone();
    let x_shape = broadcast_partner(&mut rng, &target);
    let t = any_tensor(&mut rng, dtype, &x_shape, sk.rate, true)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), t)?;
    let y = pb.g().expand(x, target)?;
    pb.finish(&[y])
}

/// Fill values of `Pad` `Constant`, converted by the Cast rules: fractions truncate, large values
/// saturate integer dtypes or overflow F16.
const PAD_VALUES: &[f64] =
    &[0.0, -0.0, 1.0, -1.5, 2.5, 300.7, -300.7, 1e10, -1e10, 65504.0, 1e-3, 127.0, 255.0, -128.0, 4e9];

fn pad_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mode = match rng.below(3) {
        0 => PadMode::Constant { value: rng.pick(PAD_VALUES) },
        1 => PadMode::Reflect,
        _ => PadMode::Edge,
    };
    let mut pads = |d: usize| -> usize {
        let p = rng.pick(&[0, 0, 1, 2, 3, 5]);
        match mode {
            PadMode::Constant { .. } => p,
            PadMode::Reflect => p.min(d.saturating_sub(1)),
            PadMode::Edge if d == 0 => 0,
            PadMode::Edge => p,
        }
    };
    let begin: Vec<usize> = sk.shape.iter().map(|&d| pads(d)).collect();
    let end: Vec<usize> = sk.shape.iter().map(|&d| pads(d)).collect();
    let out: Vec<usize> = sk.shape.iter().zip(begin.iter().zip(&end)).map(|(d, (b, e))| d + b + e).collect();
    let (begin, end) = if support(&out) > MAX_NUMEL { (vec![0; out.len()], vec![0; out.len()]) } else { (begin, end) };
    let (mut pb, x) = single_input(dtype, sk, &mut rng)?;
    let y = pb.g().pad(x, &begin, &end, mode)?;
    pb.finish(&[y])
}
