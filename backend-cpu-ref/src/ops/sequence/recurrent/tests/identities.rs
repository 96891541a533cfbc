//! Structural identities of §2.10.1: the reverse direction is the forward recurrence on the
//! time-reversed input, stacked layers are the composition of single layers, `batch_first` is a
//! transposition, no bias is a zero bias, and `Rnn` (tanh) is a `Scan` of MatMul/Add/Tanh.

use super::{close, params, rand, run, t, vals, Kind};
use crate::CpuRefBackend;
use backend_api::op::{BinaryOp, RecurrentAttrs, UnaryOp};
use backend_api::{Backend, DType, Dim, GraphBuilder, Shape, Tensor};

/// `[A, B, C]` values of `x` reordered: output `(i, j, k)` reads `x` at `src(i, j, k)`.
fn remap(x: &Tensor, shape: [usize; 3], src: impl Fn(usize, usize, usize) -> [usize; 3]) -> Tensor {
    let v = vals(x);
    let d = x.shape();
    let mut out = Vec::new();
    for i in 0..shape[0] {
        for j in 0..shape[1] {
            for k in 0..shape[2] {
                let [a, b, c] = src(i, j, k);
                out.push(v[(a * d[1] + b) * d[2] + c] as f32);
            }
        }
    }
    t(&shape, &out)
}

fn dims(x: &Tensor) -> [usize; 3] {
    [x.shape()[0], x.shape()[1], x.shape()[2]]
}

/// Swaps the first two axes.
fn transpose01(x: &Tensor) -> Tensor {
    let [a, b, c] = dims(x);
    remap(x, [b, a, c], |i, j, k| [j, i, k])
}

/// Reverses axis 1 (time, for batch-first tensors).
fn flip1(x: &Tensor) -> Tensor {
    let [a, b, c] = dims(x);
    remap(x, [a, b, c], |i, j, k| [i, b - 1 - j, k])
}

/// Elements `lo..hi` of the last axis.
fn features(x: &Tensor, lo: usize, hi: usize) -> Tensor {
    let [a, b, _] = dims(x);
    remap(x, [a, b, hi - lo], |i, j, k| [i, j, lo + k])
}

/// Elements `lo..hi` of the first axis.
fn leading(x: &Tensor, lo: usize, hi: usize) -> Tensor {
    let [_, b, c] = dims(x);
    remap(x, [hi - lo, b, c], |i, j, k| [lo + i, j, k])
}

fn initial(kind: Kind, slots: usize, batch: usize, h: usize, seed: u64) -> Vec<Tensor> {
    (0..kind.states()).map(|k| rand(&[slots, batch, h], seed + k as u64, 0.8)).collect()
}

#[test]
fn the_reverse_direction_is_the_forward_one_on_reversed_time() {
    for kind in Kind::ALL {
        let bi = RecurrentAttrs { bidirectional: true, ..RecurrentAttrs::new(3) };
        let ws = params(kind, &bi, 2, 11);
        let x = rand(&[2, 5, 2], 4, 1.0);
        let st = initial(kind, 2, 2, 3, 20);
        let both = run(kind, bi, &x, &ws, &st);
        let per = ws.len() / 2;
        let one = RecurrentAttrs::new(3);
        let first: Vec<Tensor> = st.iter().map(|s| leading(s, 0, 1)).collect();
        let second: Vec<Tensor> = st.iter().map(|s| leading(s, 1, 2)).collect();
        let fwd = run(kind, one, &x, &ws[..per], &first);
        let rev = run(kind, one, &flip1(&x), &ws[per..], &second);
        assert_eq!(vals(&features(&both[0], 0, 3)), vals(&fwd[0]), "{kind:?} forward half of y");
        assert_eq!(vals(&features(&both[0], 3, 6)), vals(&flip1(&rev[0])), "{kind:?} reverse half of y");
        for k in 1..both.len() {
            assert_eq!(vals(&leading(&both[k], 0, 1)), vals(&fwd[k]), "{kind:?} output {k}, direction 0");
            assert_eq!(vals(&leading(&both[k], 1, 2)), vals(&rev[k]), "{kind:?} output {k}, direction 1");
        }
    }
}

