//! Generators for `Rope` and `RopeBackward` (§2.8.3–2.8.4): both pairing styles; head widths `D`
//! from 2 to 130 (multiples of 4 and not, so both GPU kernel forms run) and 1–5 heads in the last
//! dim; rotated widths `R` from 0 to `D` (even); ranks 2–5 with the position axis anywhere but
//! last (canonical and negative forms); shared `[S, R/2]` and per-batch `[x.shape[0], S, R/2]`
//! tables of x's dtype or F32, holding real angles (cos² + sin² = 1) or arbitrary values (the
//! backward is the transpose for any table); empty tensors (a 0 dim anywhere, `S = 0`).

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, numel, smaller_dim, support, MAX_NUMEL};
use crate::values::{float_tensor, FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::RopeStyle;
use backend_api::{DType, Result, Tensor};
use proptest::prelude::*;

/// Head widths: tiny, not a multiple of 4, around the common 64 and 128.
const HEAD_DIMS: &[usize] = &[2, 4, 6, 8, 10, 12, 16, 18, 24, 32, 34, 64, 66, 96, 128, 130];

/// Variants for `Rope` and `RopeBackward`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let backward = match row {
        "Rope" => false,
        "RopeBackward" => true,
        _ => return None,
    };
    per_dtype(row, move |dtype| skeleton(2..=5, MAX_NUMEL, 3).prop_map(move |sk| case(dtype, backward, &sk)).boxed())
}

/// The skeleton's shape with its last dim made `heads · D` (a 0 last dim stays 0) and the other
/// dims shrunk until the whole fits the element cap.
fn x_dims(rng: &mut Rng, shape: &[usize], d: usize) -> Vec<usize> {
    let heads = rng.pick(&[1usize, 1, 2, 3, 5]);
    let mut dims = shape.to_vec();
    if let Some(last) = dims.last_mut() {
        *last = if *last == 0 { 0 } else { heads * d };
    }
    let lead = dims.len().saturating_sub(1);
    while support(&dims) > MAX_NUMEL {
        let Some(i) = (0..lead).filter(|&i| dims[i] > 1).max_by_key(|&i| dims[i]) else { break };
        dims[i] = smaller_dim(dims[i]);
    }
    dims
}

/// `R`: the whole head half the time, otherwise 0 or any even width below `D`.
fn rotary_dim(rng: &mut Rng, d: usize) -> usize {
    match rng.below(6) {
        0..=2 => d,
        3 => 0,
        _ => 2 * rng.below(d / 2 + 1),
    }
}

/// The tables: cos and sin of real angles (rounded to the table dtype), or arbitrary values in
/// [−2, 2] with the IEEE specials at a quarter of the case rate.
fn tables(rng: &mut Rng, dtype: DType, dims: &[usize], rate: f64) -> Result<(Tensor, Tensor)> {
    if rng.chance(0.5) {
        let angles: Vec<f64> = (0..numel(dims)).map(|_| rng.uniform(-40.0, 40.0)).collect();
        let c: Vec<f64> = angles.iter().map(|a| a.cos()).collect();
        let s: Vec<f64> = angles.iter().map(|a| a.sin()).collect();
        return Ok((float_tensor(dtype, dims, &c)?, float_tensor(dtype, dims, &s)?));
    }
    let any = Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], IEEE_SPECIALS));
    Ok((any.tensor(rng, dtype, dims, rate / 4.0)?, any.tensor(rng, dtype, dims, rate / 4.0)?))
}

fn case(dtype: DType, backward: bool, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let d = rng.pick(HEAD_DIMS);
    let dims = x_dims(&mut rng, &sk.shape, d);
    let rank = dims.len();
    let r = rotary_dim(&mut rng, d);
    let style = if rng.chance(0.5) { RopeStyle::NeoX } else { RopeStyle::GptJ };
    let seq = rng.below(rank - 1);
    let s = dims[seq];
    let tdims = if seq >= 1 && rng.chance(0.5) { vec![dims[0], s, r / 2] } else { vec![s, r / 2] };
    let tdtype = if rng.chance(0.5) { dtype } else { DType::F32 };
    // x in [−3, 3]: products with tables in [−2, 2] stay where Close's absolute term holds for
    // the f32 rounding of the two products.
    let xv = Values::floats(FloatDomain::new(&[Piece::Uniform(-3.0, 3.0)], IEEE_SPECIALS));
    let x = xv.tensor(&mut rng, dtype, &dims, sk.rate)?;
    let (cos, sin) = tables(&mut rng, tdtype, &tdims, sk.rate)?;
    let seq_axis = axis_form(&mut rng, seq, rank);
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let c = pb.leaf(sk.kind(1), cos)?;
    let sn = pb.leaf(sk.kind(2), sin)?;
    let (dh, rr) = (d as u32, r as u32);
    let y = if backward {
        pb.g().rope_backward(x, (c, sn), dh, Some(rr), style, seq_axis)?
    } else {
        pb.g().rope(x, (c, sn), dh, Some(rr), style, seq_axis)?
    };
    pb.finish(&[y])
}
