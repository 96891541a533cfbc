//! `GatedDeltaNet` against its steps written out by hand, and its identities: β = 0 with no decay
//! leaves the state alone, orthogonal keys give plain causal linear attention, β = 1 stores `v` at
//! a unit key, prefill then decode equals one pass, and a per-channel `g` that is equal across
//! channels is the per-head `g`.

use super::gated_delta_net;
use crate::ops::sequence::ssm::tests::{close, steps, vals};
use crate::value::from_floats;
use crate::CpuRefBackend;
use backend_api::op::GatedDeltaNetAttrs;
use backend_api::{Backend, DType, ErrorKind, GraphBuilder, Tensor};

fn t(shape: &[usize], v: &[f64]) -> Tensor {
    from_floats(DType::F32, shape, v).unwrap()
}

fn f(t: &Tensor) -> Vec<f64> {
    t.view().to_f64_lossy()
}

fn gdn(ins: &[&Tensor], scale: Option<f32>) -> (Vec<f64>, Vec<f64>) {
    let attrs = GatedDeltaNetAttrs { scale, has_initial_state: ins.len() == 6 };
    let out = gated_delta_net(ins, &attrs).unwrap();
    (f(&out[0]), f(&out[1]))
}

/// Random operands `q, k, v, g, beta, state0` of `[B, S, H, ·]`; `g` rank 4 iff `per_key`, ≤ 0.
fn case(dims: [usize; 5], per_key: bool, seed: u64) -> Vec<Tensor> {
    let [bs, s, h, dk, dv] = dims;
    let bsh = bs * s * h;
    let gshape = if per_key { vec![bs, s, h, dk] } else { vec![bs, s, h] };
    let gn: usize = gshape.iter().product();
    vec![
        t(&[bs, s, h, dk], &vals(bsh * dk, seed, -1.0, 1.0)),
        t(&[bs, s, h, dk], &vals(bsh * dk, seed + 1, -0.7, 0.7)),
        t(&[bs, s, h, dv], &vals(bsh * dv, seed + 2, -1.0, 1.0)),
        t(&gshape, &vals(gn, seed + 3, -1.0, 0.0)),
        t(&[bs, s, h], &vals(bsh, seed + 4, 0.0, 1.0)),
        t(&[bs, h, dk, dv], &vals(bs * h * dk * dv, seed + 5, -1.0, 1.0)),
    ]
}

#[test]
fn two_steps_by_hand_per_head_decay_default_scale() {
    // B 1, S 2, H 1, Dk 2, Dv 1, M starts at 0, scale 1/√2
    let q = t(&[1, 2, 1, 2], &[1.0, 2.0, 0.0, 1.0]);
    let k = t(&[1, 2, 1, 2], &[1.0, 0.0, 0.6, 0.8]);
    let v = t(&[1, 2, 1, 1], &[3.0, 1.0]);
    let g = t(&[1, 2, 1], &[-(2f64.ln()), 0.0]);
    let beta = t(&[1, 2, 1], &[0.5, 1.0]);
    // t0: decay of 0 is 0; u = 0; δ = 0.5·3 = 1.5; M = [1.5, 0]; o = s·1.5
    // t1: γ = 1; u = 1.5·0.6 = 0.9; δ = 1 − 0.9 = 0.1; M = [1.56, 0.08]; o = s·0.08
    let sc = 0.5f64.sqrt();
    let (o, m) = gdn(&[&q, &k, &v, &g, &beta], None);
    close(&o, &[1.5 * sc, 0.08 * sc], 1e-6);
    close(&m, &[1.56, 0.08], 1e-6);
}

