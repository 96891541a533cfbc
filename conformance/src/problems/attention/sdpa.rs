//! Generator for `Attention` (§2.8.1): every layout; `Hq` in 1..=8 with any divisor as `Hkv`
//! (MHA, GQA, MQA); `B` in 1..=3; `Sq` and `Sk` from 0 to 160 straddling the 16/32/64 tile edges
//! (unequal both ways), and decode rows (`Sq = 1`) over up to 1100 keys; `D` and `Dv` from 1 to 130
//! (64, 80, 96, 128, odd widths, `Dv ≠ D`); every structural mask with both alignments, windows
//! from 1 past `Sk`; a Bool keep-mask and an additive bias (dtype of `q` or F32, with −∞, +∞ and
//! NaN) of broadcast shapes, lower ranks included; a given scale (0 and negative included) or the
//! default; soft-capping or none.
//!
//! `q` and `k` are moderate, so that the softmax is neither uniform nor one-hot; `v` stays finite
//! (docs/DECISIONS.md: masked keys do not read their values). `M = max_j |V[b, g, j, e]|` is built
//! from `|v|` in its logical form, reduced over the keys, repeated over the query heads of each KV
//! head and laid out as the output.

use crate::problem::{nth, Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{broadcast_partner, MAX_NUMEL};
use crate::values::{bool_tensor, FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{AttentionAttrs, AttnLayout, BinaryOp, MaskAlign, MaskKind, ReduceOp};
use backend_api::{DType, GraphBuilder, Result, Tensor, Value};
use proptest::prelude::*;
use proptest::sample::{select, Index};

/// Upper bound on `B·Hq·Sq·Sk·(D + Dv)` per case: lavapipe runs every case.
const WORK_CAP: usize = 2_000_000;

/// Lengths and widths the fitting steps down through, so that shrunk sizes stay on tile edges.
const EDGES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 80, 96, 127, 128, 129];

/// The sizes of one case (`Hq = hkv · group`), drawn by proptest so that they shrink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Batch `B`.
    pub b: usize,
    /// Key/value heads `Hkv`.
    pub hkv: usize,
    /// Query heads per KV head, `Hq / Hkv`.
    pub group: usize,
    /// Query length `Sq`.
    pub sq: usize,
    /// Key length `Sk`.
    pub sk: usize,
    /// Query/key width `D`.
    pub d: usize,
    /// Value width `Dv`.
    pub dv: usize,
}

impl Sizes {
    /// `Hq`.
    pub fn hq(&self) -> usize {
        self.hkv * self.group
    }

    fn work(&self) -> usize {
        [self.b, self.hq(), self.sq.max(1), self.sk.max(1), self.d + self.dv]
            .iter()
            .fold(1usize, |a, &x| a.saturating_mul(x))
    }

    /// The largest tensor of the case: `q`, `k`, `v`, the output, or a full-shape mask or bias.
    fn largest(&self) -> usize {
        let m = |xs: &[usize]| xs.iter().fold(1usize, |a, &x| a.saturating_mul(x.max(1)));
        let (b, hq, hkv, sq, sk) = (self.b, self.hq(), self.hkv, self.sq, self.sk);
        let all = [
            m(&[b, hq, sq, self.d]),
            m(&[b, hkv, sk, self.d.max(self.dv)]),
            m(&[b, hq, sq, self.dv]),
            m(&[b, hq, sq, sk]),
        ];
        all.into_iter().max().unwrap_or(0)
    }

    /// Steps a random size down until the work and every tensor fit the caps. A decode case
    /// (`Sq = 1`) keeps its long key range as long as anything else can shrink.
    fn fit(&mut self, rng: &mut Rng) {
        while self.work() > WORK_CAP || self.largest() > MAX_NUMEL {
            let decode = self.sq == 1 && self.sk > 160;
            let Sizes { b, hkv, group, sq, sk, d, dv } = self;
            let mut slots: Vec<&mut usize> = [b, hkv, group, sq, d, dv].into_iter().filter(|x| **x > 1).collect();
            if (!decode || slots.is_empty()) && *sk > 1 {
                slots.push(sk);
            }
            let n = slots.len();
            match slots.into_iter().nth(rng.below(n)) {
                Some(x) => *x = step_down(*x),
                None => return,
            }
        }
    }
}

/// The largest edge below `x` (`x − 1` between edges above the list).
fn step_down(x: usize) -> usize {
    if x > 129 {
        return 129.max(x / 2).min(x - 1);
    }
    EDGES.iter().rev().copied().find(|&e| e < x).unwrap_or(1)
}

