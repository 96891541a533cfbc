//! `SelectiveScan` and `Mamba2` against recurrences written out by hand, and the identities that
//! tie them together: prefill then decode equals one pass, zero decay is a cumulative sum or
//! causal linear attention, one Mamba2 head is a SelectiveScan with broadcast parameters.

use super::{mamba2, selective_scan};
use crate::value::from_floats;
use crate::CpuRefBackend;
use backend_api::op::StateSpaceAttrs;
use backend_api::{Backend, DType, ErrorKind, GraphBuilder, Tensor};

fn t(shape: &[usize], v: &[f64]) -> Tensor {
    from_floats(DType::F32, shape, v).unwrap()
}

fn f(t: &Tensor) -> Vec<f64> {
    t.view().to_f64_lossy()
}

/// Deterministic values in `[lo, hi)`.
pub(crate) fn vals(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// `|got − want| ≤ tol·max(1, |want|)` elementwise.
pub(crate) fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths: got {got:?}, want {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * w.abs().max(1.0), "element {i}: got {g}, want {w}\n{got:?}\n{want:?}");
    }
}

/// Steps `[from, to)` of a `[B, S, inner]` row-major buffer.
pub(crate) fn steps(v: &[f64], b: usize, s: usize, inner: usize, from: usize, to: usize) -> Vec<f64> {
    (0..b).flat_map(|bi| v[(bi * s + from) * inner..(bi * s + to) * inner].to_vec()).collect()
}

fn ss(ins: &[&Tensor]) -> (Vec<f64>, Vec<f64>) {
    let attrs = StateSpaceAttrs { has_initial_state: ins.len() == 6 };
    let out = selective_scan(ins, &attrs).unwrap();
    (f(&out[0]), f(&out[1]))
}

fn m2(ins: &[&Tensor]) -> (Vec<f64>, Vec<f64>) {
    let attrs = StateSpaceAttrs { has_initial_state: ins.len() == 6 };
    let out = mamba2(ins, &attrs).unwrap();
    (f(&out[0]), f(&out[1]))
}

#[test]
fn selective_scan_by_hand_two_states() {
    // B 1, S 3, C 1, N 2, h starts at 0
    let x = t(&[1, 3, 1], &[1.0, 2.0, -1.0]);
    let d = t(&[1, 3, 1], &[0.5, 1.0, 2.0]);
    let a = t(&[1, 2], &[-1.0, -0.5]);
    let b = t(&[1, 3, 2], &[1.0, 0.0, 0.5, 1.0, 2.0, -1.0]);
    let c = t(&[1, 3, 2], &[1.0, 1.0, 2.0, 0.0, 0.0, 1.0]);
    let e = f64::exp;
    // t0: h = [0.5·1·1, 0]; t1: h = [e^-1·0.5 + 1·0.5·2, e^-0.5·0 + 1·1·2];
    // t2: h = [e^-2·h0 + 2·2·(−1), e^-1·2 + 2·(−1)·(−1)]
    let h1 = [0.5 * e(-1.0) + 1.0, 2.0];
    let h2 = [e(-2.0) * h1[0] - 4.0, e(-1.0) * 2.0 + 2.0];
    let (y, hf) = ss(&[&x, &d, &a, &b, &c]);
    close(&y, &[0.5, 2.0 * h1[0], h2[1]], 1e-6);
    close(&hf, &h2, 1e-6);
}

#[test]
fn selective_scan_by_hand_two_channels_with_initial_state() {
    // B 1, S 2, C 2, N 1: a per channel, b and c shared by the channels
    let x = t(&[1, 2, 2], &[1.0, 2.0, 3.0, -1.0]);
    let d = t(&[1, 2, 2], &[1.0, 0.5, 0.5, 1.0]);
    let a = t(&[2, 1], &[-1.0, -2.0]);
    let b = t(&[1, 2, 1], &[2.0, 1.0]);
    let c = t(&[1, 2, 1], &[1.0, 3.0]);
    let h0 = t(&[1, 2, 1], &[0.5, 1.0]);
    let e = f64::exp;
    let c0 = [e(-1.0) * 0.5 + 2.0, e(-0.5) * (e(-1.0) * 0.5 + 2.0) + 1.5];
    let c1 = [e(-1.0) + 2.0, e(-2.0) * (e(-1.0) + 2.0) - 1.0];
    let (y, hf) = ss(&[&x, &d, &a, &b, &c, &h0]);
    close(&y, &[c0[0], c1[0], 3.0 * c0[1], 3.0 * c1[1]], 1e-6);
    close(&hf, &[c0[1], c1[1]], 1e-6);
}

