//! §2.8 attention and rotary embeddings.

use crate::{dims, dt, fails, inp};
use backend_api::op::{AttentionAttrs, AttentionBackwardAttrs, AttnGrad, AttnLayout, MaskKind, Op, RopeStyle};
use backend_api::{DType, ErrorKind, GraphBuilder, Value};

fn qkv(b: &mut GraphBuilder, q: &[usize], k: &[usize], v: &[usize]) -> (Value, Value, Value) {
    (inp(b, "q", DType::F32, q), inp(b, "k", DType::F32, k), inp(b, "v", DType::F32, v))
}

fn gqa(layout: AttnLayout) -> AttentionAttrs {
    AttentionAttrs { num_kv_heads: 2, ..AttentionAttrs::new(layout, 8) }
}

/// A layout with the shapes of `q`, `k`, `v` and of the expected output.
type Case<'a> = (AttnLayout, [&'a [usize]; 3], &'a [usize]);

#[test]
fn attention_every_layout() {
    // B = 2, Hq = 8, Hkv = 2, Sq = 5, Sk = 7, D = 64, Dv = 32.
    let cases: [Case; 4] = [
        (AttnLayout::Bhsd, [&[2, 8, 5, 64], &[2, 2, 7, 64], &[2, 2, 7, 32]], &[2, 8, 5, 32]),
        (AttnLayout::Bshd, [&[2, 5, 8, 64], &[2, 7, 2, 64], &[2, 7, 2, 32]], &[2, 5, 8, 32]),
        (AttnLayout::BsPacked, [&[2, 5, 512], &[2, 7, 128], &[2, 7, 64]], &[2, 5, 256]),
        (AttnLayout::FlatHeads, [&[16, 5, 64], &[4, 7, 64], &[4, 7, 32]], &[16, 5, 32]),
    ];
    for (layout, [q, k, v], want) in cases {
        let mut b = GraphBuilder::new();
        let (q, k, v) = qkv(&mut b, q, k, v);
        let mask = inp(&mut b, "mask", DType::Bool, &[5, 7]);
        let bias = inp(&mut b, "bias", DType::F32, &[1, 8, 1, 7]);
        let o = b.attention(q, k, v, Some(mask), Some(bias), gqa(layout)).unwrap();
        assert_eq!((dims(&b, o).as_slice(), dt(&b, o)), (want, DType::F32), "{layout:?}");
        let big_mask = inp(&mut b, "bm", DType::Bool, &[3, 8, 5, 7]);
        fails(b.attention(q, k, v, Some(big_mask), None, gqa(layout)), ErrorKind::Shape);
        let a = AttentionAttrs { num_kv_heads: 3, ..gqa(layout) };
        fails(b.attention(q, k, v, None, None, a), ErrorKind::Attribute);
    }
}

#[test]
fn attention_errors() {
    let mut b = GraphBuilder::new();
    let (q, k, v) = qkv(&mut b, &[2, 8, 5, 64], &[2, 2, 7, 64], &[2, 2, 7, 32]);
    let base = gqa(AttnLayout::Bhsd);
    fails(b.attention(q, k, v, None, None, AttentionAttrs::new(AttnLayout::Bhsd, 4)), ErrorKind::Shape);
    fails(
        b.attention(q, k, v, None, None, AttentionAttrs { mask: MaskKind::SlidingWindow { window: 0 }, ..base }),
        ErrorKind::Attribute,
    );
    fails(b.attention(q, k, v, None, None, AttentionAttrs { softcap: Some(0.0), ..base }), ErrorKind::Attribute);
    fails(b.attention(q, k, v, None, None, AttentionAttrs { scale: Some(f32::NAN), ..base }), ErrorKind::Attribute);
    let k_batch = inp(&mut b, "kb", DType::F32, &[3, 2, 7, 64]);
    fails(b.attention(q, k_batch, v, None, None, base), ErrorKind::Shape);
    let v_len = inp(&mut b, "vl", DType::F32, &[2, 2, 6, 32]);
    fails(b.attention(q, k, v_len, None, None, base), ErrorKind::Shape);
    let (q0, k0, v0) = (
        inp(&mut b, "q0", DType::F32, &[1, 8, 5, 0]),
        inp(&mut b, "k0", DType::F32, &[1, 2, 7, 0]),
        inp(&mut b, "v0", DType::F32, &[1, 2, 7, 3]),
    );
    fails(b.attention(q0, k0, v0, None, None, base), ErrorKind::Shape);
    let q64 = inp(&mut b, "q64", DType::F64, &[2, 8, 5, 64]);
    fails(b.attention(q64, k, v, None, None, base), ErrorKind::DType);
    let fmask = inp(&mut b, "fm", DType::F32, &[5, 7]);
    fails(b.attention(q, k, v, Some(fmask), None, base), ErrorKind::DType);
    let ibias = inp(&mut b, "ib", DType::I32, &[5, 7]);
    fails(b.attention(q, k, v, None, Some(ibias), base), ErrorKind::DType);
    fails(b.add(Op::Attention(AttentionAttrs { has_bias: true, ..base }), &[q, k, v]), ErrorKind::Arity);
    // BsPacked: q's last dim must be divisible by Hq; FlatHeads: q's first dim.
    let (qp, kp, vp) = (
        inp(&mut b, "qp", DType::F32, &[2, 5, 500]),
        inp(&mut b, "kp", DType::F32, &[2, 7, 128]),
        inp(&mut b, "vp", DType::F32, &[2, 7, 64]),
    );
    fails(b.attention(qp, kp, vp, None, None, gqa(AttnLayout::BsPacked)), ErrorKind::Shape);
    let (qf, kf, vf) = (
        inp(&mut b, "qf", DType::F32, &[12, 5, 64]),
        inp(&mut b, "kf", DType::F32, &[4, 7, 64]),
        inp(&mut b, "vf", DType::F32, &[4, 7, 32]),
    );
    fails(b.attention(qf, kf, vf, None, None, gqa(AttnLayout::FlatHeads)), ErrorKind::Shape);
}