/// A sequence length: mostly small, often on a tile edge, sometimes 0.
fn seq_len() -> BoxedStrategy<usize> {
    prop_oneof![
        4 => 1usize..=24,
        3 => select(vec![15usize, 16, 17, 31, 32, 33, 47, 63, 64, 65, 96, 127, 128, 129, 160]),
        1 => Just(0usize),
    ]
    .boxed()
}

/// A decode key range: anywhere to 1100, often around the multiples of 128.
fn decode_len() -> BoxedStrategy<usize> {
    let edges = vec![255usize, 256, 257, 383, 384, 385, 511, 512, 513, 767, 768, 769, 1023, 1024, 1025, 1100];
    prop_oneof![1 => 1usize..=1100, 1 => select(edges)].boxed()
}

/// A head width: small and odd, or a common model width and its neighbours.
fn head_width() -> BoxedStrategy<usize> {
    prop_oneof![3 => 1usize..=20, 2 => select(vec![32usize, 63, 64, 65, 80, 96, 127, 128, 130])].boxed()
}

/// Sizes before fitting: `Hq` in 1..=8 with a divisor as `Hkv`.
fn sizes() -> BoxedStrategy<Sizes> {
    let lens = prop_oneof![5 => (seq_len(), seq_len()), 1 => (Just(1usize), decode_len())];
    let widths = (head_width(), prop_oneof![1 => Just(None), 1 => head_width().prop_map(Some)]);
    (1usize..=3, 1usize..=8, any::<Index>(), lens, widths)
        .prop_map(|(b, hq, pick, (sq, sk), (d, dv))| {
            let divisors: Vec<usize> = (1..=hq).filter(|x| hq % x == 0).collect();
            let hkv = divisors.get(pick.index(divisors.len())).copied().unwrap_or(1);
            Sizes { b, hkv, group: hq / hkv, sq, sk, d, dv: dv.unwrap_or(d) }
        })
        .boxed()
}

/// Variants for the `Attention` row.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    match row {
        "Attention" => per_dtype(row, |dtype| {
            (skeleton(0..=0, 1, 5), sizes()).prop_map(move |(sk, s)| case(dtype, &sk, s, None)).boxed()
        }),
        _ => None,
    }
}

/// The shape of a tensor of `layout` holding the logical `[b, h, s, w]`.
pub fn layout_shape(layout: AttnLayout, [b, h, s, w]: [usize; 4]) -> Vec<usize> {
    match layout {
        AttnLayout::Bhsd => vec![b, h, s, w],
        AttnLayout::Bshd => vec![b, s, h, w],
        AttnLayout::BsPacked => vec![b, s, h * w],
        AttnLayout::FlatHeads => vec![b * h, s, w],
    }
}

fn pick_layout(rng: &mut Rng) -> AttnLayout {
    match rng.below(4) {
        0 => AttnLayout::Bhsd,
        1 => AttnLayout::Bshd,
        2 => AttnLayout::BsPacked,
        _ => AttnLayout::FlatHeads,
    }
}

/// Mask, alignment, scale and soft-cap.
fn draw_attrs(rng: &mut Rng, s: &Sizes, layout: AttnLayout) -> AttentionAttrs {
    let sk = s.sk as u64;
    let mask = match rng.below(4) {
        0 => MaskKind::None,
        1 => MaskKind::Causal,
        _ => MaskKind::SlidingWindow {
            window: match rng.below(6) {
                0 => 1,
                1 => 2,
                2 => sk.max(1),
                3 => sk + 1,
                4 => rng.pick(&[1u64 << 20, 1 << 33, u64::MAX]),
                _ => rng.int_in(1, sk as i64 + 2) as u64,
            },
        },
    };
    AttentionAttrs {
        num_kv_heads: s.hkv as u32,
        mask,
        mask_align: if rng.chance(0.5) { MaskAlign::End } else { MaskAlign::Start },
        scale: if rng.chance(0.5) { None } else { Some(rng.pick(&[0.0f32, -0.3, 0.05, 0.1, 0.25, 0.5, 1.0])) },
        softcap: if rng.chance(0.7) { None } else { Some(rng.pick(&[0.5f32, 1.0, 5.0, 30.0])) },
        ..AttentionAttrs::new(layout, s.hq() as u32)
    }
}

/// `q` and `k`: uniform at one of four spreads, IEEE specials at a tenth of the case rate.
fn qk_values(rng: &mut Rng) -> Values {
    let s = rng.pick(&[0.5, 1.0, 2.0, 3.0]);
    Values::floats(FloatDomain::new(&[Piece::Uniform(-s, s)], IEEE_SPECIALS))
}

/// `v`: finite, mostly in [−1, 1], some up to 10 in magnitude.
fn v_values() -> Values {
    let pieces = [Piece::Uniform(-1.0, 1.0), Piece::LogMag { lo: 1e-2, hi: 10.0, signed: true }];
    Values::floats(FloatDomain::new(&pieces, &[0.0, -0.0]))
}

