//! §2.10 recurrent cells, state-space scans and `Scan`.

use crate::{dims, dt, fails, finish, inp};
use backend_api::op::{BinaryOp, Op, RecurrentAttrs, RnnNonlinearity};
use backend_api::{DType, ErrorKind, Graph, GraphBuilder, Value};

/// PyTorch-ordered weights for `layers` × `dirs` with `gates·h` rows.
fn cell_weights(
    b: &mut GraphBuilder,
    tag: &str,
    gates: usize,
    h: usize,
    input: usize,
    (layers, dirs): (usize, usize),
    bias: bool,
) -> Vec<Value> {
    let mut ws = vec![];
    for l in 0..layers {
        let in_l = if l == 0 { input } else { dirs * h };
        for d in 0..dirs {
            ws.push(inp(b, &format!("{tag}w_ih{l}{d}"), DType::F32, &[gates * h, in_l]));
            ws.push(inp(b, &format!("{tag}w_hh{l}{d}"), DType::F32, &[gates * h, h]));
            if bias {
                ws.push(inp(b, &format!("{tag}b_ih{l}{d}"), DType::F32, &[gates * h]));
                ws.push(inp(b, &format!("{tag}b_hh{l}{d}"), DType::F32, &[gates * h]));
            }
        }
    }
    ws
}

#[test]
fn rnn_two_layers_bidirectional() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[2, 5, 3]);
    let ws = cell_weights(&mut b, "", 1, 4, 3, (2, 2), true);
    let a = RecurrentAttrs {
        num_layers: 2,
        bidirectional: true,
        nonlinearity: RnnNonlinearity::Relu,
        ..RecurrentAttrs::new(4)
    };
    let (y, h) = b.rnn(x, &ws, None, a).unwrap();
    assert_eq!(dims(&b, y), [2, 5, 8]);
    assert_eq!(dims(&b, h), [4, 2, 4]);
    fails(b.rnn(x, &ws[..ws.len() - 1], None, a), ErrorKind::Arity);
    let mut swapped = ws.clone();
    swapped.swap(0, 1);
    fails(b.rnn(x, &swapped, None, a), ErrorKind::Shape);
    fails(b.rnn(x, &ws, None, RecurrentAttrs { hidden_size: 0, ..a }), ErrorKind::Attribute);
    let x16 = inp(&mut b, "x16", DType::F16, &[2, 5, 3]);
    fails(b.rnn(x16, &ws, None, a), ErrorKind::DType);
    let x64 = inp(&mut b, "x64", DType::F64, &[2, 5, 3]);
    fails(b.rnn(x64, &ws, None, a), ErrorKind::DType);
}

#[test]
fn gru_sequence_first_with_state() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[5, 2, 3]);
    let ws = cell_weights(&mut b, "", 3, 4, 3, (1, 1), false);
    let h0 = inp(&mut b, "h0", DType::F32, &[1, 2, 4]);
    let a = RecurrentAttrs { batch_first: false, has_bias: false, ..RecurrentAttrs::new(4) };
    let (y, h) = b.gru(x, &ws, Some(h0), a).unwrap();
    assert_eq!((dims(&b, y), dims(&b, h)), (vec![5, 2, 4], vec![1, 2, 4]));
    let h0_bad = inp(&mut b, "hb", DType::F32, &[1, 5, 4]);
    fails(b.gru(x, &ws, Some(h0_bad), a), ErrorKind::Shape);
}

