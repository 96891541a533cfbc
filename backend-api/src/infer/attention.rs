//! Attention (§2.8.1–2.8.2) and rotary embeddings (§2.8.3–2.8.4).

use super::util::{mul, out, rank_is, st, static_at};
use super::{arity, axis_ok, dtype_in};
use crate::op::{AttentionAttrs, AttentionBackwardAttrs, AttnGrad, AttnLayout, MaskKind, RopeAttrs};
use crate::shape::broadcast_shapes;
use crate::{bail, DType, DTypeSet, Dim, Result, Shape, TensorType};

/// The logical sizes of one attention problem and its output shape.
struct AttnShapes {
    b: Dim,
    sq: Dim,
    sk: Dim,
    out: Vec<Dim>,
}

fn check_attrs(a: &AttentionAttrs) -> Result<(usize, usize)> {
    if a.num_heads == 0 || a.num_kv_heads == 0 {
        bail!(Attribute, "Attention num_heads {} and num_kv_heads {} must be >= 1", a.num_heads, a.num_kv_heads);
    }
    if !a.num_heads.is_multiple_of(a.num_kv_heads) {
        bail!(Attribute, "Attention num_heads {} is not a multiple of num_kv_heads {}", a.num_heads, a.num_kv_heads);
    }
    if a.mask == (MaskKind::SlidingWindow { window: 0 }) {
        bail!(Attribute, "Attention sliding window must be >= 1");
    }
    if let Some(s) = a.scale {
        if !s.is_finite() {
            bail!(Attribute, "Attention scale {s} must be finite");
        }
    }
    if let Some(c) = a.softcap {
        if !c.is_finite() || c <= 0.0 {
            bail!(Attribute, "Attention softcap {c} must be finite and > 0");
        }
    }
    Ok((a.num_heads as usize, a.num_kv_heads as usize))
}

/// Paired dims of two operands must be equal (`what` names the dim, `a`/`b` the operands).
fn dim_eq(x: &Dim, y: &Dim, what: &str, (an, a): (&str, &TensorType), (bn, b): (&str, &TensorType)) -> Result<()> {
    if x != y {
        bail!(Shape, "Attention {what}: {an} {a} gives {x} but {bn} {b} gives {y}");
    }
    Ok(())
}

/// `Bhsd` (head axis 1, sequence axis 2) and `Bshd` (head axis 2, sequence axis 1).
fn four_d(q: &TensorType, k: &TensorType, v: &TensorType, h: (usize, usize), head_ax: usize) -> Result<AttnShapes> {
    let seq_ax = 3 - head_ax;
    for (n, t) in [("q", q), ("k", k), ("v", v)] {
        rank_is(t, 4, &format!("Attention {n}"))?;
    }
    let (qd, kd, vd) = (&q.shape.0, &k.shape.0, &v.shape.0);
    for (n, t, want) in [("q", q, h.0), ("k", k, h.1), ("v", v, h.1)] {
        if t.shape.0[head_ax] != st(want) {
            bail!(Shape, "Attention {n} {t}: axis {head_ax} must be the head count {want}");
        }
    }
    dim_eq(&qd[0], &kd[0], "batch", ("q", q), ("k", k))?;
    dim_eq(&qd[0], &vd[0], "batch", ("q", q), ("v", v))?;
    dim_eq(&qd[3], &kd[3], "head width D", ("q", q), ("k", k))?;
    dim_eq(&kd[seq_ax], &vd[seq_ax], "key length", ("k", k), ("v", v))?;
    if qd[3] == st(0) {
        bail!(Shape, "Attention q {q}: head width D must be >= 1");
    }
    let mut out = qd.clone();
    out[3] = vd[3].clone();
    Ok(AttnShapes { b: qd[0].clone(), sq: qd[seq_ax].clone(), sk: kd[seq_ax].clone(), out })
}