#[test]
fn attention_backward_and_errors() {
    let mut b = GraphBuilder::new();
    let (q, k, v) = qkv(&mut b, &[2, 8, 5, 64], &[2, 2, 7, 64], &[2, 2, 7, 32]);
    let d = inp(&mut b, "d", DType::F32, &[2, 8, 5, 32]);
    let mask = inp(&mut b, "mask", DType::Bool, &[7]);
    for (wrt, want) in
        [(AttnGrad::Query, [2, 8, 5, 64]), (AttnGrad::Key, [2, 2, 7, 64]), (AttnGrad::Value, [2, 2, 7, 32])]
    {
        let a = AttentionBackwardAttrs { forward: gqa(AttnLayout::Bhsd), wrt };
        let g = b.attention_backward((q, k, v), d, (Some(mask), None), a).unwrap();
        assert_eq!(dims(&b, g), want);
    }
    let a = AttentionBackwardAttrs { forward: gqa(AttnLayout::Bhsd), wrt: AttnGrad::Query };
    fails(b.attention_backward((q, k, v), q, (None, None), a), ErrorKind::Shape);
    let d16 = inp(&mut b, "d16", DType::F16, &[2, 8, 5, 32]);
    fails(b.attention_backward((q, k, v), d16, (None, None), a), ErrorKind::DType);
    let bad = AttentionBackwardAttrs { forward: AttentionAttrs::new(AttnLayout::Bhsd, 0), wrt: AttnGrad::Key };
    fails(b.attention_backward((q, k, v), d, (None, None), bad), ErrorKind::Attribute);
}

#[test]
fn rope_and_errors() {
    let mut b = GraphBuilder::new();
    // 2 heads of width 64 in the last dim; rotate 32 of them; positions on axis 1.
    let x = inp(&mut b, "x", DType::F16, &[2, 10, 128]);
    let cos = inp(&mut b, "cos", DType::F32, &[10, 16]);
    let y = b.rope(x, (cos, cos), 64, Some(32), RopeStyle::NeoX, -2).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![2, 10, 128], DType::F16));
    let per_batch = inp(&mut b, "pb", DType::F16, &[2, 10, 32]);
    let dy = b.rope_backward(x, (per_batch, per_batch), 64, None, RopeStyle::GptJ, 1).unwrap();
    assert_eq!(dims(&b, dy), [2, 10, 128]);
    fails(b.rope(x, (cos, cos), 64, Some(31), RopeStyle::NeoX, 1), ErrorKind::Attribute);
    fails(b.rope(x, (cos, cos), 64, Some(66), RopeStyle::NeoX, 1), ErrorKind::Attribute);
    fails(b.rope(x, (cos, cos), 1, Some(0), RopeStyle::NeoX, 1), ErrorKind::Attribute);
    fails(b.rope(x, (cos, cos), 48, Some(32), RopeStyle::NeoX, 1), ErrorKind::Shape);
    fails(b.rope(x, (cos, cos), 64, Some(30), RopeStyle::NeoX, 1), ErrorKind::Shape);
    fails(b.rope(x, (cos, cos), 64, Some(32), RopeStyle::NeoX, -1), ErrorKind::Axis);
    fails(b.rope(x, (cos, cos), 64, Some(32), RopeStyle::NeoX, 3), ErrorKind::Axis);
    let icos = inp(&mut b, "icos", DType::I32, &[10, 16]);
    fails(b.rope(x, (icos, icos), 64, Some(32), RopeStyle::NeoX, 1), ErrorKind::DType);
    let x64 = inp(&mut b, "x64", DType::F64, &[2, 10, 128]);
    fails(b.rope(x64, (cos, cos), 64, Some(32), RopeStyle::NeoX, 1), ErrorKind::DType);
    // per-batch tables need seq_axis >= 1
    let x2 = inp(&mut b, "x2", DType::F32, &[10, 10, 64]);
    let t3 = inp(&mut b, "t3", DType::F32, &[10, 10, 32]);
    fails(b.rope(x2, (t3, t3), 64, None, RopeStyle::NeoX, 0), ErrorKind::Shape);
}

