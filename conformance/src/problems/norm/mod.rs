//! Generators for `Softmax`, `LogSoftmax`, `LayerNorm`, `RmsNorm`, `FusedResidualLayerNorm` and
//! `FusedResidualRmsNorm` (§2.7.1, 2.7.2, 2.7.4, 2.7.5, 2.7.8, 2.7.9): every axis (negative forms
//! too), ranks 1–5, normalised extents from 1 to tens of thousands, zero-sized tensors; softmax
//! inputs with masked (−∞) elements, all-masked slices, +∞ and NaN; norm inputs at several scales
//! and offsets, optional `beta`, `eps` across its range; the fused norms with and without a bias
//! (of every shape that broadcasts to `x` without enlarging it) and `beta`, with and without the
//! sum as a second output. `SoftmaxCrossEntropy` (§2.7.3) is in `cross_entropy`, `GroupNorm` and
//! `LayerNorm2d` (§2.7.6–2.7.7) in `channel`.

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{axis_form, MAX_NUMEL};
use crate::values::{FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::DType;
use proptest::prelude::*;

pub(crate) mod channel;
pub(crate) mod cross_entropy;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Softmax,
    LogSoftmax,
    LayerNorm,
    RmsNorm,
    FusedLayerNorm,
    FusedRmsNorm,
}

/// Variants for the normalisation rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "SoftmaxCrossEntropy" => return cross_entropy::loss_variants(row, false),
        "GroupNorm" | "LayerNorm2d" => return channel::channel_variants(row),
        "Softmax" => Kind::Softmax,
        "LogSoftmax" => Kind::LogSoftmax,
        "LayerNorm" => Kind::LayerNorm,
        "RmsNorm" => Kind::RmsNorm,
        "FusedResidualLayerNorm" => Kind::FusedLayerNorm,
        "FusedResidualRmsNorm" => Kind::FusedRmsNorm,
        _ => return None,
    };
    let leaves = if matches!(kind, Kind::FusedLayerNorm | Kind::FusedRmsNorm) { 5 } else { 3 };
    per_dtype(row, move |dtype| {
        skeleton(1..=5, MAX_NUMEL, leaves)
            .prop_map(move |sk| match kind {
                Kind::Softmax | Kind::LogSoftmax => softmax_case(kind, dtype, &sk),
                Kind::LayerNorm | Kind::RmsNorm => norm_case(kind, dtype, &sk),
                Kind::FusedLayerNorm | Kind::FusedRmsNorm => fused_case(kind, dtype, &sk),
            })
            .boxed()
    })
}

/// Logits at one of three scales; specials lean towards −∞ (masking) so that partly and fully
/// masked slices occur.
fn logits(rng: &mut Rng) -> Values {
    let s = rng.pick(&[1.0, 5.0, 20.0]);
    let specials = [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NAN, f64::INFINITY, 0.0, -0.0];
    Values::floats(FloatDomain::new(&[Piece::Uniform(-s, s)], &specials))
}

