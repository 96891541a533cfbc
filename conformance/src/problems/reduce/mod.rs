//! Generators for `Reduce.*` (§2.5.1): any subset of axes (none, all, scattered; in any order,
//! negative forms), `keep_dims` both ways, zero-sized reduced axes (identities), ranks 0–5.
//! Float `Sum`/`Mean` carry the magnitude `M = Σ|x|` (`/|R|` for `Mean`).

use crate::problem::{nth, Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, MAX_NUMEL, SMALL_NUMEL};
use crate::values::{FloatDomain, IntDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::ReduceOp;
use backend_api::DType;
use proptest::prelude::*;

pub mod arg;
pub mod cumsum;

/// Variants for the `Reduce.*` rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if let Some(v) = arg::variants(row).or_else(|| cumsum::variants(row)) {
        return Some(v);
    }
    let name = row.strip_prefix("Reduce.")?;
    let op = *ReduceOp::ALL.iter().find(|r| r.name() == name)?;
    // Products over many elements leave the float range quickly; keep them smaller.
    let cap = if op == ReduceOp::Prod { SMALL_NUMEL } else { MAX_NUMEL };
    per_dtype(row, move |dtype| skeleton(0..=5, cap, 1).prop_map(move |sk| reduce_case(op, dtype, &sk)).boxed())
}

/// The axes to reduce, as the builder accepts them: none, all, or a random subset, in random
/// order, each canonical or negative.
fn axes(rng: &mut Rng, rank: usize) -> Vec<i64> {
    let chosen: Vec<usize> = match rng.below(10) {
        0 => Vec::new(),
        1 | 2 => (0..rank).collect(),
        _ => (0..rank).filter(|_| rng.chance(0.5)).collect(),
    };
    let order = rng.permutation(chosen.len());
    order.into_iter().filter_map(|i| chosen.get(i)).map(|&a| axis_form(rng, a, rank)).collect()
}

fn values(op: ReduceOp, dtype: DType) -> Values {
    let float = match op {
        ReduceOp::Sum | ReduceOp::Mean => FloatDomain::new(
            &[Piece::Uniform(-10.0, 10.0), Piece::LogMag { lo: 1e-3, hi: 1e3, signed: true }],
            IEEE_SPECIALS,
        ),
        // Mostly ±1 with some powers of two and some near-1 factors: products stay in range and
        // nearly exact, so the class (not magnitude-scaled) can be met in any order.
        ReduceOp::Prod => {
            const ONES: Piece = Piece::OneOf(&[1.0, -1.0]);
            FloatDomain::new(
                &[
                    ONES,
                    ONES,
                    ONES,
                    ONES,
                    Piece::OneOf(&[2.0, -2.0, 0.5, -0.5]),
                    Piece::LogMag { lo: 0.8, hi: 1.25, signed: true },
                ],
                IEEE_SPECIALS,
            )
        }
        // NaN propagation and ±0 ties; a flushed subnormal cannot change which value wins.
        ReduceOp::Max | ReduceOp::Min => return Values::any(dtype, true),
    };
    Values { float, int: IntDomain::Any }
}

fn reduce_case(op: ReduceOp, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axes = axes(&mut rng, rank);
    let keep = rng.chance(0.5);
    let x = values(op, dtype).tensor(&mut rng, dtype, &sk.shape, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let xv = pb.leaf(sk.kind(0), x)?;
    let y = pb.g().reduce(op, xv, &axes, keep)?;
    pb.finish_with_magnitude(&[y], |g, abs| {
        let m = g.reduce(op, nth(abs, 0)?, &axes, keep)?;
        Ok(vec![m])
    })
}