#[test]
fn lstm_with_initial_state() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[2, 5, 3]);
    let ws = cell_weights(&mut b, "", 4, 6, 3, (1, 2), true);
    let (h0, c0) = (inp(&mut b, "h0", DType::F32, &[2, 2, 6]), inp(&mut b, "c0", DType::F32, &[2, 2, 6]));
    let a = RecurrentAttrs { bidirectional: true, ..RecurrentAttrs::new(6) };
    let (y, h, c) = b.lstm(x, &ws, Some((h0, c0)), a).unwrap();
    assert_eq!((dims(&b, y), dims(&b, h), dims(&b, c)), (vec![2, 5, 12], vec![2, 2, 6], vec![2, 2, 6]));
    // a GRU's weights are too short for an LSTM
    let gru_ws = cell_weights(&mut b, "gru", 3, 6, 3, (1, 2), true);
    fails(b.lstm(x, &gru_ws, None, a), ErrorKind::Shape);
    let mut ins = vec![x];
    ins.extend(&ws);
    ins.push(h0);
    fails(b.add(Op::Lstm(RecurrentAttrs { has_initial_state: true, ..a }), &ins), ErrorKind::Arity);
}

#[test]
fn selective_scan_and_mamba2() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[2, 6, 4]);
    let a = inp(&mut b, "a", DType::F32, &[4, 3]);
    let bc = inp(&mut b, "bc", DType::F32, &[2, 6, 3]);
    let h0 = inp(&mut b, "h0", DType::F32, &[2, 4, 3]);
    let (y, h) = b.selective_scan(x, x, a, bc, bc, Some(h0)).unwrap();
    assert_eq!((dims(&b, y), dims(&b, h)), (vec![2, 6, 4], vec![2, 4, 3]));
    fails(b.selective_scan(x, x, h0, bc, bc, None), ErrorKind::Shape);
    let a16 = inp(&mut b, "a16", DType::F16, &[4, 3]);
    fails(b.selective_scan(x, x, a16, bc, bc, None), ErrorKind::DType);

    let xm = inp(&mut b, "xm", DType::BF16, &[2, 6, 3, 5]);
    let dtm = inp(&mut b, "dt", DType::BF16, &[2, 6, 3]);
    let am = inp(&mut b, "am", DType::BF16, &[3]);
    let bm = inp(&mut b, "bm", DType::BF16, &[2, 6, 3, 4]);
    let (ym, st) = b.mamba2(xm, dtm, am, bm, bm, None).unwrap();
    assert_eq!((dims(&b, ym), dims(&b, st), dt(&b, st)), (vec![2, 6, 3, 5], vec![2, 3, 5, 4], DType::BF16));
    fails(b.mamba2(xm, dtm, dtm, bm, bm, None), ErrorKind::Shape);
    let s0 = inp(&mut b, "s0", DType::BF16, &[2, 3, 4, 5]);
    fails(b.mamba2(xm, dtm, am, bm, bm, Some(s0)), ErrorKind::Shape);
    let x32 = inp(&mut b, "x32", DType::F32, &[2, 6, 3, 5]);
    fails(b.mamba2(x32, dtm, am, bm, bm, None), ErrorKind::DType);
}

#[test]
fn gated_delta_net_and_errors() {
    let mut b = GraphBuilder::new();
    let q = inp(&mut b, "q", DType::F32, &[2, 6, 3, 8]);
    let v = inp(&mut b, "v", DType::F32, &[2, 6, 3, 5]);
    let g3 = inp(&mut b, "g3", DType::F32, &[2, 6, 3]);
    let (o, s) = b.gated_delta_net((q, q, v), g3, g3, None, None).unwrap();
    assert_eq!((dims(&b, o), dims(&b, s)), (vec![2, 6, 3, 5], vec![2, 3, 8, 5]));
    let s0 = inp(&mut b, "s0", DType::F32, &[2, 3, 8, 5]);
    let (o4, _) = b.gated_delta_net((q, q, v), q, g3, Some(s0), Some(0.5)).unwrap();
    assert_eq!(dims(&b, o4), [2, 6, 3, 5]);
    let g2 = inp(&mut b, "g2", DType::F32, &[2, 6]);
    fails(b.gated_delta_net((q, q, v), g2, g3, None, None), ErrorKind::Shape);
    fails(b.gated_delta_net((q, q, v), g3, g3, None, Some(f32::INFINITY)), ErrorKind::Attribute);
    fails(b.gated_delta_net((q, v, v), g3, g3, None, None), ErrorKind::Shape);
    let b16 = inp(&mut b, "b16", DType::F16, &[2, 6, 3]);
    fails(b.gated_delta_net((q, q, v), g3, b16, None, None), ErrorKind::DType);
}