fn softmax_case(kind: Kind, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axis = rng_axis(&mut rng, rank);
    let axis = axis_form(&mut rng, axis, rank);
    let x = logits(&mut rng).tensor(&mut rng, dtype, &sk.shape, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = if kind == Kind::LogSoftmax { pb.g().log_softmax(x, axis)? } else { pb.g().softmax(x, axis)? };
    pb.finish(&[y])
}

fn rng_axis(rng: &mut Rng, rank: usize) -> usize {
    rng.below(rank)
}

/// Norm inputs: `offset + scale·u`, `u ∈ [−3, 3]`; IEEE specials at a quarter of the case rate.
/// Offsets stay within a few spreads: a large mean over a tiny spread measures the summation
/// order of the mean more than the op.
fn norm_input(rng: &mut Rng) -> Values {
    let (scale, offset) = rng.pick(&[(1.0, 0.0), (0.01, 0.0), (30.0, 0.0), (1.0, 2.0), (30.0, 10.0)]);
    Values::floats(FloatDomain::new(&[Piece::Uniform(offset - 3.0 * scale, offset + 3.0 * scale)], IEEE_SPECIALS))
}

fn norm_case(kind: Kind, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axis = rng_axis(&mut rng, rank);
    let tail: Vec<usize> = sk.shape.get(axis..).unwrap_or(&[]).to_vec();
    // eps = 0 is valid; a constant slice then gives NaN on both sides, which is still comparable.
    let eps = rng.pick(&[1e-5f32, 1e-6, 1e-3, 0.1, 1e-5, 0.0]);
    let x = norm_input(&mut rng).tensor(&mut rng, dtype, &sk.shape, sk.rate / 4.0)?;
    let gamma_vals = Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], &[]));
    let beta_vals = Values::floats(FloatDomain::new(&[Piece::Uniform(-1.0, 1.0)], &[]));
    let gamma = gamma_vals.tensor(&mut rng, dtype, &tail, 0.0)?;
    let beta = if rng.chance(0.5) { Some(beta_vals.tensor(&mut rng, dtype, &tail, 0.0)?) } else { None };
    let axis = axis_form(&mut rng, axis, rank);
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let g = pb.leaf(sk.kind(1), gamma)?;
    let b = match beta {
        Some(t) => Some(pb.leaf(sk.kind(2), t)?),
        None => None,
    };
    let y = match kind {
        Kind::RmsNorm => pb.g().rms_norm(x, g, b, axis, eps)?,
        Kind::LayerNorm | Kind::Softmax | Kind::LogSoftmax | Kind::FusedLayerNorm | Kind::FusedRmsNorm => {
            pb.g().layer_norm(x, g, b, axis, eps)?
        }
    };
    pb.finish(&[y])
}

/// A bias shape that broadcasts to `shape` without enlarging it: a suffix of it (rank 0 to full)
/// with some dims set to 1.
fn bias_shape(rng: &mut Rng, shape: &[usize]) -> Vec<usize> {
    let keep = rng.below(shape.len() + 1);
    shape[shape.len() - keep..].iter().map(|&d| if rng.chance(0.3) { 1 } else { d }).collect()
}

fn fused_case(kind: Kind, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let rank = sk.shape.len();
    let axis = rng_axis(&mut rng, rank);
    let tail: Vec<usize> = sk.shape.get(axis..).unwrap_or(&[]).to_vec();
    let eps = rng.pick(&[1e-5f32, 1e-6, 1e-3, 0.1, 0.0]);
    let (has_bias, has_beta, emit_sum) = (rng.chance(0.5), rng.chance(0.5), rng.chance(0.6));
    let x = norm_input(&mut rng).tensor(&mut rng, dtype, &sk.shape, sk.rate / 4.0)?;
    let residual = norm_input(&mut rng).tensor(&mut rng, dtype, &sk.shape, sk.rate / 4.0)?;
    let small = Values::floats(FloatDomain::new(&[Piece::Uniform(-1.0, 1.0)], &[]));
    let bias_dims = bias_shape(&mut rng, &sk.shape);
    let bias = small.tensor(&mut rng, dtype, &bias_dims, 0.0)?;
    let gamma =
        Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], &[])).tensor(&mut rng, dtype, &tail, 0.0)?;
    let beta = small.tensor(&mut rng, dtype, &tail, 0.0)?;
    let axis = axis_form(&mut rng, axis, rank);
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let r = pb.leaf(sk.kind(1), residual)?;
    let b = if has_bias { Some(pb.leaf(sk.kind(2), bias)?) } else { None };
    let g = pb.leaf(sk.kind(3), gamma)?;
    let be = if has_beta { Some(pb.leaf(sk.kind(4), beta)?) } else { None };
    let (y, s) = match kind {
        Kind::FusedRmsNorm => pb.g().fused_residual_rms_norm(x, (r, b), (g, be), axis, eps, emit_sum)?,
        Kind::FusedLayerNorm | Kind::Softmax | Kind::LogSoftmax | Kind::LayerNorm | Kind::RmsNorm => {
            pb.g().fused_residual_layer_norm(x, (r, b), (g, be), axis, eps, emit_sum)?
        }
    };
    let outs: Vec<_> = std::iter::once(y).chain(s).collect();
    pb.finish(&outs)
}
