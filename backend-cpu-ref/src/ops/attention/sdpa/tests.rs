//! Tests of Attention: hand-computed rows, one test per feature, and identities between layouts
//! and head groupings.

use super::*;
use backend_api::ErrorKind;
use half::f16;

const INF: f32 = f32::INFINITY;

fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

/// A `Bhsd` tensor `[b, h, s, w]` of deterministic values in about [−1, 1].
fn data(shape: [usize; 4], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    t(&shape, &v)
}

fn attrs(hq: u32, hkv: u32) -> AttentionAttrs {
    AttentionAttrs { num_kv_heads: hkv, ..AttentionAttrs::new(AttnLayout::Bhsd, hq) }
}

fn run(q: &Tensor, k: &Tensor, v: &Tensor, extra: &[&Tensor], a: &AttentionAttrs) -> Vec<f32> {
    attention(q, k, v, extra, a).unwrap().to_vec::<f32>().unwrap()
}

fn close(got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((f64::from(*g) - w).abs() <= 1e-6 * w.abs().max(1.0), "{got:?} vs {want:?}");
    }
}

/// Rows `[s, 1]` of a single-head `Bhsd` tensor with `Dv = 1`.
fn column(v: &[f32]) -> Tensor {
    t(&[1, 1, v.len(), 1], v)
}

#[test]
fn hand_computed_two_keys() {
    // q = [1, 0], k = [[1, 0], [0, 1]]: logits [1/√2, 0] under the default scale 1/√D.
    let q = t(&[1, 1, 1, 2], &[1., 0.]);
    let k = t(&[1, 1, 2, 2], &[1., 0., 0., 1.]);
    let v = t(&[1, 1, 2, 3], &[1., 2., 3., 4., 5., 6.]);
    let p0 = 1.0 / (1.0 + (-(0.5f64).sqrt()).exp());
    let want: Vec<f64> = (0..3).map(|e| p0 * (1 + e) as f64 + (1.0 - p0) * (4 + e) as f64).collect();
    let y = attention(&q, &k, &v, &[], &attrs(1, 1)).unwrap();
    assert_eq!(y.shape(), &[1, 1, 1, 3]);
    close(&y.to_vec::<f32>().unwrap(), &want);
    // The same in F16 is the f64 result rounded once.
    let h = |x: &Tensor| crate::ops::elementwise::cast::cast(x, DType::F16).unwrap();
    let y16 = attention(&h(&q), &h(&k), &h(&v), &[], &attrs(1, 1)).unwrap().to_vec::<f16>().unwrap();
    assert_eq!(y16, want.iter().map(|&w| f16::from_f64(w)).collect::<Vec<_>>());
}

#[test]
fn uniform_logits_give_the_mean_of_v() {
    let v = column(&[1., 2., 6.]);
    let k = data([1, 1, 3, 4], 1);
    let zero_q = t(&[1, 1, 1, 4], &[0.; 4]);
    close(&run(&zero_q, &k, &v, &[], &attrs(1, 1)), &[3.0]);
    // Scale 0 makes any q uniform too; a negative scale is allowed.
    let q = data([1, 1, 1, 4], 2);
    close(&run(&q, &k, &v, &[], &AttentionAttrs { scale: Some(0.0), ..attrs(1, 1) }), &[3.0]);
    let pos = run(&q, &k, &v, &[], &AttentionAttrs { scale: Some(0.7), ..attrs(1, 1) });
    let neg_q = t(&[1, 1, 1, 4], &q.to_vec::<f32>().unwrap().iter().map(|x| -x).collect::<Vec<_>>());
    let neg = run(&neg_q, &k, &v, &[], &AttentionAttrs { scale: Some(-0.7), ..attrs(1, 1) });
    assert_eq!(pos, neg);
}