#[test]
fn two_layers_are_two_stacked_single_layers() {
    for kind in Kind::ALL {
        for bidirectional in [false, true] {
            let d = if bidirectional { 2 } else { 1 };
            let two = RecurrentAttrs { num_layers: 2, bidirectional, ..RecurrentAttrs::new(3) };
            let ws = params(kind, &two, 2, 31);
            let x = rand(&[2, 4, 2], 5, 1.0);
            let st = initial(kind, 2 * d, 2, 3, 40);
            let stacked = run(kind, two, &x, &ws, &st);
            let one = RecurrentAttrs { bidirectional, ..RecurrentAttrs::new(3) };
            let per = ws.len() / 2;
            let lower: Vec<Tensor> = st.iter().map(|s| leading(s, 0, d)).collect();
            let upper: Vec<Tensor> = st.iter().map(|s| leading(s, d, 2 * d)).collect();
            let l0 = run(kind, one, &x, &ws[..per], &lower);
            let l1 = run(kind, one, &l0[0], &ws[per..], &upper);
            // the single layers round y0 to F32 between them; the stacked op does not
            let tag = format!("{kind:?} bidirectional {bidirectional}");
            close(&vals(&stacked[0]), &vals(&l1[0]), 1e-6, &format!("{tag} y"));
            for k in 1..stacked.len() {
                close(&vals(&leading(&stacked[k], 0, d)), &vals(&l0[k]), 0.0, &format!("{tag} {k} layer 0"));
                close(&vals(&leading(&stacked[k], d, 2 * d)), &vals(&l1[k]), 1e-6, &format!("{tag} {k} layer 1"));
            }
        }
    }
}

#[test]
fn batch_first_is_the_transposed_layout() {
    for kind in Kind::ALL {
        let bf = RecurrentAttrs { bidirectional: true, num_layers: 2, ..RecurrentAttrs::new(2) };
        let sf = RecurrentAttrs { batch_first: false, ..bf };
        let ws = params(kind, &bf, 3, 60);
        let x = rand(&[3, 4, 3], 6, 1.0);
        let st = initial(kind, 4, 3, 2, 70);
        let a = run(kind, bf, &x, &ws, &st);
        let b = run(kind, sf, &transpose01(&x), &ws, &st);
        assert_eq!(b[0].shape(), &[4, 3, 4]);
        assert_eq!(vals(&a[0]), vals(&transpose01(&b[0])), "{kind:?} y");
        for k in 1..a.len() {
            // states are [L·D, B, H] in both layouts
            assert_eq!(vals(&a[k]), vals(&b[k]), "{kind:?} state {k}");
        }
    }
}

#[test]
fn no_bias_is_a_zero_bias() {
    for kind in Kind::ALL {
        let with = RecurrentAttrs { bidirectional: true, ..RecurrentAttrs::new(2) };
        let without = RecurrentAttrs { has_bias: false, ..with };
        let ws = params(kind, &without, 2, 80);
        let zero = Tensor::zeros(DType::F32, &[kind.gates() * 2]);
        let zeroed: Vec<Tensor> =
            ws.chunks(2).flat_map(|w| [w[0].clone(), w[1].clone(), zero.clone(), zero.clone()]).collect();
        let x = rand(&[1, 3, 2], 8, 1.0);
        let a = run(kind, without, &x, &ws, &[]);
        let b = run(kind, with, &x, &zeroed, &[]);
        for (p, q) in a.iter().zip(&b) {
            assert_eq!(vals(p), vals(q), "{kind:?}");
        }
    }
}

