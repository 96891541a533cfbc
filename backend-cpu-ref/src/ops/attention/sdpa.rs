//! Attention (§2.8.1): scaled dot-product attention with grouped-query heads, four layouts,
//! soft-capping, structural masks, a Bool keep-mask and an additive bias, computed in f64 straight
//! from the spec's five steps and rounded once into the dtype of `q`.
//!
//! Every layout goes through one logical index mapping ([`at`]): `q`, `k` and `v` are first read
//! into logical `[B, H, S, W]` arrays, the rows are computed there, and the output is written back
//! in the layout. The keep-mask and the bias are read through broadcast strides over
//! `[B, Hq, Sq, Sk]`, whatever the layout.
//!
//! Keys whose logit is −∞ (disallowed, or given a −∞ bias) have the weight 0 exactly and are left
//! out of the weighted sum, so their values are never read: a NaN in a masked row of `v` does not
//! reach the output (docs/DECISIONS.md).

use crate::layout::{broadcast_strides, count};
use crate::mem::try_filled;
use crate::ops::math;
use crate::value::{floats, from_floats};
use backend_api::op::{AttentionAttrs, AttnLayout, MaskAlign, MaskKind};
use backend_api::{bail, DType, Result, Tensor};

/// The logical sizes of one attention problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dims {
    /// Batch `B`.
    pub b: usize,
    /// Query heads `Hq`.
    pub hq: usize,
    /// Key/value heads `Hkv`.
    pub hkv: usize,
    /// Query length `Sq`.
    pub sq: usize,
    /// Key length `Sk`.
    pub sk: usize,
    /// Query/key head width `D`.
    pub d: usize,
    /// Value head width `Dv`.
    pub dv: usize,
}

/// The shape of a tensor of `layout` holding the logical `[b, h, s, w]`.
pub(crate) fn layout_shape(layout: AttnLayout, [b, h, s, w]: [usize; 4]) -> Result<Vec<usize>> {
    let mul = |x: usize, y: usize| match x.checked_mul(y) {
        Some(n) => Ok(n),
        None => bail!(Shape, "Attention ({layout:?}): {x}·{y} overflows"),
    };
    Ok(match layout {
        AttnLayout::Bhsd => vec![b, h, s, w],
        AttnLayout::Bshd => vec![b, s, h, w],
        AttnLayout::BsPacked => vec![b, s, mul(h, w)?],
        AttnLayout::FlatHeads => vec![mul(b, h)?, s, w],
    })
}

/// The linear offset of logical element `[b, h, s, w]` in a tensor of `layout` whose logical
/// sizes are `[_, heads, len, width]`. `Bhsd` and `FlatHeads` share their memory order, as do
/// `Bshd` and `BsPacked`; only the shapes differ.
pub(crate) fn at(layout: AttnLayout, [_, heads, len, width]: [usize; 4], [b, h, s, w]: [usize; 4]) -> usize {
    match layout {
        AttnLayout::Bhsd | AttnLayout::FlatHeads => ((b * heads + h) * len + s) * width + w,
        AttnLayout::Bshd | AttnLayout::BsPacked => ((b * len + s) * heads + h) * width + w,
    }
}

/// `dim` of `t`, or a `Shape` error naming the operand and the layout.
fn dim(t: &Tensor, axis: usize, name: &str, layout: AttnLayout) -> Result<usize> {
    match t.shape().get(axis) {
        Some(&n) => Ok(n),
        None => bail!(Shape, "Attention ({layout:?}) {name} {}{:?} has too low a rank", t.dtype(), t.shape()),
    }
}

/// `n / by` when `by` divides `n`, else a `Shape` error.
fn exact_div(n: usize, by: usize, what: &str) -> Result<usize> {
    if by == 0 || !n.is_multiple_of(by) {
        bail!(Shape, "Attention {what}: {n} is not a multiple of {by}");
    }
    Ok(n / by)
}