#[test]
fn one_large_logit_selects_its_row() {
    let q = t(&[1, 1, 1, 1], &[100.]);
    let k = t(&[1, 1, 3, 1], &[0., 1., 0.]);
    let v = t(&[1, 1, 3, 2], &[1., 2., 3., 4., 5., 6.]);
    let s = AttentionAttrs { scale: Some(1.0), ..attrs(1, 1) };
    assert_eq!(run(&q, &k, &v, &[], &s), [3., 4.]);
}

#[test]
fn causal_rows_see_their_prefix() {
    let (q, k) = (t(&[1, 1, 3, 2], &[0.; 6]), data([1, 1, 3, 2], 3));
    let v = column(&[3., 6., 9.]);
    let c = AttentionAttrs { mask: MaskKind::Causal, mask_align: MaskAlign::Start, ..attrs(1, 1) };
    close(&run(&q, &k, &v, &[], &c), &[3., 4.5, 6.]);
    // End alignment with Sq = 2, Sk = 4: δ = 2, row 0 sees keys 0..=2, row 1 all four.
    let (q, k, v) = (t(&[1, 1, 2, 2], &[0.; 4]), data([1, 1, 4, 2], 4), column(&[1., 2., 3., 6.]));
    let e = AttentionAttrs { mask: MaskKind::Causal, ..attrs(1, 1) };
    close(&run(&q, &k, &v, &[], &e), &[2., 3.]);
    // With Sq = Sk both alignments agree; the first row is V row 0 whatever the logits.
    let (q, k, v) = (data([1, 1, 3, 2], 5), data([1, 1, 3, 2], 6), column(&[7., 8., 9.]));
    let start = run(&q, &k, &v, &[], &c);
    assert_eq!(start, run(&q, &k, &v, &[], &e));
    assert_eq!(start[0], 7.);
}

#[test]
fn negative_delta_leaves_early_queries_without_keys() {
    // Sq = 3, Sk = 1, End: δ = −2, rows 0 and 1 see no key and output 0; row 2 sees key 0.
    let (q, k, v) = (data([1, 1, 3, 2], 7), data([1, 1, 1, 2], 8), t(&[1, 1, 1, 2], &[5., -4.]));
    let e = AttentionAttrs { mask: MaskKind::Causal, ..attrs(1, 1) };
    assert_eq!(run(&q, &k, &v, &[], &e), [0., 0., 0., 0., 5., -4.]);
    let s = AttentionAttrs { mask_align: MaskAlign::Start, ..e };
    assert_eq!(run(&q, &k, &v, &[], &s), [5., -4., 5., -4., 5., -4.]);
}

#[test]
fn sliding_window_keeps_the_last_keys() {
    let (q, k) = (t(&[1, 1, 4, 1], &[0.; 4]), data([1, 1, 4, 1], 9));
    let v = column(&[2., 4., 8., 16.]);
    let w = |window| AttentionAttrs {
        mask: MaskKind::SlidingWindow { window },
        mask_align: MaskAlign::Start,
        ..attrs(1, 1)
    };
    close(&run(&q, &k, &v, &[], &w(1)), &[2., 4., 8., 16.]);
    close(&run(&q, &k, &v, &[], &w(2)), &[2., 3., 6., 12.]);
    let causal = AttentionAttrs { mask: MaskKind::Causal, ..w(1) };
    assert_eq!(run(&q, &k, &v, &[], &w(4)), run(&q, &k, &v, &[], &causal));
    assert_eq!(run(&q, &k, &v, &[], &w(u64::MAX)), run(&q, &k, &v, &[], &causal));
    // End alignment, Sq = 1, Sk = 4, window 2: the last two keys.
    let q1 = t(&[1, 1, 1, 1], &[0.]);
    let end = AttentionAttrs { mask_align: MaskAlign::End, ..w(2) };
    close(&run(&q1, &k, &v, &[], &end), &[12.]);
}