fn packed(q: &TensorType, k: &TensorType, v: &TensorType, (hq, hkv): (usize, usize)) -> Result<AttnShapes> {
    for (n, t) in [("q", q), ("k", k), ("v", v)] {
        rank_is(t, 3, &format!("Attention (BsPacked) {n}"))?;
    }
    let (qd, kd, vd) = (&q.shape.0, &k.shape.0, &v.shape.0);
    dim_eq(&qd[0], &kd[0], "batch", ("q", q), ("k", k))?;
    dim_eq(&qd[0], &vd[0], "batch", ("q", q), ("v", v))?;
    dim_eq(&kd[1], &vd[1], "key length", ("k", k), ("v", v))?;
    let q2 = static_at(q, 2, "Attention (BsPacked) q")?;
    if q2 % hq != 0 || q2 == 0 {
        bail!(Shape, "Attention (BsPacked) q {q}: last dim {q2} must be a non-zero multiple of num_heads {hq}");
    }
    let d = q2 / hq;
    if k.shape.0[2] != st(mul(hkv, d, "Attention (BsPacked) k width")?) {
        bail!(Shape, "Attention (BsPacked) k {k}: last dim must be num_kv_heads·D = {hkv}·{d}");
    }
    let v2 = static_at(v, 2, "Attention (BsPacked) v")?;
    if v2 % hkv != 0 {
        bail!(Shape, "Attention (BsPacked) v {v}: last dim {v2} must be a multiple of num_kv_heads {hkv}");
    }
    let out = vec![qd[0].clone(), qd[1].clone(), st(mul(hq, v2 / hkv, "Attention (BsPacked) output width")?)];
    Ok(AttnShapes { b: qd[0].clone(), sq: qd[1].clone(), sk: kd[1].clone(), out })
}

fn flat(q: &TensorType, k: &TensorType, v: &TensorType, (hq, hkv): (usize, usize)) -> Result<AttnShapes> {
    for (n, t) in [("q", q), ("k", k), ("v", v)] {
        rank_is(t, 3, &format!("Attention (FlatHeads) {n}"))?;
    }
    let (qd, kd, vd) = (&q.shape.0, &k.shape.0, &v.shape.0);
    let q0 = static_at(q, 0, "Attention (FlatHeads) q")?;
    if q0 % hq != 0 {
        bail!(Shape, "Attention (FlatHeads) q {q}: leading dim {q0} must be a multiple of num_heads {hq}");
    }
    let b = q0 / hq;
    let kv_rows = mul(b, hkv, "Attention (FlatHeads) k rows")?;
    for (n, t) in [("k", k), ("v", v)] {
        if t.shape.0[0] != st(kv_rows) {
            bail!(Shape, "Attention (FlatHeads) {n} {t}: leading dim must be B·num_kv_heads = {b}·{hkv}");
        }
    }
    dim_eq(&qd[2], &kd[2], "head width D", ("q", q), ("k", k))?;
    dim_eq(&kd[1], &vd[1], "key length", ("k", k), ("v", v))?;
    if qd[2] == st(0) {
        bail!(Shape, "Attention q {q}: head width D must be >= 1");
    }
    let out = vec![qd[0].clone(), qd[1].clone(), vd[2].clone()];
    Ok(AttnShapes { b: st(b), sq: qd[1].clone(), sk: kd[1].clone(), out })
}

/// Checks `q`, `k`, `v` against the layout; returns the logical sizes.
fn qkv(a: &AttentionAttrs, ins: &[TensorType]) -> Result<AttnShapes> {
    let h = check_attrs(a)?;
    let (q, k, v) = (&ins[0], &ins[1], &ins[2]);
    dtype_in(q, DTypeSet::FLOAT32_FAMILY, "Attention input q")?;
    for (n, t) in [("k", k), ("v", v)] {
        if t.dtype != q.dtype {
            bail!(DType, "Attention {n} {t} must have the dtype of q {q}");
        }
    }
    match a.layout {
        AttnLayout::Bhsd => four_d(q, k, v, h, 1),
        AttnLayout::Bshd => four_d(q, k, v, h, 2),
        AttnLayout::BsPacked => packed(q, k, v, h),
        AttnLayout::FlatHeads => flat(q, k, v, h),
    }
}

/// Checks the optional keep-mask and bias (`extra`, in that order) against `[B, Hq, Sq, Sk]`.
fn masks(a: &AttentionAttrs, s: &AttnShapes, q: DType, extra: &[TensorType]) -> Result<()> {
    let target = Shape(vec![s.b.clone(), st(a.num_heads as usize), s.sq.clone(), s.sk.clone()]);
    let named = [("keep_mask", a.has_keep_mask), ("bias", a.has_bias)];
    let present = named.iter().filter(|(_, p)| *p).map(|(n, _)| *n);
    for (name, t) in present.zip(extra) {
        if name == "keep_mask" && t.dtype != DType::Bool {
            bail!(DType, "Attention keep_mask {t} must be Bool");
        }
        if name == "bias" && t.dtype != q && t.dtype != DType::F32 {
            bail!(DType, "Attention bias {t} must have the dtype of q ({q}) or F32");
        }
        let grown = broadcast_shapes(&t.shape, &target).map_err(|e| e.context(format!("Attention {name}")))?;
        if grown != target {
            bail!(Shape, "Attention {name} {t} does not broadcast to [B, Hq, Sq, Sk] = {target}");
        }
    }
    Ok(())
}

