//! `Rnn`, `Gru` and `Lstm` against hand-computed steps (the formulas of §2.10.1–2.10.3 written out
//! again here, gate by gate), edge cases and errors; structural identities are in `identities`.

use crate::CpuRefBackend;
use backend_api::op::{RecurrentAttrs, RnnNonlinearity};
use backend_api::{Backend, DType, GraphBuilder, Result, Tensor};

mod errors;
mod identities;

/// The cell under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Rnn,
    Gru,
    Lstm,
}

impl Kind {
    pub(super) const ALL: [Kind; 3] = [Kind::Rnn, Kind::Gru, Kind::Lstm];

    pub(super) fn gates(self) -> usize {
        match self {
            Kind::Rnn => 1,
            Kind::Gru => 3,
            Kind::Lstm => 4,
        }
    }

    pub(super) fn states(self) -> usize {
        if self == Kind::Lstm {
            2
        } else {
            1
        }
    }
}

/// An F32 tensor.
pub(super) fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

/// Builds the node through `GraphBuilder` (so inference checks it too), compiles it on cpu-ref and
/// runs it; `states` are `[h0]` or `[h0, c0]` or empty.
pub(super) fn try_run(
    kind: Kind,
    attrs: RecurrentAttrs,
    x: &Tensor,
    weights: &[Tensor],
    states: &[Tensor],
) -> Result<Vec<Tensor>> {
    let mut g = GraphBuilder::new();
    let named = weights.iter().enumerate().map(|(i, w)| (format!("w{i}"), w));
    let named = named.chain(states.iter().enumerate().map(|(i, s)| (format!("s{i}"), s)));
    let feeds: Vec<(String, &Tensor)> = std::iter::once(("x".to_string(), x)).chain(named).collect();
    let mut vs = Vec::new();
    for (name, t) in &feeds {
        vs.push(g.input(name, t.dtype(), t.shape().to_vec())?);
    }
    let (xv, ws, ss) = (vs[0], &vs[1..=weights.len()], &vs[1 + weights.len()..]);
    let outs = match kind {
        Kind::Rnn => {
            let (y, h) = g.rnn(xv, ws, ss.first().copied(), attrs)?;
            vec![y, h]
        }
        Kind::Gru => {
            let (y, h) = g.gru(xv, ws, ss.first().copied(), attrs)?;
            vec![y, h]
        }
        Kind::Lstm => {
            let init = match ss[..] {
                [h, c] => Some((h, c)),
                _ => None,
            };
            let (y, h, c) = g.lstm(xv, ws, init, attrs)?;
            vec![y, h, c]
        }
    };
    for o in outs {
        g.output(o)?;
    }
    let graph = g.build()?;
    let mut exe = CpuRefBackend::new().compile(&graph, &Default::default())?;
    let views: Vec<(&str, backend_api::TensorView<'_>)> = feeds.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&views)
}

pub(super) fn run(kind: Kind, attrs: RecurrentAttrs, x: &Tensor, weights: &[Tensor], states: &[Tensor]) -> Vec<Tensor> {
    try_run(kind, attrs, x, weights, states).unwrap()
}

pub(super) fn vals(t: &Tensor) -> Vec<f64> {
    t.view().to_f64_lossy()
}

/// Asserts `got` and `want` agree to `tol` (absolute) element by element.
pub(super) fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths of {got:?} and {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: got {g}, want {w}\n got {got:?}\nwant {want:?}");
    }
}

/// Deterministic values in `[-scale, scale]` (an LCG; no dependency on a random crate).
pub(super) fn rand(shape: &[usize], seed: u64, scale: f32) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * u - 1.0) * scale
        })
        .collect();
    t(shape, &v)
}