/// The logical sizes of `q`, `k`, `v` under the attributes, every shape checked against them.
pub(crate) fn dims(a: &AttentionAttrs, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Dims> {
    let (hq, hkv, l) = (a.num_heads as usize, a.num_kv_heads as usize, a.layout);
    if hq == 0 || hkv == 0 || !hq.is_multiple_of(hkv) {
        bail!(Attribute, "Attention num_heads {hq} must be a non-zero multiple of num_kv_heads {hkv}");
    }
    let rank = match l {
        AttnLayout::Bhsd | AttnLayout::Bshd => 4,
        AttnLayout::BsPacked | AttnLayout::FlatHeads => 3,
    };
    for (n, t) in [("q", q), ("k", k), ("v", v)] {
        if t.shape().len() != rank {
            bail!(Shape, "Attention ({l:?}) {n} {}{:?} must have rank {rank}", t.dtype(), t.shape());
        }
    }
    let d = |t, axis, n| dim(t, axis, n, l);
    let dims = match l {
        AttnLayout::Bhsd => Dims {
            b: d(q, 0, "q")?,
            hq,
            hkv,
            sq: d(q, 2, "q")?,
            sk: d(k, 2, "k")?,
            d: d(q, 3, "q")?,
            dv: d(v, 3, "v")?,
        },
        AttnLayout::Bshd => Dims {
            b: d(q, 0, "q")?,
            hq,
            hkv,
            sq: d(q, 1, "q")?,
            sk: d(k, 1, "k")?,
            d: d(q, 3, "q")?,
            dv: d(v, 3, "v")?,
        },
        AttnLayout::BsPacked => Dims {
            b: d(q, 0, "q")?,
            hq,
            hkv,
            sq: d(q, 1, "q")?,
            sk: d(k, 1, "k")?,
            d: exact_div(d(q, 2, "q")?, hq, "(BsPacked) q width over num_heads")?,
            dv: exact_div(d(v, 2, "v")?, hkv, "(BsPacked) v width over num_kv_heads")?,
        },
        AttnLayout::FlatHeads => Dims {
            b: exact_div(d(q, 0, "q")?, hq, "(FlatHeads) q rows over num_heads")?,
            hq,
            hkv,
            sq: d(q, 1, "q")?,
            sk: d(k, 1, "k")?,
            d: d(q, 2, "q")?,
            dv: d(v, 2, "v")?,
        },
    };
    if dims.d == 0 {
        bail!(Shape, "Attention ({l:?}) q {:?}: head width D must be >= 1", q.shape());
    }
    let want = [
        ("q", q, [dims.b, hq, dims.sq, dims.d]),
        ("k", k, [dims.b, hkv, dims.sk, dims.d]),
        ("v", v, [dims.b, hkv, dims.sk, dims.dv]),
    ];
    for (n, t, logical) in want {
        let s = layout_shape(l, logical)?;
        if t.shape() != s.as_slice() {
            bail!(Shape, "Attention ({l:?}) {n} {:?} must be {s:?} for [B, H, S, W] = {logical:?}", t.shape());
        }
    }
    Ok(dims)
}

/// The elements of `t` (logical sizes `size`, laid out as `layout`) in logical `[B, H, S, W]` order.
fn logical(t: &Tensor, layout: AttnLayout, size: [usize; 4], name: &str) -> Result<Vec<f64>> {
    let raw = floats(t, name)?;
    let mut out = try_filled(count(&size)?, 0.0)?;
    let [nb, nh, ns, nw] = size;
    let mut o = 0;
    for b in 0..nb {
        for h in 0..nh {
            for s in 0..ns {
                for w in 0..nw {
                    match (raw.get(at(layout, size, [b, h, s, w])), out.get_mut(o)) {
                        (Some(&x), Some(y)) => *y = x,
                        _ => bail!(Shape, "Attention {name} {:?}: logical index out of range", t.shape()),
                    }
                    o += 1;
                }
            }
        }
    }
    Ok(out)
}

/// A keep-mask or bias read under broadcasting as `[B, Hq, Sq, Sk]`.
struct Broadcast<T> {
    data: Vec<T>,
    strides: Vec<usize>,
}

impl<T: Copy> Broadcast<T> {
    fn new(data: Vec<T>, from: &[usize], dims: &Dims, name: &str) -> Result<Broadcast<T>> {
        let target = [dims.b, dims.hq, dims.sq, dims.sk];
        let strides = broadcast_strides(from, &target)
            .map_err(|e| e.context(format!("Attention {name} {from:?} against [B, Hq, Sq, Sk] = {target:?}")))?;
        Ok(Broadcast { data, strides })
    }

    /// The element at logical `[b, h, i, j]`.
    fn get(&self, idx: [usize; 4]) -> Option<T> {
        let off = idx.iter().zip(&self.strides).map(|(i, s)| i * s).sum::<usize>();
        self.data.get(off).copied()
    }
}

/// Everything one row of the computation reads.
struct Problem {
    dims: Dims,
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    keep: Option<Broadcast<bool>>,
    bias: Option<Broadcast<f64>>,
    scale: f64,
    softcap: Option<f64>,
    mask: MaskKind,
    /// `δ`: the key index of the diagonal for query 0.
    delta: i128,
}

/// `Attention(q, k, v[, keep_mask][, bias])` (§2.8.1); `extra` holds the optional inputs in that
/// order, as the attributes announce them.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, extra: &[&Tensor], a: &AttentionAttrs) -> Result<Tensor> {
    let p = problem(q, k, v, extra, a)?;
    let Dims { b, hq, sq, dv, .. } = p.dims;
    let mut o = try_filled(count(&[b, hq, sq, dv])?, 0.0)?;
    let mut logits = try_filled(p.dims.sk, 0.0)?;
    let mut row_start = 0;
    for bi in 0..b {
        for h in 0..hq {
            for i in 0..sq {
                let Some(out) = o.get_mut(row_start..row_start + dv) else {
                    bail!(Shape, "Attention output row out of range");
                };
                p.row([bi, h, i], &mut logits, out)?;
                row_start += dv;
            }
        }
    }
    let out_shape = layout_shape(a.layout, [b, hq, sq, dv])?;
    let mut y = try_filled(o.len(), 0.0)?;
    for (n, &x) in o.iter().enumerate() {
        // Logical row-major index n → [b, h, i, e].
        let (e, r) = (n % dv.max(1), n / dv.max(1));
        let (i, r) = (r % sq.max(1), r / sq.max(1));
        let (h, bi) = (r % hq, r / hq);
        match y.get_mut(at(a.layout, [b, hq, sq, dv], [bi, h, i, e])) {
            Some(slot) => *slot = x,
            None => bail!(Shape, "Attention output index out of range for {out_shape:?}"),
        }
    }
    from_floats(q.dtype(), &out_shape, &y)
}

