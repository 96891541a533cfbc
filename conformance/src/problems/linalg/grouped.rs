//! Generator for `GroupedMatMul` (§2.6.4): M up to about 150, N and K up to about 130 (now and
//! then K past 256), straddling the 64 and 128 tile edges; E from 0 to 9; expert ids drawn from
//! several distributions (one expert for all rows, uniform, skewed, a few experts left unused,
//! out-of-range ids in both signs and at the dtype's extremes), in each index dtype. The
//! magnitude `M` of an output element is the same product over absolute values (the ids are
//! added to the magnitude graph as a constant: they must not go through `|Cast(·, F64)|`).

use super::super::{per_dtype, skeleton, Skeleton};
use super::operand_values;
use crate::problem::{nth, Generated, ProblemBuilder};
use crate::rng::Rng;
use crate::shapes::MAX_NUMEL;
use crate::values::int_tensor;
use backend_api::{DType, Tensor};
use proptest::prelude::*;
use proptest::sample::select;

/// Upper bound on multiply-adds per case.
const FLOPS_CAP: usize = 1 << 22;

/// The `GroupedMatMul` variants, one per dtype of the row.
pub fn variants(row: &str) -> Option<Vec<super::super::Variant>> {
    per_dtype(row, |dt| {
        (skeleton(0..=0, 1, 3), rows(), cols(), depth(), experts())
            .prop_map(move |(sk, m, n, k, e)| case(dt, &sk, [m, n, k], e))
            .boxed()
    })
}

/// M: mostly small, sometimes on either side of a 64- or 128-row tile, or decode-sized.
fn rows() -> BoxedStrategy<usize> {
    prop_oneof![
        4 => 1usize..=40,
        2 => select(vec![1usize, 2, 3, 5, 8, 9]),
        2 => select(vec![0usize, 63, 64, 65, 100, 127, 128, 129, 150]),
    ]
    .boxed()
}

/// N: mostly small, sometimes a multiple of 8 (vector loads), sometimes a tile edge.
fn cols() -> BoxedStrategy<usize> {
    prop_oneof![
        4 => 1usize..=48,
        2 => select(vec![8usize, 16, 24, 32, 40, 64, 72, 128, 136]),
        1 => select(vec![0usize, 63, 65, 127, 129, 130]),
    ]
    .boxed()
}

/// K: as N, with now and then a long contraction.
fn depth() -> BoxedStrategy<usize> {
    prop_oneof![
        4 => 1usize..=48,
        2 => select(vec![8usize, 16, 32, 64, 96, 128]),
        1 => select(vec![0usize, 7, 65, 127, 129]),
        1 => select(vec![256usize, 264, 520, 1000]),
    ]
    .boxed()
}

/// E: 0 (every row out of range) to 9.
fn experts() -> BoxedStrategy<usize> {
    prop_oneof![1 => Just(0usize), 8 => 1usize..=9].boxed()
}

/// Shrinks M, N, K (the largest first) until every tensor and the work fit the caps.
fn fit(mnk: &mut [usize; 3], e: usize) {
    loop {
        let [m, n, k] = mnk.map(|d| d.max(1));
        let sizes = [m * k, e.max(1).saturating_mul(k * n), m * n];
        if sizes.iter().all(|&s| s <= MAX_NUMEL) && m * n * k <= FLOPS_CAP {
            return;
        }
        // Shrink the dim of the largest tensor's largest factor.
        let i = if sizes[1] > MAX_NUMEL {
            if k >= n {
                2
            } else {
                1
            }
        } else {
            (0..3).max_by_key(|&i| mnk[i]).unwrap_or(0)
        };
        if let Some(d) = mnk.get_mut(i) {
            *d = (*d / 2).max(1);
        }
    }
}

fn case(dtype: DType, sk: &Skeleton, mnk: [usize; 3], e: usize) -> Generated {
    let mut rng = sk.rng();
    let mut d = mnk;
    fit(&mut d, e);
    let [m, n, k] = d;
    let vals = operand_values();
    let rate = sk.rate / 10.0;
    let id_dtype = [DType::I32, DType::I64, DType::U32][rng.below(3)];
    let ids = expert_ids(&mut rng, id_dtype, m, e)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), vals.tensor(&mut rng, dtype, &[m, k], rate)?)?;
    let w = pb.leaf(sk.kind(1), vals.tensor(&mut rng, dtype, &[e, k, n], rate)?)?;
    let ex = pb.leaf(sk.kind(2), ids.clone())?;
    let y = pb.g().grouped_matmul(x, w, ex)?;
    pb.finish_with_magnitude(&[y], move |g, abs| {
        let c = g.constant(&ids)?;
        Ok(vec![g.grouped_matmul(nth(abs, 0)?, nth(abs, 1)?, c)?])
    })
}

/// How the rows' experts are drawn.
#[derive(Clone, Copy, Debug)]
enum Spread {
    /// Every row on one expert.
    One,
    /// Uniform over the experts.
    Uniform,
    /// Expert j drawn with weight 2^-j: a few large groups and many small or empty ones.
    Skewed,
    /// Uniform over a random half of the experts (the others unused).
    Half,
}

/// `m` expert ids in `d` for `e` experts: in range in the positive or (for signed dtypes) the
/// negative form, with a share of out-of-range ids (just past either end and the extremes).
pub(super) fn expert_ids(rng: &mut Rng, d: DType, m: usize, e: usize) -> backend_api::Result<Tensor> {
    let spread = [Spread::One, Spread::Uniform, Spread::Skewed, Spread::Half][rng.below(4)];
    let ei = e as i128;
    let one = rng.int_in(0, (e as i64 - 1).max(0)) as i128;
    let half: Vec<i128> = (0..e as i128).filter(|_| rng.chance(0.5)).collect();
    let signed = d != DType::U32;
    let mut outside = vec![ei, ei + 1, 1 << 24];
    match d {
        DType::I32 => outside.extend([-ei - 1, i32::MIN as i128, i32::MAX as i128]),
        DType::I64 => outside.extend([-ei - 1, i64::MIN as i128, i64::MAX as i128, 1 << 32, -(1 << 32)]),
        _ => outside.extend([u32::MAX as i128, 1 << 31]),
    }
    let miss = rng.pick(&[0.0, 0.0, 0.1, 0.4]);
    let mut v = Vec::with_capacity(m);
    for _ in 0..m {
        let r = match spread {
            _ if e == 0 || rng.chance(miss) => None,
            Spread::One => Some(one),
            Spread::Uniform => Some(rng.int_in(0, ei as i64 - 1) as i128),
            Spread::Skewed => Some((0..ei - 1).find(|_| rng.chance(0.5)).unwrap_or(ei - 1)),
            Spread::Half if half.is_empty() => Some(one),
            Spread::Half => half.get(rng.below(half.len())).copied(),
        };
        v.push(match r {
            None => outside.get(rng.below(outside.len())).copied().unwrap_or(ei),
            // The negative form of expert r is r − E.
            Some(r) if signed && rng.chance(0.3) => r - ei,
            Some(r) => r,
        });
    }
    int_tensor(d, &[m], &v)
}