#[test]
fn attention_symbolic_batch_and_lengths() {
    use backend_api::Dim;
    let mut b = GraphBuilder::new();
    let (bs, sq, sk) = (Dim::from("b"), Dim::from("sq"), Dim::from("sk"));
    let q = crate::sym(&mut b, "q", DType::F16, vec![bs.clone(), sq.clone(), 4.into(), 16.into()]);
    let k = crate::sym(&mut b, "k", DType::F16, vec![bs.clone(), sk.clone(), 4.into(), 16.into()]);
    let mask = crate::sym(&mut b, "mask", DType::Bool, vec![bs.clone(), 1.into(), sq.clone(), sk.clone()]);
    let o = b.attention(q, k, k, Some(mask), None, AttentionAttrs::new(AttnLayout::Bshd, 4)).unwrap();
    assert_eq!(b.value_type(o).unwrap().shape.0, vec![bs, sq, 4.into(), 16.into()]);
    let other = crate::sym(&mut b, "other", DType::F16, vec![Dim::from("b2"), Dim::from("sk"), 4.into(), 16.into()]);
    fails(b.attention(q, other, other, None, None, AttentionAttrs::new(AttnLayout::Bshd, 4)), ErrorKind::Shape);
}

/// The error of `r`, which must be of `kind` and mention every word of `words`.
fn fails_naming<T: std::fmt::Debug>(r: backend_api::Result<T>, kind: ErrorKind, words: &[&str]) {
    let e = r.expect_err("expected an error");
    assert_eq!(e.kind(), kind, "{e}");
    for w in words {
        assert!(e.to_string().contains(w), "{e} does not mention {w:?}");
    }
}

#[test]
fn attention_errors_name_what_is_wrong() {
    let mut b = GraphBuilder::new();
    let (q, k, v) = qkv(&mut b, &[2, 8, 5, 64], &[2, 2, 7, 64], &[2, 2, 7, 32]);
    let base = gqa(AttnLayout::Bhsd);
    let a = AttentionAttrs { num_kv_heads: 3, ..base };
    fails_naming(b.attention(q, k, v, None, None, a), ErrorKind::Attribute, &["num_heads 8", "num_kv_heads 3"]);
    // KV head count of k or v not Hkv, in the 4-D and the flat layouts.
    let k4 = inp(&mut b, "k4", DType::F32, &[2, 4, 7, 64]);
    fails_naming(b.attention(q, k4, v, None, None, base), ErrorKind::Shape, &["k", "head count 2"]);
    let v4 = inp(&mut b, "v4", DType::F32, &[2, 4, 7, 32]);
    fails_naming(b.attention(q, k, v4, None, None, base), ErrorKind::Shape, &["v", "head count 2"]);
    let qs = inp(&mut b, "qs", DType::F32, &[2, 5, 8, 64]);
    let vs = inp(&mut b, "vs", DType::F32, &[2, 7, 2, 32]);
    let ks3 = inp(&mut b, "ks3", DType::F32, &[2, 7, 3, 64]);
    fails_naming(b.attention(qs, ks3, vs, None, None, gqa(AttnLayout::Bshd)), ErrorKind::Shape, &["k", "axis 2"]);
    let kd = inp(&mut b, "kd", DType::F32, &[2, 7, 2, 32]);
    fails_naming(b.attention(qs, kd, vs, None, None, gqa(AttnLayout::Bshd)), ErrorKind::Shape, &["head width D"]);
    let (qp, vp) = (inp(&mut b, "qp", DType::F32, &[2, 5, 512]), inp(&mut b, "vp", DType::F32, &[2, 7, 64]));
    let kp = inp(&mut b, "kp", DType::F32, &[2, 7, 192]);
    fails_naming(b.attention(qp, kp, vp, None, None, gqa(AttnLayout::BsPacked)), ErrorKind::Shape, &["num_kv_heads·D"]);
    let (qf, vf) = (inp(&mut b, "qf", DType::F32, &[16, 5, 64]), inp(&mut b, "vf", DType::F32, &[4, 7, 32]));
    let kf = inp(&mut b, "kf", DType::F32, &[6, 7, 64]);
    fails_naming(
        b.attention(qf, kf, vf, None, None, gqa(AttnLayout::FlatHeads)),
        ErrorKind::Shape,
        &["B·num_kv_heads"],
    );
    // Masks that do not broadcast to [B, Hq, Sq, Sk]: a wrong key length, a higher rank, a head
    // count that is Hkv instead of Hq.
    let keep_mask = AttentionAttrs { has_keep_mask: true, ..base };
    for shape in [&[5usize, 6][..], &[1, 2, 8, 5, 7], &[2, 2, 5, 7]] {
        let m = inp(&mut b, &format!("m{}", shape.len()), DType::Bool, shape);
        fails_naming(b.attention(q, k, v, Some(m), None, keep_mask), ErrorKind::Shape, &["keep_mask"]);
        let f = inp(&mut b, &format!("f{}", shape.len()), DType::F32, shape);
        fails_naming(b.attention(q, k, v, None, Some(f), base), ErrorKind::Shape, &["bias"]);
    }
}