/// Reads and checks the operands.
fn problem(q: &Tensor, k: &Tensor, v: &Tensor, extra: &[&Tensor], a: &AttentionAttrs) -> Result<Problem> {
    for (n, t) in [("k", k), ("v", v)] {
        if t.dtype() != q.dtype() {
            bail!(DType, "Attention {n} {}{:?} must have the dtype of q {}", t.dtype(), t.shape(), q.dtype());
        }
    }
    let dims = dims(a, q, k, v)?;
    let mut rest = extra.iter();
    let keep = match (a.has_keep_mask, a.has_keep_mask.then(|| rest.next()).flatten()) {
        (true, Some(m)) => Some(keep_mask(m, &dims)?),
        (true, None) => bail!(Arity, "Attention: has_keep_mask is set but the keep_mask input is missing"),
        (false, _) => None,
    };
    let bias = match (a.has_bias, rest.next()) {
        (true, Some(t)) => Some(bias(t, q.dtype(), &dims)?),
        (true, None) => bail!(Arity, "Attention: has_bias is set but the bias input is missing"),
        (false, _) => None,
    };
    Ok(Problem {
        q: logical(q, a.layout, [dims.b, dims.hq, dims.sq, dims.d], "q")?,
        k: logical(k, a.layout, [dims.b, dims.hkv, dims.sk, dims.d], "k")?,
        v: logical(v, a.layout, [dims.b, dims.hkv, dims.sk, dims.dv], "v")?,
        keep,
        bias,
        scale: match a.scale {
            Some(s) if s.is_finite() => f64::from(s),
            Some(s) => bail!(Attribute, "Attention scale {s} must be finite"),
            None => 1.0 / (dims.d as f64).sqrt(),
        },
        softcap: match a.softcap {
            Some(c) if c.is_finite() && c > 0.0 => Some(f64::from(c)),
            Some(c) => bail!(Attribute, "Attention softcap {c} must be finite and > 0"),
            None => None,
        },
        mask: match a.mask {
            MaskKind::SlidingWindow { window: 0 } => bail!(Attribute, "Attention sliding window must be >= 1"),
            m @ (MaskKind::None | MaskKind::Causal | MaskKind::SlidingWindow { .. }) => m,
        },
        delta: match a.mask_align {
            MaskAlign::End => dims.sk as i128 - dims.sq as i128,
            MaskAlign::Start => 0,
        },
        dims,
    })
}