#[test]
fn keep_mask_broadcasts_from_lower_ranks() {
    let (q, k) = (t(&[1, 1, 2, 1], &[0.; 2]), data([1, 1, 3, 1], 10));
    let v = column(&[1., 10., 100.]);
    let a = AttentionAttrs { has_keep_mask: true, ..attrs(1, 1) };
    let keys = Tensor::from_slice(&[3], &[true, false, true]).unwrap();
    close(&run(&q, &k, &v, &[&keys], &a), &[50.5, 50.5]);
    // Per query row ([Sq, 1]): row 1 has no allowed key and outputs 0.
    let rows = Tensor::from_slice(&[2, 1], &[true, false]).unwrap();
    close(&run(&q, &k, &v, &[&rows], &a), &[37., 0.]);
    let bad = Tensor::from_slice(&[2], &[true, false]).unwrap();
    assert_eq!(attention(&q, &k, &v, &[&bad], &a).unwrap_err().kind(), ErrorKind::Shape);
}

#[test]
fn bias_is_added_in_logical_order() {
    // Two heads, q = 0: p = softmax(bias row). Bias [Hq, 1, Sk]: head 0 [0, ln 3], head 1 [ln 3, 0].
    let (q, k) = (t(&[1, 2, 1, 1], &[0.; 2]), data([1, 2, 2, 1], 11));
    let v = t(&[1, 2, 2, 1], &[0., 4., 0., 4.]);
    let l3 = 3f32.ln();
    let bias = t(&[2, 1, 2], &[0., l3, l3, 0.]);
    let a = AttentionAttrs { has_bias: true, ..attrs(2, 2) };
    close(&run(&q, &k, &v, &[&bias], &a), &[3., 1.]);
    // An F32 bias with F16 operands.
    let h = |x: &Tensor| crate::ops::elementwise::cast::cast(x, DType::F16).unwrap();
    let y = attention(&h(&q), &h(&k), &h(&v), &[&bias], &a).unwrap();
    assert_eq!(y.to_vec::<f16>().unwrap(), [f16::from_f32(3.), f16::from_f32(1.)]);
    let ints = Tensor::from_slice(&[2], &[0i32, 1]).unwrap();
    assert_eq!(attention(&q, &k, &v, &[&ints], &a).unwrap_err().kind(), ErrorKind::DType);
    assert_eq!(attention(&q, &k, &v, &[], &a).unwrap_err().kind(), ErrorKind::Arity);
}

#[test]
fn special_logits() {
    let (q, k, v) = (t(&[1, 1, 1, 1], &[0.]), data([1, 1, 2, 1], 12), column(&[1., 3.]));
    let a = AttentionAttrs { has_bias: true, ..attrs(1, 1) };
    let with = |b: [f32; 2]| run(&q, &k, &v, &[&t(&[2], &b)], &a);
    assert_eq!(with([-INF, -INF]), [0.]);
    assert_eq!(with([-INF, 0.]), [3.]);
    assert!(with([INF, 0.])[0].is_nan());
    assert!(with([f32::NAN, 0.])[0].is_nan());
    // NaN in q poisons the row; a NaN key that the mask removes does not.
    let nan_q = t(&[1, 1, 1, 1], &[f32::NAN]);
    assert!(run(&nan_q, &k, &v, &[], &attrs(1, 1))[0].is_nan());
    let nan_k = t(&[1, 1, 2, 1], &[1., f32::NAN]);
    let c = AttentionAttrs { mask: MaskKind::Causal, mask_align: MaskAlign::Start, ..attrs(1, 1) };
    assert_eq!(run(&q, &nan_k, &v, &[], &c), [1.]);
    assert!(run(&q, &nan_k, &v, &[], &attrs(1, 1))[0].is_nan());
}