/// Bias values: moderate, with −∞ (masking) more often than +∞ and NaN.
fn bias_values() -> Values {
    let specials = [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NAN];
    Values::floats(FloatDomain::new(&[Piece::Uniform(-3.0, 3.0)], &specials))
}

/// One case; `layout` forces the layout (else it is drawn).
pub(crate) fn case(dtype: DType, sk: &Skeleton, mut s: Sizes, layout: Option<AttnLayout>) -> Generated {
    let mut rng = sk.rng();
    s.fit(&mut rng);
    let layout = layout.unwrap_or_else(|| pick_layout(&mut rng));
    let attrs = draw_attrs(&mut rng, &s, layout);
    let (hq, full) = (s.hq(), [s.b, s.hq(), s.sq, s.sk]);
    let qk = qk_values(&mut rng);
    let q = qk.tensor(&mut rng, dtype, &layout_shape(layout, [s.b, hq, s.sq, s.d]), sk.rate / 10.0)?;
    let k = qk.tensor(&mut rng, dtype, &layout_shape(layout, [s.b, s.hkv, s.sk, s.d]), sk.rate / 10.0)?;
    let v = v_values().tensor(&mut rng, dtype, &layout_shape(layout, [s.b, s.hkv, s.sk, s.dv]), sk.rate)?;
    let keep = if rng.chance(0.3) {
        let p_true = rng.pick(&[0.9, 0.6, 0.3, 0.05]);
        let shape = broadcast_partner(&mut rng, &full);
        Some(bool_tensor(&mut rng, &shape, p_true)?)
    } else {
        None
    };
    let bias = if rng.chance(0.35) {
        let bias_dtype = if rng.chance(0.5) { DType::F32 } else { dtype };
        let shape = broadcast_partner(&mut rng, &full);
        Some(bias_values().tensor(&mut rng, bias_dtype, &shape, sk.rate / 4.0)?)
    } else {
        None
    };
    let mut pb = ProblemBuilder::new();
    let (q, k, v) = (pb.leaf(sk.kind(0), q)?, pb.leaf(sk.kind(1), k)?, pb.leaf(sk.kind(2), v)?);
    let keep = keep.map(|t| pb.leaf(sk.kind(3), t)).transpose()?;
    let bias = bias.map(|t| pb.leaf(sk.kind(4), t)).transpose()?;
    let y = pb.g().attention(q, k, v, keep, bias, attrs)?;
    pb.finish_with_magnitude(&[y], |g, abs| Ok(vec![magnitude(g, nth(abs, 2)?, &s, layout)?]))
}

/// `M[b, h, i, e] = max_j |V[b, g, j, e]|` (0 when `Sk = 0`) in the output's layout, from `|v|`.
pub fn magnitude(g: &mut GraphBuilder, v_abs: Value, s: &Sizes, layout: AttnLayout) -> Result<Value> {
    let i = |x: usize| x as i64;
    let (b, hkv, hq, sq, sk, dv) = (i(s.b), i(s.hkv), i(s.hq()), i(s.sq), i(s.sk), i(s.dv));
    let bhsd = [0, 2, 1, 3];
    let logical = match layout {
        AttnLayout::Bhsd => v_abs,
        AttnLayout::Bshd => g.transpose(v_abs, &bhsd)?,
        AttnLayout::BsPacked => {
            let split = g.reshape(v_abs, &[b, sk, hkv, dv])?;
            g.transpose(split, &bhsd)?
        }
        AttnLayout::FlatHeads => g.reshape(v_abs, &[b, hkv, sk, dv])?,
    };
    // Max over no keys is −∞; the row is 0 then and must be exactly 0.
    let m = g.reduce(ReduceOp::Max, logical, &[2], true)?;
    let zero = g.constant(&Tensor::from_slice::<f64>(&[], &[0.0])?)?;
    let m = g.binary(BinaryOp::Max, m, zero)?;
    let m = g.reshape(m, &[b, hkv, 1, 1, dv])?;
    let m = g.expand(m, vec![s.b, s.hkv, s.group, s.sq, s.dv])?;
    let m = g.reshape(m, &[b, hq, sq, dv])?;
    match layout {
        AttnLayout::Bhsd => Ok(m),
        AttnLayout::Bshd => g.transpose(m, &bhsd),
        AttnLayout::BsPacked => {
            let t = g.transpose(m, &bhsd)?;
            g.reshape(t, &[b, sq, hq * dv])
        }
        AttnLayout::FlatHeads => g.reshape(m, &[b * hq, sq, dv]),
    }
}

#[cfg(test)]
mod tests;
