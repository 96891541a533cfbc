//! Strategies for shapes and the small structural choices every generator shares.
//!
//! Dims come from a fixed set that straddles common workgroup sizes (63/64/65, 255/257) and
//! includes 0 and 1; element counts are capped so a case stays cheap on a software GPU.

use crate::problem::LeafKind;
use crate::values::Rng;
use proptest::prelude::*;
use proptest::sample::select;
use std::ops::RangeInclusive;

/// The dims generators draw from.
pub const DIMS: &[usize] = &[0, 1, 2, 3, 5, 63, 64, 65, 255, 257];

/// Upper bound on the element count of any generated tensor.
pub const MAX_NUMEL: usize = 70_000;

/// A cap for ops whose cases are many (Cast pairs) or costly: keeps the default run fast.
pub const SMALL_NUMEL: usize = 4_096;

/// One non-zero dim: mostly small, sometimes around 64 or 256.
pub fn dim() -> BoxedStrategy<usize> {
    prop_oneof![
        6 => select(vec![1usize, 2, 3, 5]),
        2 => select(vec![63usize, 64, 65]),
        1 => select(vec![255usize, 257]),
    ]
    .boxed()
}

/// Percentage of shapes (of rank ≥ 1) that get one 0 dim: empty tensors are an edge worth a
/// steady share of cases, not the near-majority that a 0 per dim would give at rank 5.
const EMPTY_PERCENT: u8 = 12;

/// A shape of rank in `ranks` with at most `cap` elements (0 dims counted as 1).
pub fn shape(ranks: RangeInclusive<usize>, cap: usize) -> BoxedStrategy<Vec<usize>> {
    (proptest::collection::vec(dim(), ranks), 0u8..100, any::<usize>())
        .prop_map(move |(d, pct, at)| {
            let mut d = fit(d, cap);
            if pct < EMPTY_PERCENT && !d.is_empty() {
                let i = at % d.len();
                d[i] = 0;
            }
            d
        })
        .boxed()
}

/// Shrinks the largest dims (to smaller members of [`DIMS`]) until the element count is at most
/// `cap`, counting 0 dims as 1: a broadcast partner or a padded copy may replace them.
pub fn fit(mut dims: Vec<usize>, cap: usize) -> Vec<usize> {
    while support(&dims) > cap {
        let Some((i, _)) = dims.iter().enumerate().max_by_key(|(_, d)| **d) else { break };
        dims[i] = smaller_dim(dims[i]);
    }
    dims
}

/// The next smaller dim of the family: 257 → 64, 255 → 63, 65 → 5, 64 → 3, 63 → 2, else −1.
pub fn smaller_dim(d: usize) -> usize {
    match d {
        257.. => 64,
        255..=256 => 63,
        65..=254 => 5,
        64 => 3,
        6..=63 => 2,
        0 | 1 => d,
        _ => d - 1,
    }
}

/// Product of dims with 0 counted as 1: the size the shape could grow to by broadcasting.
pub fn support(dims: &[usize]) -> usize {
    dims.iter().fold(1usize, |a, &d| a.saturating_mul(d.max(1)))
}

/// Product of dims (saturating, so absurd shapes cannot overflow).
pub fn numel(dims: &[usize]) -> usize {
    dims.iter().fold(1usize, |a, &d| a.saturating_mul(d))
}

/// A shape that broadcasts to `out` (§1.4): a suffix of `out` (sometimes shorter: rank
/// mismatch) with some dims replaced by 1.
pub fn broadcast_partner(rng: &mut Rng, out: &[usize]) -> Vec<usize> {
    let drop = if rng.chance(0.3) { rng.below(out.len() + 1) } else { 0 };
    let ones = if rng.chance(0.5) { 0.0 } else { 0.35 };
    out[drop..].iter().map(|&d| if rng.chance(ones) { 1 } else { d }).collect()
}

/// `axis` written as the builder accepts it: canonical or negative (`axis − rank`).
pub fn axis_form(rng: &mut Rng, axis: usize, rank: usize) -> i64 {
    if rng.chance(0.5) {
        axis as i64 - rank as i64
    } else {
        axis as i64
    }
}

/// How often special values replace regular ones: never, rarely, or often.
pub fn special_rate() -> BoxedStrategy<f64> {
    prop_oneof![2 => Just(0.0), 2 => Just(0.03), 1 => Just(0.25)].boxed()
}

/// Which leaf feeds an operand: mostly an `Input`, sometimes a `Param` or a `Constant`.
pub fn leaf_kind() -> BoxedStrategy<LeafKind> {
    prop_oneof![6 => Just(LeafKind::Input), 2 => Just(LeafKind::Param), 2 => Just(LeafKind::Constant)].boxed()
}

/// A seed for the data and for structural choices that do not need to shrink.
pub fn seed() -> BoxedStrategy<u64> {
    any::<u64>().boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_respects_cap() {
        assert!(numel(&fit(vec![257, 257, 257], 70_000)) <= 70_000);
        assert!(support(&fit(vec![0, 257, 257, 257], 10)) <= 10);
        assert_eq!(fit(vec![], 10), Vec::<usize>::new());
    }
}