#[test]
fn one_step_by_hand_per_key_decay_with_initial_state() {
    // Dk 2, Dv 2, M0 = [[1, 2], [3, 4]], γ = [1, 0.5] → M = [[1, 2], [1.5, 2]]; k = [1, 1]:
    // u = [2.5, 4]; v = [3, 2], β = 0.5: δ = [0.25, −1]; M = [[1.25, 1], [1.75, 1]];
    // q = [2, −1], scale 0.5: o = 0.5·[2·1.25 − 1.75, 2·1 − 1] = [0.375, 0.5]
    let q = t(&[1, 1, 1, 2], &[2.0, -1.0]);
    let k = t(&[1, 1, 1, 2], &[1.0, 1.0]);
    let v = t(&[1, 1, 1, 2], &[3.0, 2.0]);
    let g = t(&[1, 1, 1, 2], &[0.0, -(2f64.ln())]);
    let beta = t(&[1, 1, 1], &[0.5]);
    let m0 = t(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let (o, m) = gdn(&[&q, &k, &v, &g, &beta, &m0], Some(0.5));
    close(&o, &[0.375, 0.5], 1e-6);
    close(&m, &[1.25, 1.0, 1.75, 1.0], 1e-6);
}

#[test]
fn every_dtype_is_exact_on_dyadic_values() {
    // as above with g = 0: u = [4, 6]; δ = [−0.5, −2]; M = [[0.5, 0], [2.5, 2]]; o = [−0.75, −1]
    for dt in [DType::F32, DType::F16, DType::BF16] {
        let w = |shape: &[usize], v: &[f64]| from_floats(dt, shape, v).unwrap();
        let ins = [
            w(&[1, 1, 1, 2], &[2.0, -1.0]),
            w(&[1, 1, 1, 2], &[1.0, 1.0]),
            w(&[1, 1, 1, 2], &[3.0, 2.0]),
            w(&[1, 1, 1], &[0.0]),
            w(&[1, 1, 1], &[0.5]),
            w(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]),
        ];
        let out = gated_delta_net(
            &ins.iter().collect::<Vec<_>>(),
            &GatedDeltaNetAttrs { scale: Some(0.5), has_initial_state: true },
        )
        .unwrap();
        assert_eq!((out[0].dtype(), out[1].dtype()), (dt, dt));
        assert_eq!(f(&out[0]), vec![-0.75, -1.0]);
        assert_eq!(f(&out[1]), vec![0.5, 0.0, 2.5, 2.0]);
    }
}

#[test]
fn zero_beta_without_decay_leaves_the_state_unchanged() {
    let dims = [2, 4, 2, 3, 2];
    let mut v = case(dims, false, 7);
    v[3] = t(&[2, 4, 2], &[0.0; 16]);
    v[4] = t(&[2, 4, 2], &[0.0; 16]);
    let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), Some(0.75));
    assert_eq!(m, f(&v[5]));
    // o = scale · M0ᵀ q at every step
    let (q, m0) = (f(&v[0]), f(&v[5]));
    let mut want = Vec::new();
    for bi in 0..2 {
        for ti in 0..4 {
            for h in 0..2 {
                for j in 0..2 {
                    let dot: f64 =
                        (0..3).map(|i| m0[((bi * 2 + h) * 3 + i) * 2 + j] * q[((bi * 4 + ti) * 2 + h) * 3 + i]).sum();
                    want.push(0.75 * dot);
                }
            }
        }
    }
    close(&o, &want, 1e-6);
}

#[test]
fn orthogonal_keys_without_decay_are_causal_linear_attention() {
    // k_t = e_t (one-hot, Dk ≥ S), β = 1, g = 0, M0 = 0: u = Mᵀk_t = 0, so δ = v_t and
    // o_t = scale · Σ_{s ≤ t} (q_t · k_s) v_s
    let (s, dk, dv) = (4, 5, 3);
    let mut v = case([1, s, 1, dk, dv], false, 13);
    let keys: Vec<f64> = (0..s).flat_map(|ti| (0..dk).map(move |i| f64::from(u8::from(i == ti)))).collect();
    v[1] = t(&[1, s, 1, dk], &keys);
    v[3] = t(&[1, s, 1], &vec![0.0; s]);
    v[4] = t(&[1, s, 1], &vec![1.0; s]);
    let (q, vv) = (f(&v[0]), f(&v[2]));
    let mut want = vec![0.0; s * dv];
    for ti in 0..s {
        for si in 0..=ti {
            let qk: f64 = (0..dk).map(|i| q[ti * dk + i] * keys[si * dk + i]).sum();
            for j in 0..dv {
                want[ti * dv + j] += 0.5 * qk * vv[si * dv + j];
            }
        }
    }
    let (o, _) = gdn(&v.iter().take(5).collect::<Vec<_>>(), Some(0.5));
    close(&o, &want, 1e-6);
}

#[test]
fn full_beta_stores_v_at_a_unit_key() {
    // β = 1, γ = 1, |k| = 1: M'ᵀk = Mᵀk + k·k (v − Mᵀk) = v, so reading with q = k gives scale · v
    let (s, dk, dv) = (3, 4, 2);
    let mut v = case([1, s, 1, dk, dv], false, 17);
    let k: Vec<f64> = f(&v[1])
        .chunks(dk)
        .flat_map(|row| {
            let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
            row.iter().map(move |x| x / norm).collect::<Vec<_>>()
        })
        .collect();
    v[0] = t(&[1, s, 1, dk], &k);
    v[1] = t(&[1, s, 1, dk], &k);
    v[3] = t(&[1, s, 1], &vec![0.0; s]);
    v[4] = t(&[1, s, 1], &vec![1.0; s]);
    let (o, _) = gdn(&v.iter().collect::<Vec<_>>(), Some(2.0));
    let want: Vec<f64> = f(&v[2]).iter().map(|x| 2.0 * x).collect();
    close(&o, &want, 1e-5);
}