/// Random parameters in PyTorch order for `a` with `input` features; seeds start at `seed`.
pub(super) fn params(kind: Kind, a: &RecurrentAttrs, input: usize, seed: u64) -> Vec<Tensor> {
    let (h, d) = (a.hidden_size as usize, a.num_directions());
    let gh = kind.gates() * h;
    let mut out = Vec::new();
    for layer in 0..a.num_layers as usize {
        let in_l = if layer == 0 { input } else { d * h };
        for _ in 0..d {
            let k = seed + out.len() as u64;
            out.push(rand(&[gh, in_l], k, 0.7));
            out.push(rand(&[gh, h], k + 100, 0.7));
            if a.has_bias {
                out.push(rand(&[gh], k + 200, 0.5));
                out.push(rand(&[gh], k + 300, 0.5));
            }
        }
    }
    out
}

fn sig(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Values of an F32 tensor as f64 (weights are read back exactly as the kernel reads them).
fn f(t: &Tensor) -> Vec<f64> {
    vals(t)
}

#[test]
fn rnn_tanh_two_steps_by_hand() {
    let w_ih = t(&[2, 1], &[0.5, -1.0]);
    let w_hh = t(&[2, 2], &[0.1, 0.2, 0.3, -0.4]);
    let b_ih = t(&[2], &[0.1, 0.0]);
    let b_hh = t(&[2], &[0.0, 0.2]);
    let x = t(&[1, 2, 1], &[1.0, 2.0]);
    let got = run(Kind::Rnn, RecurrentAttrs::new(2), &x, &[w_ih, w_hh, b_ih, b_hh], &[]);
    // t = 0 from h = 0: only W_ih·x and the biases (x_0 = 1)
    let (b0, b1) = (0.1f32 as f64, 0.2f32 as f64);
    let h0 = [(0.5 + b0 + 0.0).tanh(), (-1.0 + 0.0 + b1).tanh()];
    // t = 1
    let (a, b) = (0.1f32 as f64, 0.2f32 as f64);
    let (c, d) = (0.3f32 as f64, -0.4f32 as f64);
    let h1 = [(0.5 * 2.0 + b0 + a * h0[0] + b * h0[1]).tanh(), (-2.0 + b1 + c * h0[0] + d * h0[1]).tanh()];
    assert_eq!(got[0].shape(), &[1, 2, 2]);
    assert_eq!(got[1].shape(), &[1, 1, 2]);
    close(&vals(&got[0]), &[h0[0], h0[1], h1[0], h1[1]], 1e-6, "y");
    close(&vals(&got[1]), &h1, 1e-6, "h_n");
}

#[test]
fn rnn_relu_without_bias_starts_from_h0_and_clips() {
    let a = RecurrentAttrs { has_bias: false, nonlinearity: RnnNonlinearity::Relu, ..RecurrentAttrs::new(2) };
    let w_ih = t(&[2, 1], &[1.0, -1.0]);
    let w_hh = t(&[2, 2], &[0.5, 0.0, 1.0, 1.0]);
    let x = t(&[1, 2, 1], &[2.0, -3.0]);
    let h0 = t(&[1, 1, 2], &[1.0, -1.0]);
    let got = run(Kind::Rnn, a, &x, &[w_ih, w_hh], &[h0]);
    // t = 0: [2 + 0.5·1, max(−2 + 1 − 1, 0)] = [2.5, 0]
    // t = 1: [−3 + 0.5·2.5, max(3 + 2.5 + 0, 0)] → [max(−1.75, 0), 5.5] = [0, 5.5]
    assert_eq!(vals(&got[0]), vec![2.5, 0.0, 0.0, 5.5]);
    assert_eq!(vals(&got[1]), vec![0.0, 5.5]);
}

/// A two-step `Gru` with H = 2, In = 1, every gate row distinct, by the formulas of §2.10.2.
fn gru_by_hand(linear_before_reset: bool) -> (Vec<f64>, Vec<f64>) {
    // rows: r0 r1 z0 z1 n0 n1
    let w_ih = t(&[6, 1], &[0.4, -0.3, 0.2, 0.6, -0.5, 0.9]);
    let w_hh = t(&[6, 2], &[0.1, -0.2, 0.3, 0.4, -0.6, 0.5, 0.2, 0.1, 0.7, -0.3, -0.4, 0.8]);
    let b_ih = t(&[6], &[0.05, -0.1, 0.2, 0.0, 0.3, -0.2]);
    let b_hh = t(&[6], &[-0.15, 0.25, 0.1, -0.05, 0.4, 0.35]);
    let x = t(&[1, 2, 1], &[1.5, -0.5]);
    let h0 = t(&[1, 1, 2], &[0.3, -0.7]);
    let a = RecurrentAttrs { linear_before_reset, ..RecurrentAttrs::new(2) };
    let got = run(Kind::Gru, a, &x, &[w_ih.clone(), w_hh.clone(), b_ih.clone(), b_hh.clone()], &[h0]);
    let (wi, wh, bi, bh) = (f(&w_ih), f(&w_hh), f(&b_ih), f(&b_hh));
    let gi = |row: usize, x: f64| wi[row] * x + bi[row];
    let gh = |row: usize, h: [f64; 2]| wh[2 * row] * h[0] + wh[2 * row + 1] * h[1] + bh[row];
    let step = |x: f64, h: [f64; 2]| -> [f64; 2] {
        let r = [sig(gi(0, x) + gh(0, h)), sig(gi(1, x) + gh(1, h))];
        let z = [sig(gi(2, x) + gh(2, h)), sig(gi(3, x) + gh(3, h))];
        let n = if linear_before_reset {
            [(gi(4, x) + r[0] * gh(4, h)).tanh(), (gi(5, x) + r[1] * gh(5, h)).tanh()]
        } else {
            let rh = [r[0] * h[0], r[1] * h[1]];
            [(gi(4, x) + gh(4, rh)).tanh(), (gi(5, x) + gh(5, rh)).tanh()]
        };
        [(1.0 - z[0]) * n[0] + z[0] * h[0], (1.0 - z[1]) * n[1] + z[1] * h[1]]
    };
    let s0 = step(1.5, [0.3f32 as f64, -0.7f32 as f64]);
    let s1 = step(-0.5, s0);
    close(&vals(&got[0]), &[s0[0], s0[1], s1[0], s1[1]], 1e-6, "Gru y");
    close(&vals(&got[1]), &s1, 1e-6, "Gru h_n");
    (vals(&got[0]), vals(&got[1]))
}

#[test]
fn gru_two_steps_by_hand_in_both_reset_forms() {
    let (after, _) = gru_by_hand(true);
    let (before, _) = gru_by_hand(false);
    // the two forms really differ here (r ≠ 1, h ≠ 0), so each hand case checks its own form
    assert!(after.iter().zip(&before).any(|(a, b)| (a - b).abs() > 1e-3), "{after:?} vs {before:?}");
}

#[test]
fn lstm_two_steps_by_hand() {
    // rows: i0 i1 f0 f1 g0 g1 o0 o1
    let w_ih = t(&[8, 1], &[0.4, -0.3, 0.2, 0.6, -0.5, 0.9, 0.1, -0.8]);
    let w_hh = t(&[8, 2], &[0.1, -0.2, 0.3, 0.4, -0.6, 0.5, 0.2, 0.1, 0.7, -0.3, -0.4, 0.8, 0.25, -0.1, 0.5, 0.3]);
    let b_ih = t(&[8], &[0.05, -0.1, 0.2, 0.0, 0.3, -0.2, 0.1, 0.15]);
    let b_hh = t(&[8], &[-0.15, 0.25, 0.1, -0.05, 0.4, 0.35, -0.2, 0.05]);
    let x = t(&[1, 2, 1], &[1.5, -0.5]);
    let h0 = t(&[1, 1, 2], &[0.3, -0.7]);
    let c0 = t(&[1, 1, 2], &[-0.4, 0.6]);
    let ws = [w_ih.clone(), w_hh.clone(), b_ih.clone(), b_hh.clone()];
    let got = run(Kind::Lstm, RecurrentAttrs::new(2), &x, &ws, &[h0.clone(), c0.clone()]);
    let (wi, wh, bi, bh) = (f(&w_ih), f(&w_hh), f(&b_ih), f(&b_hh));
    let pre =
        |row: usize, x: f64, h: [f64; 2]| wi[row] * x + bi[row] + wh[2 * row] * h[0] + wh[2 * row + 1] * h[1] + bh[row];
    let step = |x: f64, h: [f64; 2], c: [f64; 2]| -> ([f64; 2], [f64; 2]) {
        let mut h2 = [0.0; 2];
        let mut c2 = [0.0; 2];
        for k in 0..2 {
            let i = sig(pre(k, x, h));
            let fg = sig(pre(2 + k, x, h));
            let g = pre(4 + k, x, h).tanh();
            let o = sig(pre(6 + k, x, h));
            c2[k] = fg * c[k] + i * g;
            h2[k] = o * c2[k].tanh();
        }
        (h2, c2)
    };
    let (hs, cs) = (f(&h0), f(&c0));
    let (ha, ca) = step(1.5, [hs[0], hs[1]], [cs[0], cs[1]]);
    let (hb, cb) = step(-0.5, ha, ca);
    close(&vals(&got[0]), &[ha[0], ha[1], hb[0], hb[1]], 1e-6, "Lstm y");
    close(&vals(&got[1]), &hb, 1e-6, "Lstm h_n");
    close(&vals(&got[2]), &cb, 1e-6, "Lstm c_n");
}

#[test]
fn empty_sequences_return_the_initial_states() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs { num_layers: 2, bidirectional: true, ..RecurrentAttrs::new(3) };
        let ws = params(kind, &a, 2, 7);
        let states: Vec<Tensor> = (0..kind.states()).map(|k| rand(&[4, 2, 3], 50 + k as u64, 1.0)).collect();
        let x = Tensor::zeros(DType::F32, &[2, 0, 2]);
        let got = run(kind, a, &x, &ws, &states);
        assert_eq!(got[0].shape(), &[2, 0, 6], "{kind:?}");
        for (k, s) in states.iter().enumerate() {
            assert_eq!(vals(&got[1 + k]), vals(s), "{kind:?} state {k}");
        }
        // without initial states they are zeros
        let got = run(kind, a, &x, &ws, &[]);
        assert!(got[1..].iter().all(|s| s.shape() == [4, 2, 3] && vals(s).iter().all(|&v| v == 0.0)));
    }
}

