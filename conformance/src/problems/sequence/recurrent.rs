//! Generators for `Rnn`, `Gru` and `Lstm` (§2.10.1–2.10.3): hidden sizes 1–6, 1–3 stacked
//! layers, one or two directions, both layouts, with and without biases and initial states,
//! both `Rnn` nonlinearities and both `Gru` reset forms; sequences of 0–6 steps and batches of
//! 0–3. Weights are small (|w| ≤ 0.6) so that the recurrence stays well-conditioned and an
//! elementwise tolerance stays meaningful after several steps and layers.

use crate::problem::{Generated, LeafKind, ProblemBuilder};
use crate::problems::{per_dtype, Skeleton, Variant};
use crate::shapes::{leaf_kind, seed, special_rate};
use crate::values::{FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{RecurrentAttrs, RnnNonlinearity};
use backend_api::{DType, Result, Value};
use proptest::prelude::*;

/// The recurrent cell of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    fn of(row: &str) -> Option<Cell> {
        match row {
            "Rnn" => Some(Cell::Rnn),
            "Gru" => Some(Cell::Gru),
            "Lstm" => Some(Cell::Lstm),
            _ => None,
        }
    }

    /// `Gc`: the gate count, the row blocks of every weight and bias.
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
}

/// Variants for `Rnn`, `Gru` and `Lstm`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let cell = Cell::of(row)?;
    per_dtype(row, move |dtype| (attrs(), skeleton()).prop_map(move |(a, sk)| case(cell, dtype, a, &sk)).boxed())
}

/// The attributes, drawn by proptest so that a failure shrinks to the simplest form. The
/// builders set `has_initial_state` from the states passed and ignore the attributes of the
/// other cells; here `has_initial_state` says whether the case passes states.
fn attrs() -> BoxedStrategy<RecurrentAttrs> {
    // Deep stacks cost the most on a software GPU: one layer is the most common.
    let layers = prop_oneof![3 => Just(1u32), 2 => Just(2u32), 1 => Just(3u32)];
    (1u32..=6, layers, any::<[bool; 6]>())
        .prop_map(|(hidden_size, num_layers, f)| RecurrentAttrs {
            hidden_size,
            num_layers,
            bidirectional: f[0],
            batch_first: f[1],
            has_bias: f[2],
            has_initial_state: f[3],
            nonlinearity: if f[4] { RnnNonlinearity::Relu } else { RnnNonlinearity::Tanh },
            linear_before_reset: f[5],
        })
        .boxed()
}

/// The skeleton: shape `[B, S, In]` (an empty batch or sequence in one case of ten each), leaf
/// kinds of x, of the weights and of the initial states, seed and special rate.
fn skeleton() -> BoxedStrategy<Skeleton> {
    let batch = prop_oneof![1 => Just(0usize), 9 => 1usize..=3];
    let steps = prop_oneof![1 => Just(0usize), 9 => 1usize..=6];
    let dims = (batch, steps, 1usize..=4).prop_map(|(b, s, i)| vec![b, s, i]);
    (dims, proptest::collection::vec(leaf_kind(), 3), seed(), special_rate())
        .prop_map(|(shape, kinds, seed, rate)| Skeleton { shape, kinds, seed, rate })
        .boxed()
}

/// Inputs in [−2, 2] with the IEEE specials: an infinite or NaN input must propagate through
/// the gates the same way on every backend.
fn x_values() -> Values {
    Values::floats(FloatDomain::new(&[Piece::Uniform(-2.0, 2.0)], IEEE_SPECIALS))
}

/// Weights, biases and states: small finite values (signed zeros as specials).
fn small_values(bound: f64) -> Values {
    Values::floats(FloatDomain::new(&[Piece::Uniform(-bound, bound)], &[0.0, -0.0]))
}

/// What every leaf of a case is drawn with.
struct Draw<'a> {
    rng: Rng,
    dtype: DType,
    sk: &'a Skeleton,
}

impl Draw<'_> {
    /// A leaf of `kind` and `dims` from `values`.
    fn leaf(&mut self, pb: &mut ProblemBuilder, kind: LeafKind, dims: &[usize], values: &Values) -> Result<Value> {
        let t = values.tensor(&mut self.rng, self.dtype, dims, self.sk.rate)?;
        pb.leaf(kind, t)
    }
}

fn case(cell: Cell, dtype: DType, a: RecurrentAttrs, sk: &Skeleton) -> Generated {
    let [b, s, input] = sk.shape[..] else { backend_api::bail!(Shape, "a recurrent skeleton of rank 3") };
    let mut draw = Draw { rng: sk.rng(), dtype, sk };
    let mut pb = ProblemBuilder::new();
    let x_dims = if a.batch_first { [b, s, input] } else { [s, b, input] };
    let x = draw.leaf(&mut pb, sk.kind(0), &x_dims, &x_values())?;
    let weights = weights(&mut pb, &mut draw, cell, &a, input)?;
    let states = [a.num_layers as usize * a.num_directions(), b, a.hidden_size as usize];
    let mut state = |pb: &mut ProblemBuilder| draw.leaf(pb, sk.kind(2), &states, &small_values(1.0));
    let h0 = if a.has_initial_state { Some(state(&mut pb)?) } else { None };
    let outs = match cell {
        Cell::Rnn => {
            let (y, h) = pb.g().rnn(x, &weights, h0, a)?;
            vec![y, h]
        }
        Cell::Gru => {
            let (y, h) = pb.g().gru(x, &weights, h0, a)?;
            vec![y, h]
        }
        Cell::Lstm => {
            let c0 = if a.has_initial_state { Some(state(&mut pb)?) } else { None };
            let (y, h, c) = pb.g().lstm(x, &weights, h0.zip(c0), a)?;
            vec![y, h, c]
        }
    };
    pb.finish(&outs)
}

/// The weights in the spec's order: per layer, per direction, `w_ih`, `w_hh` and iff `has_bias`
/// `b_ih`, `b_hh`; all of one leaf kind, as a model's weights usually are.
fn weights(
    pb: &mut ProblemBuilder,
    draw: &mut Draw<'_>,
    cell: Cell,
    a: &RecurrentAttrs,
    input: usize,
) -> Result<Vec<Value>> {
    let (h, dirs) = (a.hidden_size as usize, a.num_directions());
    let gh = cell.gates() * h;
    let (kind, w, bias) = (draw.sk.kind(1), small_values(0.6), small_values(0.3));
    let mut out = Vec::new();
    for layer in 0..a.num_layers as usize {
        let in_l = if layer == 0 { input } else { dirs * h };
        for _ in 0..dirs {
            out.push(draw.leaf(pb, kind, &[gh, in_l], &w)?);
            out.push(draw.leaf(pb, kind, &[gh, h], &w)?);
            if a.has_bias {
                out.push(draw.leaf(pb, kind, &[gh], &bias)?);
                out.push(draw.leaf(pb, kind, &[gh], &bias)?);
            }
        }
    }
    Ok(out)
}
