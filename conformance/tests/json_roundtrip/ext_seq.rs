//! Random builders of the sequence-model and signal ops without a conformance generator
//! (§2.10, §2.11, §2.16.4), and of symbolic `Reshape` targets.

use crate::ctx::{Build, Ctx};
use backend_api::op::{DimSpec, FftNorm, FloorScope, Op, RecurrentAttrs, RnnNonlinearity, UnaryOp};
use backend_api::{DType, Dim, Graph, GraphBuilder, Result, Shape, Value};

/// Name and builder of every op family here.
pub const BUILDERS: &[(&str, Build)] = &[
    ("Rnn", |c| recurrent(c, 0)),
    ("Gru", |c| recurrent(c, 1)),
    ("Lstm", |c| recurrent(c, 2)),
    ("SelectiveScan", selective_scan),
    ("Mamba2", mamba2),
    ("GatedDeltaNet", gated_delta_net),
    ("Scan", scan),
    ("Fft", fft),
    ("LogMel", |c| log_mel(c, false)),
    ("LogMelBackward", |c| log_mel(c, true)),
    ("WelchPeaks", welch_peaks),
    ("Reshape (symbolic)", symbolic_reshape),
];

/// `Rnn` (`cell` 0), `Gru` (1) or `Lstm` (2) with random sizes, layers, directions, bias and
/// initial state.
fn recurrent(c: &mut Ctx, cell: usize) -> Result<Vec<Value>> {
    let d = c.dtype("Rnn");
    let gates = [1, 3, 4][cell];
    let (h, input, b, s) = (c.size(1, 4), c.size(1, 4), c.size(1, 2), c.size(1, 4));
    let a = RecurrentAttrs {
        num_layers: c.size(1, 2) as u32,
        bidirectional: c.flip(),
        batch_first: c.flip(),
        has_bias: c.flip(),
        nonlinearity: c.pick(&[RnnNonlinearity::Tanh, RnnNonlinearity::Relu]),
        linear_before_reset: c.flip(),
        ..RecurrentAttrs::new(h as u32)
    };
    let dirs = a.num_directions();
    let x = if a.batch_first { c.leaf(d, &[b, s, input])? } else { c.leaf(d, &[s, b, input])? };
    let mut ws = Vec::new();
    for l in 0..a.num_layers as usize {
        let in_l = if l == 0 { input } else { dirs * h };
        for _ in 0..dirs {
            ws.push(c.leaf(d, &[gates * h, in_l])?);
            ws.push(c.leaf(d, &[gates * h, h])?);
            if a.has_bias {
                ws.push(c.leaf(d, &[gates * h])?);
                ws.push(c.leaf(d, &[gates * h])?);
            }
        }
    }
    let state = [a.num_layers as usize * dirs, b, h];
    let h0 = if c.flip() { Some(c.leaf(d, &state)?) } else { None };
    Ok(match cell {
        0 => {
            let (y, hn) = c.b.rnn(x, &ws, h0, a)?;
            vec![y, hn]
        }
        1 => {
            let (y, hn) = c.b.gru(x, &ws, h0, a)?;
            vec![y, hn]
        }
        _ => {
            let initial = match h0 {
                Some(h0) => Some((h0, c.leaf(d, &state)?)),
                None => None,
            };
            let (y, hn, cn) = c.b.lstm(x, &ws, initial, a)?;
            vec![y, hn, cn]
        }
    })
}

fn selective_scan(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("SelectiveScan");
    let (b, s, ch, n) = (c.size(1, 2), c.size(1, 4), c.size(1, 4), c.size(1, 3));
    let x = c.leaf(d, &[b, s, ch])?;
    let delta = c.leaf(d, &[b, s, ch])?;
    let a = c.leaf(d, &[ch, n])?;
    let bm = c.leaf(d, &[b, s, n])?;
    let cm = c.leaf(d, &[b, s, n])?;
    let h0 = if c.flip() { Some(c.leaf(d, &[b, ch, n])?) } else { None };
    let (y, h) = c.b.selective_scan(x, delta, a, bm, cm, h0)?;
    Ok(vec![y, h])
}

fn mamba2(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("Mamba2");
    let (b, s, h, p, n) = (c.size(1, 2), c.size(1, 4), c.size(1, 3), c.size(1, 3), c.size(1, 3));
    let x = c.leaf(d, &[b, s, h, p])?;
    let dt = c.leaf(d, &[b, s, h])?;
    let a = c.leaf(d, &[h])?;
    let bm = c.leaf(d, &[b, s, h, n])?;
    let cm = c.leaf(d, &[b, s, h, n])?;
    let s0 = if c.flip() { Some(c.leaf(d, &[b, h, p, n])?) } else { None };
    let (y, st) = c.b.mamba2(x, dt, a, bm, cm, s0)?;
    Ok(vec![y, st])
}