#[test]
fn empty_batches_give_empty_outputs() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs { batch_first: false, ..RecurrentAttrs::new(2) };
        let ws = params(kind, &a, 3, 1);
        let got = run(kind, a, &Tensor::zeros(DType::F32, &[4, 0, 3]), &ws, &[]);
        assert_eq!(got[0].shape(), &[4, 0, 2]);
        assert!(got[1..].iter().all(|s| s.shape() == [1, 0, 2]));
    }
}

#[test]
fn half_precision_inputs_round_the_f32_results_once() {
    for kind in Kind::ALL {
        for dtype in [DType::F16, DType::BF16] {
            let a = RecurrentAttrs { bidirectional: true, ..RecurrentAttrs::new(3) };
            // values exactly representable in both half formats, so both runs see the same inputs
            let cast = |t: &Tensor| -> Tensor {
                let v: Vec<f32> = vals(t).iter().map(|x| (x * 64.0).round() as f32 / 64.0).collect();
                Tensor::from_slice(t.shape(), &v).unwrap()
            };
            let ws: Vec<Tensor> = params(kind, &a, 2, 3).iter().map(cast).collect();
            let x = cast(&rand(&[2, 4, 2], 9, 1.0));
            let want = run(kind, a, &x, &ws, &[]);
            let to = |t: &Tensor| crate::ops::elementwise::cast::cast(t, dtype).unwrap();
            let got = run(kind, a, &to(&x), &ws.iter().map(to).collect::<Vec<_>>(), &[]);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.dtype(), dtype);
                // one rounding of values of magnitude < 1: half an ulp of the format at 1
                let ulp = if dtype == DType::F16 { 2f64.powi(-10) } else { 2f64.powi(-7) };
                close(&vals(g), &vals(w), ulp, &format!("{kind:?} {dtype}"));
            }
        }
    }
}