#[test]
fn a_per_key_decay_equal_across_channels_is_the_per_head_decay() {
    let dims = [2, 3, 2, 3, 2];
    let v = case(dims, false, 23);
    let g3 = f(&v[3]);
    let g4: Vec<f64> = g3.iter().flat_map(|&x| [x; 3]).collect();
    let mut v4 = v.clone();
    v4[3] = t(&[2, 3, 2, 3], &g4);
    assert_eq!(gdn(&v.iter().collect::<Vec<_>>(), None), gdn(&v4.iter().collect::<Vec<_>>(), None));
}

#[test]
fn prefill_then_decode_equals_one_pass() {
    let (bs, s, h, dk, dv) = (2, 6, 2, 3, 2);
    for per_key in [false, true] {
        let v = case([bs, s, h, dk, dv], per_key, 29);
        let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), None);
        let cut = |x: &Tensor, from: usize, to: usize| {
            let d = x.shape();
            let inner: usize = d[2..].iter().product();
            let mut shape = d.to_vec();
            shape[1] = to - from;
            t(&shape, &steps(&f(x), d[0], d[1], inner, from, to))
        };
        let mut first: Vec<Tensor> = v[..5].iter().map(|x| cut(x, 0, 2)).collect();
        first.push(v[5].clone());
        let (o1, m1) = gdn(&first.iter().collect::<Vec<_>>(), None);
        let mut second: Vec<Tensor> = v[..5].iter().map(|x| cut(x, 2, s)).collect();
        second.push(t(&[bs, h, dk, dv], &m1));
        let (o2, m2) = gdn(&second.iter().collect::<Vec<_>>(), None);
        close(&steps(&o, bs, s, h * dv, 0, 2), &o1, 1e-6);
        close(&steps(&o, bs, s, h * dv, 2, s), &o2, 1e-5);
        close(&m, &m2, 1e-5);
    }
}

#[test]
fn empty_sequence_empty_keys_and_empty_values() {
    let v = case([2, 0, 2, 3, 2], true, 1);
    let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), None);
    assert!(o.is_empty());
    assert_eq!(m, f(&v[5]));
    let (_, m) = gdn(&v.iter().take(5).collect::<Vec<_>>(), None);
    assert_eq!(m, vec![0.0; 24]);
    // Dk = 0: o = 0 (the default scale 1/√0 is not evaluated), the state is empty
    for per_key in [false, true] {
        let v = case([1, 2, 2, 0, 3], per_key, 1);
        let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), None);
        assert_eq!((o, m.len()), (vec![0.0; 12], 0));
    }
    let v = case([1, 2, 2, 3, 0], false, 1);
    let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), None);
    assert!(o.is_empty() && m.is_empty());
}

#[test]
fn long_sequences_stay_bounded_or_overflow_without_clamping() {
    let s = 4096;
    // g ≤ 0, β ∈ [0, 1], |k| ≤ 0.7·√2 < 1: the delta rule is a contraction, the state stays bounded
    let v = case([1, s, 1, 2, 2], true, 37);
    let (o, m) = gdn(&v.iter().collect::<Vec<_>>(), None);
    assert!(o.iter().chain(&m).all(|x| x.is_finite() && x.abs() < 10.0));
    // growth e^0.5 per step with k = 0 and β = 0: o = M overflows F32 and is +inf (never clamped to
    // F32::MAX); once M overflows f64 too, u = Σ M·k = inf·0 = NaN, and NaN stays
    let ones = |shape: &[usize]| t(shape, &vec![1.0; shape.iter().product()]);
    let zeros = |shape: &[usize]| t(shape, &vec![0.0; shape.iter().product()]);
    let g = t(&[1, s, 1], &vec![0.5; s]);
    let ins = [
        ones(&[1, s, 1, 1]),
        zeros(&[1, s, 1, 1]),
        ones(&[1, s, 1, 1]),
        g.clone(),
        zeros(&[1, s, 1]),
        ones(&[1, 1, 1, 1]),
    ];
    let (o, m) = gdn(&ins.iter().collect::<Vec<_>>(), Some(1.0));
    let first_inf = o.iter().position(|x| x.is_infinite()).unwrap();
    let first_nan = o.iter().position(|x| x.is_nan()).unwrap();
    assert!(o[..first_inf].iter().all(|x| x.is_finite() && *x <= f64::from(f32::MAX)));
    assert!(first_inf < first_nan && o[first_inf..first_nan].iter().all(|x| *x == f64::INFINITY));
    assert!(o[first_nan..].iter().all(|x| x.is_nan()) && m[0].is_nan());
    // with k = 1 (M ← e^0.5·(1 − β)·M + β·v still grows for β < 0.39), once M is inf, v − Mᵀk = −inf,
    // and both β = 0.25 (M + k·δ = inf − inf) and β = 0 (δ = 0·(−inf)) give NaN: the literal formula
    for beta in [t(&[1, s, 1], &vec![0.25; s]), zeros(&[1, s, 1])] {
        let ins = [ones(&[1, s, 1, 1]), ones(&[1, s, 1, 1]), ones(&[1, s, 1, 1]), g.clone(), beta, ones(&[1, 1, 1, 1])];
        let (o, m) = gdn(&ins.iter().collect::<Vec<_>>(), Some(1.0));
        assert!(o[s - 1].is_nan() && m[0].is_nan());
    }
}