/// `Rnn` (tanh, one layer, not batch-first) as a `Scan` over `[S, B, In]`: the carry `h` `[B, H]`
/// becomes `tanh(x_t·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)`, and is also the per-step output.
fn rnn_as_scan(x: &Tensor, ws: &[Tensor], h0: &Tensor) -> Vec<Tensor> {
    let [s, b, inp] = dims(x);
    let h = ws[1].shape()[0];
    let mut body = GraphBuilder::new();
    let hc = body.input("h", DType::F32, vec![b, h]).unwrap();
    let wi = body.input("wi", DType::F32, vec![inp, h]).unwrap();
    let wh = body.input("wh", DType::F32, vec![h, h]).unwrap();
    let bi = body.input("bi", DType::F32, vec![h]).unwrap();
    let bh = body.input("bh", DType::F32, vec![h]).unwrap();
    let xt = body.input("xt", DType::F32, vec![b, inp]).unwrap();
    let gi = body.matmul(xt, wi).unwrap();
    let gi = body.binary(BinaryOp::Add, gi, bi).unwrap();
    let gh = body.matmul(hc, wh).unwrap();
    let gh = body.binary(BinaryOp::Add, gh, bh).unwrap();
    let pre = body.binary(BinaryOp::Add, gi, gh).unwrap();
    let h1 = body.unary(UnaryOp::Tanh, pre).unwrap();
    body.output(h1).unwrap();
    body.output(h1).unwrap();
    let body = body.build().unwrap();

    let mut g = GraphBuilder::new();
    let xv = g.input("x", DType::F32, vec![s, b, inp]).unwrap();
    let names = ["w_ih", "w_hh", "b_ih", "b_hh"];
    let w: Vec<_> = names.iter().zip(ws).map(|(n, t)| g.input(n, DType::F32, t.shape().to_vec()).unwrap()).collect();
    let h0v = g.input("h0", DType::F32, vec![b, h]).unwrap();
    let wi_t = g.transpose(w[0], &[1, 0]).unwrap();
    let wh_t = g.transpose(w[1], &[1, 0]).unwrap();
    let outs = g.scan(body, s as u64, false, (&[h0v], &[wi_t, wh_t, w[2], w[3]], &[xv]), false).unwrap();
    for o in outs {
        g.output(o).unwrap();
    }
    let graph = g.build().unwrap();
    let mut exe = CpuRefBackend::new().compile(&graph, &Default::default()).unwrap();
    let h0_2d = Tensor::from_bytes(DType::F32, &[b, h], h0.bytes().to_vec()).unwrap();
    let mut feeds = vec![("x", x.view()), ("h0", h0_2d.view())];
    feeds.extend(names.iter().zip(ws).map(|(n, t)| (*n, t.view())));
    exe.run(&feeds).unwrap()
}

#[test]
fn rnn_tanh_is_a_scan_of_matmul_add_tanh() {
    let a = RecurrentAttrs { batch_first: false, ..RecurrentAttrs::new(4) };
    let ws = params(Kind::Rnn, &a, 3, 90);
    let x = rand(&[6, 2, 3], 10, 1.0);
    let h0 = rand(&[1, 2, 4], 12, 0.9);
    let rnn = run(Kind::Rnn, a, &x, &ws, std::slice::from_ref(&h0));
    let scan = rnn_as_scan(&x, &ws, &h0);
    // the Scan rounds every intermediate to F32; the op rounds once
    close(&vals(&rnn[0]), &vals(&scan[1]), 1e-5, "y vs stacked carries");
    close(&vals(&rnn[1]), &vals(&scan[0]), 1e-5, "h_n vs final carry");
}

#[test]
fn symbolic_batch_and_sequence_dims_are_bound_at_run() {
    let a = RecurrentAttrs::new(2);
    let ws = params(Kind::Lstm, &a, 3, 5);
    let mut g = GraphBuilder::new();
    let xv = g.input("x", DType::F32, Shape(vec![Dim::from("b"), Dim::from("s"), Dim::Static(3)])).unwrap();
    let w: Vec<_> = ws
        .iter()
        .enumerate()
        .map(|(i, t)| g.input(&format!("w{i}"), DType::F32, t.shape().to_vec()).unwrap())
        .collect();
    let (y, h, c) = g.lstm(xv, &w, None, a).unwrap();
    for o in [y, h, c] {
        g.output(o).unwrap();
    }
    let mut exe = CpuRefBackend::new().compile(&g.build().unwrap(), &Default::default()).unwrap();
    let names: Vec<String> = (0..ws.len()).map(|i| format!("w{i}")).collect();
    for (bs, ss) in [(2, 3), (1, 5)] {
        let x = rand(&[bs, ss, 3], 2, 1.0);
        let mut feeds = vec![("x", x.view())];
        feeds.extend(names.iter().map(String::as_str).zip(ws.iter().map(Tensor::view)));
        let got = exe.run(&feeds).unwrap();
        let want = run(Kind::Lstm, a, &x, &ws, &[]);
        for (p, q) in got.iter().zip(&want) {
            assert_eq!(p.shape(), q.shape());
            assert_eq!(vals(p), vals(q));
        }
    }
}
