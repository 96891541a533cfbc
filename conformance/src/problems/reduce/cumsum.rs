//! Generators for `Cumsum` and `CumsumBackward` (§2.5.5–2.5.6): every axis (negative forms too),
//! ranks 1–5, zero-sized tensors, every scan direction; values with the IEEE specials. Both carry
//! the magnitude `M` = the same scan of `|x|`.

use crate::problem::{nth, Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, MAX_NUMEL};
use crate::values::{FloatDomain, Piece, Values, IEEE_SPECIALS};
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `Cumsum` and `CumsumBackward`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let backward = match row {
        "Cumsum" => false,
        "CumsumBackward" => true,
        _ => return None,
    };
    per_dtype(row, move |dtype| {
        skeleton(1..=5, MAX_NUMEL, 1).prop_map(move |sk| cumsum_case(backward, dtype, &sk)).boxed()
    })
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