#[test]
fn shape_dtype_attribute_and_arity_errors() {
    let v = case([1, 2, 2, 3, 2], false, 3);
    let r: Vec<&Tensor> = v.iter().take(5).collect();
    let err = |ins: &[&Tensor], scale: Option<f32>, init: bool| {
        gated_delta_net(ins, &GatedDeltaNetAttrs { scale, has_initial_state: init }).unwrap_err()
    };
    for g in [t(&[1, 2], &[0.0; 2]), t(&[1, 2, 2, 3, 1], &[0.0; 12]), t(&[1, 2, 2, 2], &[0.0; 8])] {
        let e = err(&[r[0], r[1], r[2], &g, r[4]], None, false);
        assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    }
    let bad_v = t(&[1, 2, 3, 2], &[0.0; 12]);
    assert_eq!(err(&[r[0], r[1], &bad_v, r[3], r[4]], None, false).kind(), ErrorKind::Shape);
    let bad_beta = t(&[1, 2, 2, 1], &[0.0; 4]);
    assert_eq!(err(&[r[0], r[1], r[2], r[3], &bad_beta], None, false).kind(), ErrorKind::Shape);
    let bad_m0 = t(&[1, 2, 2, 3], &[0.0; 12]);
    assert_eq!(err(&[r[0], r[1], r[2], r[3], r[4], &bad_m0], None, true).kind(), ErrorKind::Shape);
    assert_eq!(err(&r, None, true).kind(), ErrorKind::Arity);
    for s in [f32::NAN, f32::INFINITY] {
        let e = err(&r, Some(s), false);
        assert_eq!(e.kind(), ErrorKind::Attribute, "{e}");
    }
    let half_k = from_floats(DType::BF16, &[1, 2, 2, 3], &[0.0; 12]).unwrap();
    assert_eq!(err(&[r[0], &half_k, r[2], r[3], r[4]], None, false).kind(), ErrorKind::DType);
}

#[test]
fn the_backend_runs_it_from_a_graph() {
    let v = case([1, 3, 2, 2, 2], true, 43);
    let mut g = GraphBuilder::new();
    let names = ["q", "k", "v", "g", "beta", "m0"];
    let ins: Vec<_> = v.iter().zip(names).map(|(x, nm)| g.input(nm, DType::F32, x.shape().to_vec()).unwrap()).collect();
    let (o, m) = g.gated_delta_net((ins[0], ins[1], ins[2]), ins[3], ins[4], Some(ins[5]), Some(0.25)).unwrap();
    g.output(o).unwrap();
    g.output(m).unwrap();
    let mut exe = CpuRefBackend::new().compile(&g.build().unwrap(), &Default::default()).unwrap();
    let feeds: Vec<(&str, _)> = names.iter().copied().zip(v.iter().map(Tensor::view)).collect();
    let got: Vec<Vec<f64>> = exe.run(&feeds).unwrap().iter().map(f).collect();
    let (wo, wm) = gdn(&v.iter().collect::<Vec<_>>(), Some(0.25));
    assert_eq!(got, vec![wo, wm]);
    // a rank-5 g is a Shape error at build
    let mut g = GraphBuilder::new();
    let ins: Vec<_> = v.iter().zip(names).map(|(x, nm)| g.input(nm, DType::F32, x.shape().to_vec()).unwrap()).collect();
    let g5 = g.input("g5", DType::F32, vec![1, 3, 2, 2, 1]).unwrap();
    let e = g.gated_delta_net((ins[0], ins[1], ins[2]), g5, ins[4], None, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
}