#[test]
fn softcap_bounds_the_logits() {
    // Logits [100, 0] capped at 2: [2·tanh(50), 0], so p0 = e²/(e² + 1) instead of 1.
    let (q, k, v) = (t(&[1, 1, 1, 1], &[10.]), t(&[1, 1, 2, 1], &[10., 0.]), column(&[1., 0.]));
    let a = AttentionAttrs { scale: Some(1.0), softcap: Some(2.0), ..attrs(1, 1) };
    let p0 = (2.0 * 50f64.tanh()).exp() / ((2.0 * 50f64.tanh()).exp() + 1.0);
    close(&run(&q, &k, &v, &[], &a), &[p0]);
    // The cap comes before the bias: a bias of 10 on key 1 wins against the capped logit.
    let b = AttentionAttrs { has_bias: true, ..a };
    let bias = t(&[2], &[0., 10.]);
    let want = 1.0 / (1.0 + (10.0 - 2.0 * 50f64.tanh()).exp());
    close(&run(&q, &k, &v, &[&bias], &b), &[want]);
}

/// `k` or `v` of `Hkv` heads with each head repeated `rep` times (`[B, Hkv·rep, S, W]`).
fn repeat_heads(x: &Tensor, rep: usize) -> Tensor {
    let [b, h, s, w] = <[usize; 4]>::try_from(x.shape()).unwrap();
    let v = x.to_vec::<f32>().unwrap();
    let mut out = Vec::new();
    for bi in 0..b {
        for g in 0..h * rep {
            let start = ((bi * h + g / rep) * s) * w;
            out.extend_from_slice(&v[start..start + s * w]);
        }
    }
    t(&[b, h * rep, s, w], &out)
}

#[test]
fn grouped_heads_equal_repeated_kv_heads() {
    let q = data([2, 4, 3, 5], 13);
    for hkv in [1usize, 2, 4] {
        let (k, v) = (data([2, hkv, 6, 5], 14), data([2, hkv, 6, 3], 15));
        let g = run(&q, &k, &v, &[], &attrs(4, hkv as u32));
        let rep = 4 / hkv;
        assert_eq!(g, run(&q, &repeat_heads(&k, rep), &repeat_heads(&v, rep), &[], &attrs(4, 4)), "Hkv = {hkv}");
    }
    let err = attention(&q, &data([2, 3, 6, 5], 1), &data([2, 3, 6, 3], 1), &[], &attrs(4, 3)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Attribute);
}

/// `[B, H, S, W]` → `[B, S, H, W]`, written out with its own loops.
fn to_bshd(x: &Tensor) -> Tensor {
    let [b, h, s, w] = <[usize; 4]>::try_from(x.shape()).unwrap();
    let v = x.to_vec::<f32>().unwrap();
    let mut out = Vec::new();
    for bi in 0..b {
        for si in 0..s {
            for hi in 0..h {
                for wi in 0..w {
                    out.push(v[((bi * h + hi) * s + si) * w + wi]);
                }
            }
        }
    }
    t(&[b, s, h, w], &out)
}

