//! Generators for `GroupNorm` and `LayerNorm2d` (§2.7.6–2.7.7): `x [N, C, *spatial]` of rank 2–5
//! (empty N, C and spatial extents included), `gamma` and an optional `beta` of shape `[C]`,
//! `eps` across its range with 0 (a constant group or column, or a group of one element, is then
//! NaN on both sides). GroupNorm draws `G` from 1 to `C` (so `C/G = 1` occurs) among the divisors
//! of `C`; a share of its cases have groups of more than `shaders::norm::MAX_HELD` elements, the
//! size at which the wgpu backend splits a group over several workgroups, so that both of its
//! kernel forms run.

use super::norm_input;
use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::MAX_NUMEL;
use crate::values::{FloatDomain, Piece, Rng, Values};
use backend_api::DType;
use proptest::prelude::*;

/// Shapes and group counts whose groups (`C/G · S` elements) exceed 8192, the largest group
/// one workgroup holds: each under [`MAX_NUMEL`].
const SPLIT_CASES: &[(&[usize], u32)] =
    &[(&[1, 2, 8200], 1), (&[2, 4, 65, 65], 2), (&[3, 6, 3000], 2), (&[1, 2, 5, 63, 27], 1)];

/// Variants for `GroupNorm` and `LayerNorm2d`.
pub fn channel_variants(row: &str) -> Option<Vec<Variant>> {
    let group = match row {
        "GroupNorm" => true,
        "LayerNorm2d" => false,
        _ => return None,
    };
    per_dtype(row, move |dtype| {
        skeleton(2..=5, MAX_NUMEL, 3).prop_map(move |sk| channel_case(group, dtype, &sk)).boxed()
    })
}

/// A divisor of `c` from 1 to `c`: 1, `c` itself (groups of one channel) or one between.
fn groups(rng: &mut Rng, c: usize) -> u32 {
    if c == 0 {
        // every G divides 0
        return rng.pick(&[1, 2, 3]);
    }
    let divisors: Vec<usize> = (1..=c).filter(|g| c.is_multiple_of(*g)).collect();
    let g = match rng.below(3) {
        0 => 1,
        1 => c,
        _ => rng.pick(&divisors),
    };
    u32::try_from(g).unwrap_or(1)
}

fn channel_case(group: bool, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mut shape = sk.shape.clone();
    let c = shape.get(1).copied().unwrap_or(1);
    let mut g = if group { groups(&mut rng, c) } else { 1 };
    if group && rng.chance(0.25) {
        let (s, sg) = SPLIT_CASES[rng.below(SPLIT_CASES.len())];
        shape = s.to_vec();
        g = sg;
    }
    let c = shape.get(1).copied().unwrap_or(1);
    let eps = rng.pick(&[1e-5f32, 1e-6, 1e-3, 0.1, 1e-5, 0.0]);
    let x = norm_input(&mut rng).tensor(&mut rng, dtype, &shape, sk.rate / 4.0)?;
    let gamma =
        Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], &[])).tensor(&mut rng, dtype, &[c], 0.0)?;
    let beta_vals = Values::floats(FloatDomain::new(&[Piece::Uniform(-1.0, 1.0)], &[]));
    let beta = if rng.chance(0.5) { Some(beta_vals.tensor(&mut rng, dtype, &[c], 0.0)?) } else { None };
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let gm = pb.leaf(sk.kind(1), gamma)?;
    let b = match beta {
        Some(t) => Some(pb.leaf(sk.kind(2), t)?),
        None => None,
    };
    let y = if group { pb.g().group_norm(x, gm, b, g, eps)? } else { pb.g().layer_norm_2d(x, gm, b, eps)? };
    pb.finish(&[y])
}
