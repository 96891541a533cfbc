//! Generators for `ArgMax`, `ArgMin`, `TopK`, `Cumsum`, `CumsumBackward` (§2.5.2–2.5.6),
//! `SoftmaxCrossEntropy` (§2.7.3) and `SoftmaxCrossEntropyBackward` (§2.16.3): every axis
//! (negative forms too), ranks 1–5, zero-sized tensors, both index dtypes, `keep_dims`, every
//! scan direction, `k` from 0 to n. Values lean to ties (small integers) and carry the special
//! values (NaN, ±∞, ±0; integer extremes). Cumsum/CumsumBackward carry the magnitude `M` = the
//! same scan of `|x|`.

use super::{per_dtype, skeleton, Skeleton, Variant};
use crate::problem::{nth, Generated, ProblemBuilder};
use crate::shapes::{axis_form, MAX_NUMEL};
use crate::values::{FloatDomain, IntDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::DType;
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    ArgMax,
    ArgMin,
    TopK,
    Cumsum,
    CumsumBackward,
    Loss,
    LossBackward,
}

/// Variants for the ordering rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "ArgMax" => Kind::ArgMax,
        "ArgMin" => Kind::ArgMin,
        "TopK" => Kind::TopK,
        "Cumsum" => Kind::Cumsum,
        "CumsumBackward" => Kind::CumsumBackward,
        "SoftmaxCrossEntropy" => Kind::Loss,
        "SoftmaxCrossEntropyBackward" => Kind::LossBackward,
        _ => return None,
    };
    let leaves = match kind {
        Kind::Loss => 2,
        Kind::LossBackward => 3,
        Kind::ArgMax | Kind::ArgMin | Kind::TopK | Kind::Cumsum | Kind::CumsumBackward => 1,
    };
    per_dtype(row, move |dtype| {
        skeleton(1..=5, MAX_NUMEL, leaves)
            .prop_map(move |sk| match kind {
                Kind::ArgMax | Kind::ArgMin => arg_case(kind == Kind::ArgMax, dtype, &sk),
                Kind::TopK => top_k_case(dtype, &sk),
                Kind::Cumsum | Kind::CumsumBackward => cumsum_case(kind == Kind::CumsumBackward, dtype, &sk),
                Kind::Loss | Kind::LossBackward => loss_case(kind == Kind::LossBackward, dtype, &sk),
            })
            .boxed()
    })
}

/// Small integers (ties) and wide values, with the IEEE specials; integers near zero with the
/// extremes at the special rate. Subnormals are left out: a flushing backend may then tie them
/// with zero, which changes an index.
fn ordered_values() -> Values {
    Values {
        float: FloatDomain::new(&[Piece::Ints(3), Piece::Ints(3), Piece::Uniform(-100.0, 100.0)], IEEE_SPECIALS),
        int: IntDomain::Range(-3, 3),
    }
}

/// A random axis; a zero dim there is set to 1 (ops whose axis must be non-empty).
fn nonempty_axis(rng: &mut Rng, shape: &mut [usize]) -> usize {
    let axis = rng.below(shape.len());
    if let Some(d) = shape.get_mut(axis) {
        if *d == 0 {
            *d = 1;
        }
    }
    axis
}

fn index_dtype(rng: &mut Rng) -> DType {
    if rng.chance(0.5) {
        DType::I32
    } else {
        DType::I64
    }
}

fn arg_case(max: bool, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mut shape = sk.shape.clone();
    let axis = nonempty_axis(&mut rng, &mut shape);
    let keep = rng.chance(0.5);
    let ix = index_dtype(&mut rng);
    let x = ordered_values().tensor(&mut rng, dtype, &shape, sk.rate)?;
    let axis = axis_form(&mut rng, axis, shape.len());
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = if max { pb.g().arg_max(x, axis, keep, ix)? } else { pb.g().arg_min(x, axis, keep, ix)? };
    pb.finish(&[y])
}

fn top_k_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axis = rng.below(rank);
    let n = sk.shape.get(axis).copied().unwrap_or(0);
    let k = match rng.below(5) {
        0 => 0,
        1 => n.min(1),
        2 => n,
        _ => rng.below(n + 1),
    };
    let largest = rng.chance(0.5);
    let ix = index_dtype(&mut rng);
    let x = ordered_values().tensor(&mut rng, dtype, &sk.shape, sk.rate)?;
    let axis = axis_form(&mut rng, axis, rank);
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let (v, i) = pb.g().top_k(x, k, axis, largest, ix)?;
    pb.finish(&[v, i])
}

fn cumsum_case(backward: bool, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axis = rng.below(rank);
    let axis = axis_form(&mut rng, axis, rank);
    let (exclusive, reverse) = (rng.chance(0.5), rng.chance(0.5));
    let values = Values::floats(FloatDomain::new(
        &[Piece::Uniform(-10.0, 10.0), Piece::LogMag { lo: 1e-3, hi: 1e3, signed: true }],
        IEEE_SPECIALS,
    ));
    let x = values.tensor(&mut rng, dtype, &sk.shape, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let scan = |g: &mut backend_api::GraphBuilder, v| {
        if backward {
            g.cumsum_backward(v, axis, exclusive, reverse)
        } else {
            g.cumsum(v, axis, exclusive, reverse)
        }
    };
    let y = scan(pb.g(), x)?;
    pb.finish_with_magnitude(&[y], |g, abs| Ok(vec![scan(g, nth(abs, 0)?)?]))
}

/// Logits at one of three scales, leaning to −∞ (masked classes) with NaN and +∞; soft targets
/// in [0, 1] with many exact zeros (skipped terms).
fn loss_case(backward: bool, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mut shape = sk.shape.clone();
    let axis = nonempty_axis(&mut rng, &mut shape);
    let s = rng.pick(&[1.0, 5.0, 20.0]);
    let specials = [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NAN, f64::INFINITY, 0.0, -0.0];
    let logits = Values::floats(FloatDomain::new(&[Piece::Uniform(-s, s)], &specials));
    let targets = Values::floats(FloatDomain::new(&[Piece::Uniform(0.0, 1.0), Piece::OneOf(&[0.0])], &[]));
    let grads = Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], &[]));
    let x = logits.tensor(&mut rng, dtype, &shape, sk.rate)?;
    let t = targets.tensor(&mut rng, dtype, &shape, 0.0)?;
    let mut reduced = shape.clone();
    reduced.remove(axis);
    let dl = grads.tensor(&mut rng, dtype, &reduced, 0.0)?;
    let axis = axis_form(&mut rng, axis, shape.len());
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let t = pb.leaf(sk.kind(1), t)?;
    let y = if backward {
        let dl = pb.leaf(sk.kind(2), dl)?;
        pb.g().softmax_cross_entropy_backward(x, t, dl, axis)?
    } else {
        pb.g().softmax_cross_entropy(x, t, axis)?
    };
    pb.finish(&[y])
}