/// Random SelectiveScan operands `[B, S, C]`, `a` negative; the initial state iff `h0`.
fn ss_case(bs: usize, s: usize, c: usize, n: usize, seed: u64) -> Vec<Tensor> {
    vec![
        t(&[bs, s, c], &vals(bs * s * c, seed, -1.0, 1.0)),
        t(&[bs, s, c], &vals(bs * s * c, seed + 1, 0.0, 1.0)),
        t(&[c, n], &vals(c * n, seed + 2, -2.0, -0.1)),
        t(&[bs, s, n], &vals(bs * s * n, seed + 3, -1.0, 1.0)),
        t(&[bs, s, n], &vals(bs * s * n, seed + 4, -1.0, 1.0)),
        t(&[bs, c, n], &vals(bs * c * n, seed + 5, -1.0, 1.0)),
    ]
}

/// `[B, S, inner]` tensor → steps `[from, to)`.
fn cut(x: &Tensor, from: usize, to: usize) -> Tensor {
    let d = x.shape();
    let inner: usize = d[2..].iter().product();
    let mut shape = d.to_vec();
    shape[1] = to - from;
    t(&shape, &steps(&f(x), d[0], d[1], inner, from, to))
}

#[test]
fn selective_scan_prefill_then_decode_equals_one_pass() {
    let (bs, s, c, n) = (2, 7, 3, 2);
    let v = ss_case(bs, s, c, n, 11);
    for with_h0 in [false, true] {
        let k = if with_h0 { 6 } else { 5 };
        let all: Vec<&Tensor> = v.iter().take(k).collect();
        let (y, hf) = ss(&all);
        // x, delta, b and c have a step axis; a and h0 do not
        let part = |from, to| -> Vec<Tensor> {
            [0, 1, 2, 3, 4].map(|i| if i == 2 { v[2].clone() } else { cut(&v[i], from, to) }).to_vec()
        };
        let mut first = part(0, 3);
        first.extend(v.get(5).filter(|_| with_h0).cloned());
        let (y1, h1) = ss(&first.iter().collect::<Vec<_>>());
        let mut second = part(3, s);
        second.push(t(&[bs, c, n], &h1));
        let (y2, h2) = ss(&second.iter().collect::<Vec<_>>());
        close(&steps(&y, bs, s, c, 0, 3), &y1, 1e-6);
        close(&steps(&y, bs, s, c, 3, s), &y2, 1e-5);
        close(&hf, &h2, 1e-5);
    }
}

#[test]
fn batches_are_independent() {
    let v = ss_case(2, 4, 2, 3, 5);
    let (y, hf) = ss(&v.iter().collect::<Vec<_>>());
    for bi in 0..2 {
        let one: Vec<Tensor> =
            v.iter().enumerate().map(|(i, x)| if i == 2 { x.clone() } else { batch(x, bi) }).collect();
        let (yb, hb) = ss(&one.iter().collect::<Vec<_>>());
        assert_eq!(yb, y[bi * 8..(bi + 1) * 8]);
        assert_eq!(hb, hf[bi * 6..(bi + 1) * 6]);
    }
}

/// Batch `bi` of a tensor, keeping a leading dim of 1.
fn batch(x: &Tensor, bi: usize) -> Tensor {
    let mut shape = x.shape().to_vec();
    let per: usize = shape[1..].iter().product();
    shape[0] = 1;
    t(&shape, &f(x)[bi * per..(bi + 1) * per])
}