fn gated_delta_net(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("GatedDeltaNet");
    let (b, s, h, dk, dv) = (c.size(1, 2), c.size(1, 4), c.size(1, 3), c.size(1, 4), c.size(1, 4));
    let q = c.leaf(d, &[b, s, h, dk])?;
    let k = c.leaf(d, &[b, s, h, dk])?;
    let v = c.leaf(d, &[b, s, h, dv])?;
    let g = c.leaf(d, &[b, s, h])?;
    let beta = c.leaf(d, &[b, s, h])?;
    let s0 = if c.flip() { Some(c.leaf(d, &[b, h, dk, dv])?) } else { None };
    let scale = c.maybe(Ctx::finite);
    let (o, st) = c.b.gated_delta_net((q, k, v), g, beta, s0, scale)?;
    Ok(vec![o, st])
}

/// A body `(h, w, x) → (h ∘ (w ∘ x), f(h))` over `[width]` tensors of `dtype`, with random
/// binary ops `∘` and a random unary `f`.
fn scan_body(c: &mut Ctx, dtype: DType, width: usize) -> Result<Graph> {
    let mut b = GraphBuilder::new();
    let h = b.input("h", dtype, [width])?;
    let w = b.input("w", dtype, [width])?;
    let x = b.input("x", dtype, [width])?;
    let ops = [backend_api::op::BinaryOp::Add, backend_api::op::BinaryOp::Mul, backend_api::op::BinaryOp::Max];
    let (o1, o2) = (c.pick(&ops), c.pick(&ops));
    let wx = b.binary(o1, w, x)?;
    let h2 = b.binary(o2, h, wx)?;
    let f = c.pick(&[UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Tanh]);
    let y = b.unary(f, h)?;
    b.output(h2)?;
    b.output(y)?;
    b.build()
}

fn scan(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.pick(&[DType::F32, DType::F16, DType::F64]);
    let (width, length) = (c.size(1, 4), c.size(1, 6));
    let body = scan_body(c, d, width)?;
    let h = c.leaf(d, &[width])?;
    let w = c.leaf(d, &[width])?;
    let xs = c.leaf(d, &[length, width])?;
    let (reverse, trajectory) = (c.flip(), c.flip());
    c.b.scan(body, length as u64, reverse, (&[h], &[w], &[xs]), trajectory)
}

fn fft(c: &mut Ctx) -> Result<Vec<Value>> {
    let n = c.size(1, 9);
    let x = if c.flip() {
        c.input(DType::C64, vec![Dim::from("frames"), Dim::Static(n)])?
    } else {
        let dims: Vec<usize> = vec![c.size(1, 3), n];
        c.leaf(DType::C64, &dims)?
    };
    let (inverse, norm) = (c.flip(), c.pick(&[FftNorm::Backward, FftNorm::Forward, FftNorm::Ortho]));
    Ok(vec![c.b.fft(x, inverse, norm)?])
}

/// `LogMelBackward` (`backward`) or `LogMel` of `[frames, n_fft]` with random sizes and floor scope.
fn log_mel(c: &mut Ctx, backward: bool) -> Result<Vec<Value>> {
    let (frames, n_fft, mels) = (c.size(1, 4), c.size(1, 10), c.size(1, 5));
    let spec = c.leaf(DType::C64, &[frames, n_fft])?;
    let filters = c.leaf(DType::F32, &[mels, n_fft / 2 + 1])?;
    let scope = c.pick(&[FloorScope::Frame, FloorScope::Spectrogram]);
    if !backward {
        return Ok(vec![c.b.log_mel(spec, filters, scope)?]);
    }
    let dy = c.leaf(DType::F32, &[frames, mels])?;
    Ok(vec![c.b.log_mel_backward(spec, filters, dy, scope)?])
}

fn welch_peaks(c: &mut Ctx) -> Result<Vec<Value>> {
    let n_fft = c.size(1, 12);
    let dims: Vec<usize> = vec![c.size(1, 2), c.size(1, 3), n_fft];
    let x = c.leaf(DType::C64, &dims)?;
    let k = c.size(1, n_fft / 2 + 1) as u32;
    let index = c.pick(&[DType::I32, DType::I64]);
    let (bins, power) = c.b.welch_peaks(x, k, index)?;
    Ok(vec![bins, power])
}

/// `Reshape` to targets with symbols (kept symbolic) and with `Infer` (-1) on a static input.
fn symbolic_reshape(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("Reshape");
    let (m, n) = (c.size(1, 4), c.size(1, 4));
    let x = c.input(d, vec![Dim::from("batch"), Dim::Static(m * n)])?;
    let target = vec![DimSpec::Sym("batch".into()), DimSpec::Static(m), DimSpec::Static(n)];
    let r = c.b.add1(Op::Reshape { new_shape: target }, &[x])?;
    let y = c.b.input("y", d, Shape::of(&[m, n, 2]))?;
    let infer_at = c.size(0, 2);
    let target: Vec<i64> = (0..3).map(|i| if i == infer_at { -1 } else { [m, n, 2][i] as i64 }).collect();
    let ry = c.b.reshape(y, &target)?;
    Ok(vec![r, ry])
}