fn keep_mask(m: &Tensor, dims: &Dims) -> Result<Broadcast<bool>> {
    if m.dtype() != DType::Bool {
        bail!(DType, "Attention keep_mask {}{:?} must be Bool", m.dtype(), m.shape());
    }
    let data = m.bytes().iter().map(|&x| x != 0).collect();
    Broadcast::new(data, m.shape(), dims, "keep_mask")
}

fn bias(t: &Tensor, q: DType, dims: &Dims) -> Result<Broadcast<f64>> {
    if t.dtype() != q && t.dtype() != DType::F32 {
        bail!(DType, "Attention bias {}{:?} must have the dtype of q ({q}) or F32", t.dtype(), t.shape());
    }
    Broadcast::new(floats(t, "Attention bias")?, t.shape(), dims, "bias")
}

impl Problem {
    /// Whether the structural mask allows key `j` for query `i` (step 4).
    fn structural(&self, i: usize, j: usize) -> bool {
        let diag = i as i128 + self.delta;
        let j = j as i128;
        match self.mask {
            MaskKind::None => true,
            MaskKind::Causal => j <= diag,
            MaskKind::SlidingWindow { window } => j <= diag && j > diag - i128::from(window),
        }
    }

    /// The logit of key `j` for query row `[b, h, i]` (steps 1–4), `g` the row's KV head.
    fn logit(&self, [b, h, i]: [usize; 3], g: usize, j: usize) -> Result<f64> {
        let Dims { hq, hkv, sq, sk, d, .. } = self.dims;
        // A disallowed key's logit is −∞ whatever its dot product (even NaN): step 4 overrides 1–3.
        let kept = self.keep.as_ref().is_none_or(|m| m.get([b, h, i, j]).unwrap_or(false));
        if !kept || !self.structural(i, j) {
            return Ok(f64::NEG_INFINITY);
        }
        let qr = ((b * hq + h) * sq + i) * d;
        let kr = ((b * hkv + g) * sk + j) * d;
        let (Some(qs), Some(ks)) = (self.q.get(qr..qr + d), self.k.get(kr..kr + d)) else {
            bail!(Shape, "Attention q/k row out of range");
        };
        let mut a = self.scale * qs.iter().zip(ks).map(|(x, y)| x * y).sum::<f64>();
        if let Some(c) = self.softcap {
            a = c * (a / c).tanh();
        }
        if let Some(bias) = &self.bias {
            a += bias.get([b, h, i, j]).unwrap_or(f64::NAN);
        }
        Ok(a)
    }

    /// Output row `[b, h, i]` into `out` (`Dv` values); `logits` is scratch of `Sk` values.
    fn row(&self, [b, h, i]: [usize; 3], logits: &mut [f64], out: &mut [f64]) -> Result<()> {
        let Dims { hq, hkv, sk, dv, .. } = self.dims;
        let g = h / (hq / hkv);
        for (j, a) in logits.iter_mut().enumerate() {
            *a = self.logit([b, h, i], g, j)?;
        }
        // Step 5: NaN-propagating max; a row with no allowed finite-or-+∞ logit outputs 0.
        let m = logits.iter().fold(f64::NEG_INFINITY, |m, &a| math::max(m, a));
        out.fill(0.0);
        if m == f64::NEG_INFINITY {
            return Ok(());
        }
        let mut total = 0.0;
        for (j, &a) in logits.iter().enumerate() {
            if a == f64::NEG_INFINITY {
                continue;
            }
            // m = +∞ or NaN makes w NaN, and with it the whole row (∞ − ∞, NaN − x).
            let w = (a - m).exp();
            total += w;
            let vr = ((b * hkv + g) * sk + j) * dv;
            let Some(vs) = self.v.get(vr..vr + dv) else { bail!(Shape, "Attention v row out of range") };
            for (o, x) in out.iter_mut().zip(vs) {
                *o += w * x;
            }
        }
        for o in out.iter_mut() {
            *o /= total;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
