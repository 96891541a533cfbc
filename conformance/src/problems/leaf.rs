//! Generators for the leaves `Input`, `Param`, `Constant` (§2.1): one to three leaves of one kind,
//! each a graph output, with any values (specials and subnormals included, since a leaf only
//! passes its bits through). Every other generator also feeds its operands through randomly
//! chosen leaf kinds.

use super::{per_dtype, Variant};
use crate::problem::{Generated, LeafKind, ProblemBuilder};
use crate::shapes::{seed, shape, special_rate, MAX_NUMEL};
use crate::values::{any_tensor, Rng};
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `Input`, `Param` and `Constant`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "Input" => LeafKind::Input,
        "Param" => LeafKind::Param,
        "Constant" => LeafKind::Constant,
        _ => return None,
    };
    per_dtype(row, move |dtype| {
        (proptest::collection::vec(shape(0..=5, MAX_NUMEL / 3), 1..=3), seed(), special_rate())
            .prop_map(move |(shapes, seed, rate)| leaves_case(kind, dtype, &shapes, seed, rate))
            .boxed()
    })
}

fn leaves_case(kind: LeafKind, dtype: DType, shapes: &[Vec<usize>], seed: u64, rate: f64) -> Generated {
    let mut rng = Rng::new(seed);
    let mut pb = ProblemBuilder::new();
    let mut outs = Vec::with_capacity(shapes.len() + 1);
    for s in shapes {
        let t = any_tensor(&mut rng, dtype, s, rate, true)?;
        outs.push(pb.leaf(kind, t)?);
    }
    // The same value as two outputs, and outputs in another order than the leaves.
    if rng.chance(0.3) {
        if let Some(&again) = outs.get(rng.below(outs.len())) {
            outs.push(again);
        }
    }
    if rng.chance(0.3) {
        outs.reverse();
    }
    pb.finish(&outs)
}