/// Body: `(h, w, x) -> (h + w·x, h)`.
fn scan_body() -> Graph {
    let mut b = GraphBuilder::new();
    let h = inp(&mut b, "h", DType::F32, &[4]);
    let w = inp(&mut b, "w", DType::F32, &[4]);
    let x = inp(&mut b, "x", DType::F32, &[4]);
    let wx = b.binary(BinaryOp::Mul, w, x).unwrap();
    let h2 = b.binary(BinaryOp::Add, h, wx).unwrap();
    finish(b, &[h2, h])
}

/// Body: `(h, w, x) -> (F16(h), h)`: the carry changes dtype.
fn bad_body() -> Graph {
    let mut b = GraphBuilder::new();
    let h = inp(&mut b, "h", DType::F32, &[4]);
    inp(&mut b, "w", DType::F32, &[4]);
    inp(&mut b, "x", DType::F32, &[4]);
    let h16 = b.cast(h, DType::F16).unwrap();
    finish(b, &[h16, h])
}

#[test]
fn scan_and_errors() {
    let mut b = GraphBuilder::new();
    let h = inp(&mut b, "h0", DType::F32, &[4]);
    let w = inp(&mut b, "w", DType::F32, &[4]);
    let xs = inp(&mut b, "xs", DType::F32, &[7, 4]);
    let outs = b.scan(scan_body(), 7, true, (&[h], &[w], &[xs]), true).unwrap();
    let got: Vec<Vec<usize>> = outs.iter().map(|&o| dims(&b, o)).collect();
    assert_eq!(got, [vec![4], vec![7, 4], vec![7, 4]]);
    let outs = b.scan(scan_body(), 7, false, (&[h], &[w], &[xs]), false).unwrap();
    assert_eq!(outs.len(), 2);
    fails(b.scan(scan_body(), 6, false, (&[h], &[w], &[xs]), false), ErrorKind::Shape);
    fails(b.scan(scan_body(), 7, false, (&[h], &[], &[xs]), false), ErrorKind::Subgraph);
    let h5 = inp(&mut b, "h5", DType::F32, &[5]);
    fails(b.scan(scan_body(), 7, false, (&[h5], &[w], &[xs]), false), ErrorKind::Subgraph);
    let hi = inp(&mut b, "hi", DType::I32, &[4]);
    fails(b.scan(scan_body(), 7, false, (&[hi], &[w], &[xs]), false), ErrorKind::Subgraph);
    // a body whose new carry has another dtype than the carry
    fails(b.scan(bad_body(), 7, false, (&[h], &[w], &[xs]), false), ErrorKind::Subgraph);
    let a = backend_api::op::ScanAttrs {
        body: scan_body(),
        length: 7,
        reverse: false,
        num_carry: 1,
        num_bcast: 1,
        num_xs: 1,
        save_trajectory: false,
    };
    fails(b.add(Op::Scan(a), &[h, w]), ErrorKind::Arity);
    let g = finish(b, &[outs[0], outs[1]]);
    assert_eq!(g.node(outs[0].node).unwrap().op.subgraphs().len(), 1);
}

#[test]
fn recurrent_symbolic_batch_and_sequence() {
    use backend_api::Dim;
    let mut b = GraphBuilder::new();
    let x = crate::sym(&mut b, "x", DType::F32, vec![Dim::from("b"), Dim::from("s"), 3.into()]);
    let ws = cell_weights(&mut b, "", 3, 4, 3, (1, 1), true);
    let (y, h) = b.gru(x, &ws, None, RecurrentAttrs::new(4)).unwrap();
    assert_eq!(b.value_type(y).unwrap().shape.0, vec![Dim::from("b"), Dim::from("s"), 4.into()]);
    assert_eq!(b.value_type(h).unwrap().shape.0, vec![1.into(), Dim::from("b"), 4.into()]);
}
