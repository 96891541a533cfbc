//! Generator for `SoftmaxCrossEntropy` (§2.7.3), shared with its backward op (§2.16.3,
//! `problems::backward`): every class axis (negative forms too), ranks 1–5, logits leaning to −∞
//! (masked classes) with NaN and +∞, soft targets with many exact zeros (skipped terms).

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::reduce::arg::nonempty_axis;
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, MAX_NUMEL};
use crate::values::{FloatDomain, Piece, Values};
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `SoftmaxCrossEntropy` (`backward`: for `SoftmaxCrossEntropyBackward`).
pub(crate) fn loss_variants(row: &str, backward: bool) -> Option<Vec<Variant>> {
    let leaves = if backward { 3 } else { 2 };
    per_dtype(row, move |dtype| {
        skeleton(1..=5, MAX_NUMEL, leaves).prop_map(move |sk| loss_case(backward, dtype, &sk)).boxed()
    })
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