pub(crate) fn attention(a: &AttentionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let n = 3 + usize::from(a.has_keep_mask) + usize::from(a.has_bias);
    arity(ins, n, "Attention (q, k, v, [keep_mask], [bias])")?;
    let s = qkv(a, ins)?;
    masks(a, &s, ins[0].dtype, &ins[3..])?;
    Ok(vec![out(ins[0].dtype, s.out)?])
}

pub(crate) fn attention_backward(a: &AttentionBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let f = &a.forward;
    let n = 4 + usize::from(f.has_keep_mask) + usize::from(f.has_bias);
    arity(ins, n, "AttentionBackward (q, k, v, d_out, [keep_mask], [bias])")?;
    let s = qkv(f, ins)?;
    let d = &ins[3];
    if d.dtype != ins[0].dtype {
        bail!(DType, "AttentionBackward d_out {d} must have the dtype of q {}", ins[0]);
    }
    if d.shape.0 != s.out {
        bail!(Shape, "AttentionBackward d_out {d} must have the forward output shape {}", Shape(s.out));
    }
    masks(f, &s, ins[0].dtype, &ins[4..])?;
    let t = match a.wrt {
        AttnGrad::Query => &ins[0],
        AttnGrad::Key => &ins[1],
        AttnGrad::Value => &ins[2],
    };
    Ok(vec![t.clone()])
}

pub(crate) fn rope(a: &RopeAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "Rope/RopeBackward (x, cos, sin)")?;
    let (x, cos, sin) = (&ins[0], &ins[1], &ins[2]);
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, "Rope input x")?;
    if a.head_dim < 2 {
        bail!(Attribute, "Rope head_dim {} must be >= 2", a.head_dim);
    }
    if !a.rotary_dim.is_multiple_of(2) || a.rotary_dim > a.head_dim {
        bail!(Attribute, "Rope rotary_dim {} must be even and <= head_dim {}", a.rotary_dim, a.head_dim);
    }
    if x.rank() < 2 {
        bail!(Shape, "Rope x {x} must have rank >= 2");
    }
    axis_ok(a.seq_axis, x.rank(), "Rope seq_axis")?;
    if a.seq_axis == x.rank() - 1 {
        bail!(Axis, "Rope seq_axis {} is the last axis of {x}, which holds the heads", a.seq_axis);
    }
    let last = static_at(x, x.rank() - 1, "Rope x (last dim holds the heads)")?;
    if last % a.head_dim as usize != 0 {
        bail!(Shape, "Rope x {x}: last dim {last} is not a multiple of head_dim {}", a.head_dim);
    }
    rope_tables(a, x, cos, sin)?;
    Ok(vec![x.clone()])
}

/// `cos`/`sin`: dtype of `x` or F32 (both the same), shape `[S, R/2]` or `[x.shape[0], S, R/2]`.
fn rope_tables(a: &RopeAttrs, x: &TensorType, cos: &TensorType, sin: &TensorType) -> Result<()> {
    if cos.dtype != x.dtype && cos.dtype != DType::F32 {
        bail!(DType, "Rope cos {cos} must have the dtype of x ({}) or F32", x.dtype);
    }
    if sin.dtype != cos.dtype {
        bail!(DType, "Rope sin {sin} must have the dtype of cos {cos}");
    }
    if sin.shape != cos.shape {
        bail!(Shape, "Rope cos {cos} and sin {sin} must have the same shape");
    }
    let s = x.shape.0[a.seq_axis].clone();
    let half = st(a.rotary_dim as usize / 2);
    let two_d = [s.clone(), half.clone()];
    let three_d = [x.shape.0[0].clone(), s, half];
    if cos.shape.0 == two_d {
        return Ok(());
    }
    if cos.shape.0 == three_d {
        if a.seq_axis == 0 {
            bail!(Shape, "Rope per-batch tables {cos} need seq_axis >= 1, got 0");
        }
        return Ok(());
    }
    bail!(
        Shape,
        "Rope cos/sin {cos} must be [S, R/2] = {} or [x.shape[0], S, R/2] = {} for x {x}",
        Shape(two_d.to_vec()),
        Shape(three_d.to_vec())
    )
}