fn in_layout(x: &Tensor, layout: AttnLayout) -> Tensor {
    let [b, h, s, w] = <[usize; 4]>::try_from(x.shape()).unwrap();
    let (bshd, bhsd) = (to_bshd(x).to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    match layout {
        AttnLayout::Bhsd => x.clone(),
        AttnLayout::Bshd => to_bshd(x),
        AttnLayout::BsPacked => t(&[b, s, h * w], &bshd),
        AttnLayout::FlatHeads => t(&[b * h, s, w], &bhsd),
    }
}

#[test]
fn every_layout_equals_bhsd_after_the_transpose() {
    let (q, k, v) = (data([2, 4, 3, 5], 16), data([2, 2, 6, 5], 17), data([2, 2, 6, 3], 18));
    let bias = data([1, 4, 3, 6], 19);
    let keep =
        Tensor::from_slice(&[2, 1, 1, 6], &[true, true, false, true, true, true, true, false, true, true, true, true])
            .unwrap();
    let base = AttentionAttrs {
        mask: MaskKind::SlidingWindow { window: 4 },
        softcap: Some(1.5),
        has_bias: true,
        has_keep_mask: true,
        ..attrs(4, 2)
    };
    let want = attention(&q, &k, &v, &[&keep, &bias], &base).unwrap();
    for layout in [AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads] {
        let a = AttentionAttrs { layout, ..base };
        let (ql, kl, vl) = (in_layout(&q, layout), in_layout(&k, layout), in_layout(&v, layout));
        let y = attention(&ql, &kl, &vl, &[&keep, &bias], &a).unwrap();
        assert_eq!(y.shape(), in_layout(&want, layout).shape(), "{layout:?}");
        assert_eq!(y.to_vec::<f32>().unwrap(), in_layout(&want, layout).to_vec::<f32>().unwrap(), "{layout:?}");
    }
}

#[test]
fn empty_extents() {
    let q = data([1, 2, 2, 3], 20);
    // Sk = 0: every row outputs 0.
    let y = attention(&q, &t(&[1, 2, 0, 3], &[]), &t(&[1, 2, 0, 4], &[]), &[], &attrs(2, 2)).unwrap();
    assert_eq!((y.shape(), y.to_vec::<f32>().unwrap()), (&[1usize, 2, 2, 4][..], vec![0.; 16]));
    // Sq = 0, Dv = 0 and B = 0 give empty outputs.
    let (k, v) = (data([1, 2, 3, 3], 21), data([1, 2, 3, 2], 22));
    let y = attention(&t(&[1, 2, 0, 3], &[]), &k, &v, &[], &attrs(2, 2)).unwrap();
    assert_eq!(y.shape(), &[1, 2, 0, 2]);
    assert_eq!(attention(&q, &k, &t(&[1, 2, 3, 0], &[]), &[], &attrs(2, 2)).unwrap().shape(), &[1, 2, 2, 0]);
    let (e3, e2) = (t(&[0, 2, 3, 3], &[]), t(&[0, 2, 3, 2], &[]));
    let packed = AttentionAttrs { layout: AttnLayout::BsPacked, ..attrs(2, 2) };
    let y = attention(&t(&[0, 2, 6], &[]), &t(&[0, 3, 6], &[]), &t(&[0, 3, 4], &[]), &[], &packed).unwrap();
    assert_eq!(y.shape(), &[0, 2, 4]);
    assert_eq!(attention(&t(&[0, 2, 2, 3], &[]), &e3, &e2, &[], &attrs(2, 2)).unwrap().shape(), &[0, 2, 2, 2]);
}

#[test]
fn shape_errors_name_the_operand() {
    let (q, k, v) = (data([1, 2, 2, 3], 23), data([1, 2, 3, 3], 24), data([1, 2, 3, 2], 25));
    let wrong_d = data([1, 2, 3, 4], 26);
    let e = attention(&q, &wrong_d, &v, &[], &attrs(2, 2)).unwrap_err();
    assert!(e.kind() == ErrorKind::Shape && e.message().contains('k'), "{e}");
    let e = attention(&q, &k, &v, &[], &attrs(3, 3)).unwrap_err();
    assert!(e.kind() == ErrorKind::Shape && e.message().contains('q'), "{e}");
    let packed = AttentionAttrs { layout: AttnLayout::BsPacked, ..attrs(4, 4) };
    let e = attention(&t(&[1, 2, 6], &[0.; 12]), &t(&[1, 2, 6], &[0.; 12]), &t(&[1, 2, 6], &[0.; 12]), &[], &packed);
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Shape);
    let flat = AttentionAttrs { layout: AttnLayout::FlatHeads, ..attrs(2, 1) };
    let e = attention(&t(&[3, 1, 2], &[0.; 6]), &t(&[1, 1, 2], &[0.; 2]), &t(&[1, 1, 2], &[0.; 2]), &[], &flat);
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Shape);
    let zero_d = attention(&t(&[1, 1, 1, 0], &[]), &t(&[1, 1, 1, 0], &[]), &data([1, 1, 1, 2], 1), &[], &attrs(1, 1));
    assert_eq!(zero_d.unwrap_err().kind(), ErrorKind::Shape);
}