#[test]
fn zero_decay_is_a_cumulative_sum_in_every_dtype() {
    // a = 0, Δ = 1, b = c = 1 with N 2: y = 2·cumsum(x) per channel, h = cumsum(x) per state
    for dt in [DType::F32, DType::F16, DType::BF16] {
        let w = |shape: &[usize], v: &[f64]| from_floats(dt, shape, v).unwrap();
        let xs = [1.0, -2.0, 3.0, 4.0, 0.5, -1.0]; // [1, 3, 2]
        let x = w(&[1, 3, 2], &xs);
        let out = selective_scan(
            &[
                &x,
                &w(&[1, 3, 2], &[1.0; 6]),
                &w(&[2, 2], &[0.0; 4]),
                &w(&[1, 3, 2], &[1.0; 6]),
                &w(&[1, 3, 2], &[1.0; 6]),
            ],
            &StateSpaceAttrs::default(),
        )
        .unwrap();
        assert_eq!((out[0].dtype(), out[1].dtype()), (dt, dt));
        assert_eq!((out[0].shape(), out[1].shape()), (&[1usize, 3, 2][..], &[1usize, 2, 2][..]));
        assert_eq!(f(&out[0]), vec![2.0, -4.0, 8.0, 4.0, 9.0, 2.0]);
        assert_eq!(f(&out[1]), vec![4.5, 4.5, 1.0, 1.0]);
    }
}

#[test]
fn half_precision_rounds_once_not_every_step() {
    // cumsum of [1, 2^-11, 2^-11] in F16: 1 + 2^-11 is a tie that rounds to 1, but the state keeps
    // it, so the third step gives 1 + 2^-10 (a state rounded to F16 every step would stay at 1).
    let w = |shape: &[usize], v: &[f64]| from_floats(DType::F16, shape, v).unwrap();
    let e = 2f64.powi(-11);
    let one = w(&[1, 3, 1], &[1.0; 3]);
    let out = selective_scan(
        &[&w(&[1, 3, 1], &[1.0, e, e]), &one, &w(&[1, 1], &[0.0]), &one, &one],
        &StateSpaceAttrs::default(),
    )
    .unwrap();
    assert_eq!(f(&out[0]), vec![1.0, 1.0, 1.0 + 2.0 * e]);
    assert_eq!(f(&out[1]), vec![1.0 + 2.0 * e]);
}

#[test]
fn empty_sequence_keeps_the_initial_state_and_empty_state_gives_zero_output() {
    let v = ss_case(2, 0, 3, 2, 1);
    let (y, hf) = ss(&v.iter().collect::<Vec<_>>());
    assert!(y.is_empty());
    assert_eq!(hf, f(&v[5]));
    let (y, hf) = ss(&v.iter().take(5).collect::<Vec<_>>());
    assert!(y.is_empty());
    assert_eq!(hf, vec![0.0; 12]);
    // N = 0: y = 0 (an empty sum) and an empty state
    let v = ss_case(2, 3, 2, 0, 1);
    let (y, hf) = ss(&v.iter().collect::<Vec<_>>());
    assert_eq!(y, vec![0.0; 12]);
    assert!(hf.is_empty());
}

#[test]
fn long_sequences_converge_or_overflow_without_clamping() {
    let s = 4096;
    let one = t(&[1, s, 1], &vec![1.0; s]);
    let ones2 = t(&[1, s, 2], &vec![1.0; 2 * s]);
    // decay: h = e^a·h + 1 converges to 1/(1 − e^a)
    let (y, hf) = ss(&[&one, &one, &t(&[1, 2], &[-0.5, -0.5]), &ones2, &ones2]);
    let h_inf = 1.0 / (1.0 - (-0.5f64).exp());
    close(&hf, &[h_inf, h_inf], 1e-6);
    close(&y[s - 1..], &[2.0 * h_inf], 1e-6);
    assert!(y.iter().all(|v| v.is_finite()));
    // growth e^0.25 per step: both states overflow to +inf; c = [1, −1] then gives inf − inf = NaN
    let c = t(&[1, s, 2], &[1.0, -1.0].repeat(s));
    let (y, hf) = ss(&[&one, &one, &t(&[1, 2], &[0.25, 0.25]), &ones2, &c]);
    assert_eq!(hf, vec![f64::INFINITY; 2]);
    assert_eq!(y[0], 0.0);
    assert!(y[s - 1].is_nan());
    // with one state the output overflows F32 and stays +inf: never clamped to F32::MAX
    let (y, _) = ss(&[&one, &one, &t(&[1, 1], &[0.25]), &one, &one]);
    let first_inf = y.iter().position(|v| v.is_infinite()).unwrap();
    assert!(y[..first_inf].iter().all(|v| v.is_finite() && *v < f64::from(f32::MAX)));
    assert!(y[first_inf..].iter().all(|v| *v == f64::INFINITY));
}

