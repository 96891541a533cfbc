//! Generators for `ArgMax`, `ArgMin` and `TopK` (§2.5.2–2.5.4): every axis (negative forms too),
//! ranks 1–5, zero-sized tensors, both index dtypes, `keep_dims`, `k` from 0 to n. Values lean to
//! ties (small integers) and carry the special values (NaN, ±∞, ±0; integer extremes).

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, MAX_NUMEL};
use crate::values::{FloatDomain, IntDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `ArgMax`, `ArgMin` and `TopK`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let max = match row {
        "ArgMax" => Some(true),
        "ArgMin" => Some(false),
        "TopK" => None,
        _ => return None,
    };
    per_dtype(row, move |dtype| {
        skeleton(1..=5, MAX_NUMEL, 1)
            .prop_map(move |sk| match max {
                Some(max) => arg_case(max, dtype, &sk),
                None => top_k_case(dtype, &sk),
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
pub(crate) fn nonempty_axis(rng: &mut Rng, shape: &mut [usize]) -> usize {
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