#[test]
fn a_nan_input_poisons_every_later_step() {
    let mut xs = vals(5, 3, -1.0, 1.0);
    xs[2] = f64::NAN;
    let v = ss_case(1, 5, 1, 2, 9);
    let (y, hf) = ss(&[&t(&[1, 5, 1], &xs), &v[1], &v[2], &v[3], &v[4]]);
    assert!(y[..2].iter().all(|v| v.is_finite()));
    assert!(y[2..].iter().all(|v| v.is_nan()) && hf.iter().all(|v| v.is_nan()));
}

#[test]
fn shape_dtype_and_arity_errors() {
    let v = ss_case(1, 3, 2, 2, 1);
    let r: Vec<&Tensor> = v.iter().take(5).collect();
    let bad_b = t(&[1, 3, 3], &[0.0; 9]);
    let e = selective_scan(&[r[0], r[1], r[2], &bad_b, r[4]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("[1, 3, 3]"), "{e}");
    let bad_h0 = t(&[1, 2, 3], &[0.0; 6]);
    let e = selective_scan(&[r[0], r[1], r[2], r[3], r[4], &bad_h0], &StateSpaceAttrs { has_initial_state: true });
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Shape);
    let e = selective_scan(&[r[0], r[1], r[2], r[3]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Arity, "{e}");
    let e = selective_scan(&r, &StateSpaceAttrs { has_initial_state: true }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Arity, "{e}");
    let half_x = from_floats(DType::F16, &[1, 3, 2], &[0.0; 6]).unwrap();
    let e = selective_scan(&[&half_x, r[1], r[2], r[3], r[4]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DType, "{e}");
    let f64_x = Tensor::from_slice(&[1, 3, 2], &[0.0f64; 6]).unwrap();
    let e = selective_scan(&[&f64_x, &f64_x, r[2], r[3], r[4]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DType, "{e}");
}

/// Random Mamba2 operands `[B, S, H, P]`, state `N`; `a` negative; the initial state last.
fn m2_case(bs: usize, s: usize, h: usize, p: usize, n: usize, seed: u64) -> Vec<Tensor> {
    vec![
        t(&[bs, s, h, p], &vals(bs * s * h * p, seed, -1.0, 1.0)),
        t(&[bs, s, h], &vals(bs * s * h, seed + 1, 0.0, 1.0)),
        t(&[h], &vals(h, seed + 2, -2.0, -0.1)),
        t(&[bs, s, h, n], &vals(bs * s * h * n, seed + 3, -1.0, 1.0)),
        t(&[bs, s, h, n], &vals(bs * s * h * n, seed + 4, -1.0, 1.0)),
        t(&[bs, h, p, n], &vals(bs * h * p * n, seed + 5, -1.0, 1.0)),
    ]
}

#[test]
fn mamba2_by_hand_two_heads() {
    // B 1, S 2, H 2, P 1, N 1; head 0 decays (a = −1), head 1 does not (a = 0)
    let x = t(&[1, 2, 2, 1], &[1.0, 2.0, 3.0, 4.0]);
    let dt = t(&[1, 2, 2], &[1.0, 0.5, 2.0, 1.0]);
    let a = t(&[2], &[-1.0, 0.0]);
    let b = t(&[1, 2, 2, 1], &[1.0, 2.0, -1.0, 1.0]);
    let c = t(&[1, 2, 2, 1], &[2.0, 1.0, 1.0, 3.0]);
    // head 0: St = 1·1·1 = 1, y = 2; St = e^-2·1 + 2·3·(−1), y = St
    // head 1: St = 0.5·2·2 = 2, y = 2; St = 1·2 + 1·4·1 = 6, y = 18
    let s0 = (-2f64).exp() - 6.0;
    let (y, st) = m2(&[&x, &dt, &a, &b, &c]);
    close(&y, &[2.0, 2.0, s0, 18.0], 1e-6);
    close(&st, &[s0, 6.0], 1e-6);
}

#[test]
fn mamba2_by_hand_outer_product_state_with_initial_state() {
    // B 1, S 1, H 1, P 2, N 2: St = e^(dt·a)·St0 + dt·x ⊗ b; y = St·c
    let x = t(&[1, 1, 1, 2], &[1.0, -2.0]);
    let dt = t(&[1, 1, 1], &[0.5]);
    let a = t(&[1], &[-2.0]);
    let b = t(&[1, 1, 1, 2], &[3.0, 1.0]);
    let c = t(&[1, 1, 1, 2], &[1.0, -1.0]);
    let s0 = t(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let al = (-1f64).exp();
    let st = [al + 1.5, 2.0 * al + 0.5, 3.0 * al - 3.0, 4.0 * al - 1.0];
    let (y, got) = m2(&[&x, &dt, &a, &b, &c, &s0]);
    close(&got, &st, 1e-6);
    close(&y, &[st[0] - st[1], st[2] - st[3]], 1e-6);
}

#[test]
fn mamba2_without_decay_is_causal_linear_attention() {
    // a = 0, dt = 1: y[t, p] = Σ_{s ≤ t} (c_t · b_s) x_s[p], per head
    let (bs, s, h, p, n) = (1, 5, 2, 3, 2);
    let mut v = m2_case(bs, s, h, p, n, 21);
    v[1] = t(&[bs, s, h], &vec![1.0; bs * s * h]);
    v[2] = t(&[h], &[0.0; 2]);
    let (x, b, c) = (f(&v[0]), f(&v[3]), f(&v[4]));
    let mut want = vec![0.0; s * h * p];
    for ti in 0..s {
        for hh in 0..h {
            for si in 0..=ti {
                let dot: f64 = (0..n).map(|j| c[(ti * h + hh) * n + j] * b[(si * h + hh) * n + j]).sum();
                for pp in 0..p {
                    want[(ti * h + hh) * p + pp] += dot * x[(si * h + hh) * p + pp];
                }
            }
        }
    }
    let (y, _) = m2(&v.iter().take(5).collect::<Vec<_>>());
    close(&y, &want, 1e-6);
}

#[test]
fn each_mamba2_head_is_a_selective_scan_with_broadcast_parameters() {
    // Both definitions give h ← exp(Δ·a)·h + Δ·b·x, y = Σ c·h: a head's P channels are SelectiveScan
    // channels with delta[b, t, p] = dt[b, t, h], a[p, n] = a[h], and b, c, state0 of head h.
    let (bs, s, h, p, n) = (2, 4, 2, 3, 2);
    let v = m2_case(bs, s, h, p, n, 31);
    let (y, st) = m2(&v.iter().collect::<Vec<_>>());
    let [x, dt, a, b, c, s0] = [0, 1, 2, 3, 4, 5].map(|i| f(&v[i]));
    let head = |buf: &[f64], lead: usize, inner: usize, hh: usize| -> Vec<f64> {
        (0..lead).flat_map(|r| buf[(r * h + hh) * inner..][..inner].to_vec()).collect()
    };
    for (hh, &ah) in a.iter().enumerate() {
        let delta: Vec<f64> = head(&dt, bs * s, 1, hh).iter().flat_map(|&d| vec![d; p]).collect();
        let ins = [
            t(&[bs, s, p], &head(&x, bs * s, p, hh)),
            t(&[bs, s, p], &delta),
            t(&[p, n], &vec![ah; p * n]),
            t(&[bs, s, n], &head(&b, bs * s, n, hh)),
            t(&[bs, s, n], &head(&c, bs * s, n, hh)),
            t(&[bs, p, n], &head(&s0, bs, p * n, hh)),
        ];
        let (ys, hs) = ss(&ins.iter().collect::<Vec<_>>());
        close(&head(&y, bs * s, p, hh), &ys, 1e-6);
        close(&head(&st, bs, p * n, hh), &hs, 1e-6);
    }
}

#[test]
fn mamba2_prefill_then_decode_equals_one_pass() {
    let (bs, s, h, p, n) = (2, 6, 2, 2, 3);
    let v = m2_case(bs, s, h, p, n, 41);
    let (y, st) = m2(&v.iter().collect::<Vec<_>>());
    let split = |from, to| -> Vec<Tensor> {
        [0, 1, 2, 3, 4].map(|i| if i == 2 { v[2].clone() } else { cut(&v[i], from, to) }).to_vec()
    };
    let mut first = split(0, 4);
    first.push(v[5].clone());
    let (y1, s1) = m2(&first.iter().collect::<Vec<_>>());
    let mut second = split(4, s);
    second.push(t(&[bs, h, p, n], &s1));
    let (y2, s2) = m2(&second.iter().collect::<Vec<_>>());
    close(&steps(&y, bs, s, h * p, 0, 4), &y1, 1e-6);
    close(&steps(&y, bs, s, h * p, 4, s), &y2, 1e-5);
    close(&st, &s2, 1e-5);
}

#[test]
fn mamba2_edges_overflow_and_errors() {
    let v = m2_case(1, 0, 2, 2, 2, 1);
    let (y, st) = m2(&v.iter().collect::<Vec<_>>());
    assert!(y.is_empty());
    assert_eq!(st, f(&v[5]));
    let v = m2_case(1, 3, 2, 2, 0, 1);
    let (y, st) = m2(&v.iter().take(5).collect::<Vec<_>>());
    assert_eq!((y, st.len()), (vec![0.0; 12], 0));
    // growth: the state overflows to +inf and stays there
    let s = 4096;
    let ones = |shape: &[usize]| t(shape, &vec![1.0; shape.iter().product()]);
    let (y, st) =
        m2(&[&ones(&[1, s, 1, 1]), &ones(&[1, s, 1]), &t(&[1], &[0.5]), &ones(&[1, s, 1, 1]), &ones(&[1, s, 1, 1])]);
    assert_eq!((y[s - 1], st[0]), (f64::INFINITY, f64::INFINITY));
    // errors: a of the wrong length, a rank-3 b
    let v = m2_case(1, 2, 2, 2, 2, 1);
    let e = mamba2(&[&v[0], &v[1], &t(&[3], &[0.0; 3]), &v[3], &v[4]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let b3 = t(&[1, 2, 2], &[0.0; 4]);
    let e = mamba2(&[&v[0], &v[1], &v[2], &b3, &v[4]], &StateSpaceAttrs::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let bad_s0 = t(&[1, 2, 2, 3], &[0.0; 12]);
    let e = mamba2(&[&v[0], &v[1], &v[2], &v[3], &v[4], &bad_s0], &StateSpaceAttrs { has_initial_state: true });
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Shape);
}

#[test]
fn the_backend_runs_both_ops_from_a_graph() {
    let ssv = ss_case(1, 3, 2, 2, 51);
    let mv = m2_case(1, 3, 2, 2, 2, 61);
    let mut g = GraphBuilder::new();
    let names = ["x", "d", "a", "b", "c", "h0"];
    let si: Vec<_> =
        ssv.iter().zip(names).map(|(v, nm)| g.input(nm, DType::F32, v.shape().to_vec()).unwrap()).collect();
    let mi: Vec<_> = mv
        .iter()
        .take(5)
        .zip(names)
        .map(|(v, nm)| g.input(&format!("m{nm}"), DType::F32, v.shape().to_vec()).unwrap())
        .collect();
    let (y, h) = g.selective_scan(si[0], si[1], si[2], si[3], si[4], Some(si[5])).unwrap();
    let (my, ms) = g.mamba2(mi[0], mi[1], mi[2], mi[3], mi[4], None).unwrap();
    for o in [y, h, my, ms] {
        g.output(o).unwrap();
    }
    let mut exe = CpuRefBackend::new().compile(&g.build().unwrap(), &Default::default()).unwrap();
    let mnames: Vec<String> = names.iter().map(|nm| format!("m{nm}")).collect();
    let feeds: Vec<(&str, _)> = names
        .iter()
        .copied()
        .zip(ssv.iter())
        .chain(mnames.iter().map(String::as_str).zip(mv.iter()).take(5))
        .map(|(nm, v)| (nm, v.view()))
        .collect();
    let got: Vec<Vec<f64>> = exe.run(&feeds).unwrap().iter().map(f).collect();
    let (wy, wh) = ss(&ssv.iter().collect::<Vec<_>>());
    let (wmy, wms) = m2(&mv.iter().take(5).collect::<Vec<_>>());
    assert_eq!(got, vec![wy, wh, wmy, wms]);
    // the builder's shape inference names the same error kind at build
    let mut g = GraphBuilder::new();
    let ins: Vec<_> = [vec![1, 3, 2], vec![1, 3, 2], vec![2, 2], vec![1, 3, 2], vec![1, 4, 2]]
        .into_iter()
        .enumerate()
        .map(|(i, s)| g.input(&format!("i{i}"), DType::F32, s).unwrap())
        .collect();
    let e = g.selective_scan(ins[0], ins[1], ins[2], ins[3], ins[4], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
}
