//! Control flow end to end, picked by registry name: a greedy decode loop written as one `While`
//! and an Elman RNN written as one `Scan` (forward, reverse, with and without the trajectory).
//!
//! Each model is also computed without control flow — the decode by a host simulation in f64
//! that knows every step's argmax margin, the RNN unrolled into a plain graph of `T` cells — so
//! that `cpu-ref` is checked against an independent oracle before it serves as the one for `wgpu`.
//! The `cpu-ref` tests run in every build; the `wgpu` ones (feature `wgpu`) run the same graphs on
//! `wgpu` and compare with `cpu-ref`: tokens exactly, RNN states inside the Approx class.
//! Counting loops with bodies of every length from 1 to 40 ops check that a `While` is not cut
//! short wherever its condition's evaluation falls in the iteration's work.
//! Shapes are tiny because CI runs `wgpu` on lavapipe.

use backend_api::op::{BinaryOp, CompareOp, ReduceOp, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor, Value};
use conformance::rng::Rng;

use backend_cpu_ref as _;
#[cfg(feature = "wgpu")]
use backend_wgpu as _;

/// A named tensor fed to a run (an input) or set before it (a param).
type Feed<'a> = (&'a str, &'a Tensor);

/// Compiles `graph` on the backend registered as `backend`, sets `params`, runs once with
/// `inputs`. Errors carry the backend's name (an `Unsupported` at compile says which op is missing).
fn run_on(backend: &str, graph: &Graph, params: &[Feed], inputs: &[Feed]) -> Vec<Tensor> {
    let go = || -> backend_api::Result<Vec<Tensor>> {
        let mut exe = backend_api::create(backend)?.compile(graph, &Default::default())?;
        for (name, t) in params {
            exe.set_param(name, t.view())?;
        }
        let views: Vec<_> = inputs.iter().map(|(name, t)| (*name, t.view())).collect();
        exe.run(&views)
    };
    go().unwrap_or_else(|e| panic!("{backend}: {e}"))
}

fn i32s(t: &Tensor) -> Vec<i32> {
    t.to_vec().unwrap()
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Greedy decode as one While
// ---------------------------------------------------------------------------------------------

/// Vocabulary size, embedding width, and the decode budget (the token buffer's length).
const V: usize = 8;
const D: usize = 16;
const N: usize = 8;
/// The end token: generating it stops the loop.
const END: i32 = 0;
/// The token each token should be followed by: 5 → 3 → 7 → END, and the cycle
/// 1 → 2 → 6 → 4 → 1 that never reaches END (so that loop runs all `N` steps).
const NEXT: [usize; V] = [0, 2, 6, 7, 1, 3, 4, 0];
/// A start token whose chain reaches END in 3 steps, and one whose chain never does.
const ENDING_START: i32 = 5;
const ENDLESS_START: i32 = 2;

/// Row `k` of the 16×16 Sylvester–Hadamard matrix: ±1 codes, orthogonal for distinct `k`.
fn code(k: usize) -> [f32; D] {
    std::array::from_fn(|j| if (k & j).count_ones().is_multiple_of(2) { 1.0 } else { -1.0 })
}

/// The decoder's weights: `emb` [V, D] and `w` [D, V], row-major.
struct Decoder {
    emb: Vec<f32>,
    w: Vec<f32>,
}

impl Decoder {
    /// Embeds token `t` near `2·code(NEXT[t])` and scores token `j` by the correlation with
    /// `code(j)`: the logit of `NEXT[t]` is about tanh(2) ≈ 0.96, the others about 0, so every
    /// argmax wins by a wide margin and both backends must pick the same token. The noise keeps
    /// the weights from being trivially structured.
    fn new(seed: u64) -> Decoder {
        let mut rng = Rng::new(seed);
        let mut noise = |scale: f64| (rng.uniform(-scale, scale)) as f32;
        let emb = (0..V).flat_map(|t| code(NEXT[t]).map(|c| 2.0 * c)).map(|x| x + noise(0.2)).collect();
        let w = (0..D).flat_map(|k| (0..V).map(move |j| code(j)[k] / D as f32)).map(|x| x + noise(0.01)).collect();
        Decoder { emb, w }
    }

    fn emb_tensor(&self) -> Tensor {
        Tensor::from_slice(&[V, D], &self.emb).unwrap()
    }

    /// The greedy successor of `tok` and its margin over the runner-up, in f64 on the host.
    fn step(&self, tok: usize) -> (usize, f64) {
        let h: Vec<f64> = self.emb[tok * D..(tok + 1) * D].iter().map(|&x| f64::from(x).tanh()).collect();
        let logits: Vec<f64> = (0..V).map(|j| (0..D).map(|k| h[k] * f64::from(self.w[k * V + j])).sum()).collect();
        let best = (0..V).fold(0, |b, j| if logits[j] > logits[b] { j } else { b });
        let runner_up = (0..V).filter(|&j| j != best).map(|j| logits[j]).fold(f64::NEG_INFINITY, f64::max);
        (best, logits[best] - runner_up)
    }
}

/// The loop's final values: step count, last token, token buffer (−1 where nothing was
/// written), and whether END was generated.
#[derive(Debug, PartialEq)]
struct Decoded {
    steps: i32,
    tok: i32,
    buf: Vec<i32>,
    done: bool,
}

impl Decoded {
    fn from_outputs(out: &[Tensor]) -> Decoded {
        assert_eq!(out.len(), 4, "the While returns its four loop values");
        let done: Vec<bool> = out[3].to_vec().unwrap();
        Decoded { steps: i32s(&out[0])[0], tok: i32s(&out[1])[0], buf: i32s(&out[2]), done: done[0] }
    }
}

/// The decode loop of the While's semantics on the host: at most `max_iterations` bodies,
/// stopping when `N` tokens were written or END was generated. Asserts every argmax margin so a
/// backend's rounding cannot flip a token.
fn simulate(dec: &Decoder, start: i32, max_iterations: u64) -> Decoded {
    let mut d = Decoded { steps: 0, tok: start, buf: vec![-1; N], done: false };
    while (d.steps as u64) < max_iterations && (d.steps as usize) < N && !d.done {
        let (next, margin) = dec.step(d.tok as usize);
        assert!(margin > 0.5, "token {} → {next} wins by only {margin}", d.tok);
        d.buf[d.steps as usize] = next as i32;
        (d.tok, d.done, d.steps) = (next as i32, next as i32 == END, d.steps + 1);
    }
    d
}

/// The loop values' declared inputs, in order: `i` I32 [], `tok` I32 [1], `buf` I32 [N],
/// `done` Bool [].
fn loop_inputs(g: &mut GraphBuilder) -> [Value; 4] {
    [
        g.input("i", DType::I32, Vec::<usize>::new()).unwrap(),
        g.input("tok", DType::I32, vec![1]).unwrap(),
        g.input("buf", DType::I32, vec![N]).unwrap(),
        g.input("done", DType::Bool, Vec::<usize>::new()).unwrap(),
    ]
}

/// `i < N and not done`.
fn decode_cond() -> Graph {
    let mut g = GraphBuilder::new();
    let [i, _tok, _buf, done] = loop_inputs(&mut g);
    let n = g.constant(&Tensor::scalar(N as i32)).unwrap();
    let room = g.compare(CompareOp::Lt, i, n).unwrap();
    let going = g.unary(UnaryOp::Not, done).unwrap();
    let c = g.binary(BinaryOp::And, room, going).unwrap();
    g.output(c).unwrap();
    g.build().unwrap()
}

/// One greedy step: logits = tanh(emb[tok]) · w (`emb` a Param the body declares, `w` a
/// Constant), the argmax written at position `i` of the buffer by a one-hot Where.
fn decode_body(dec: &Decoder) -> Graph {
    let mut g = GraphBuilder::new();
    let [i, tok, buf, _done] = loop_inputs(&mut g);
    let emb = g.param("emb", DType::F32, &[V, D]).unwrap();
    let w = g.constant(&Tensor::from_slice(&[D, V], &dec.w).unwrap()).unwrap();
    let x = g.gather(emb, tok, 0).unwrap();
    let h = g.unary(UnaryOp::Tanh, x).unwrap();
    let logits = g.matmul(h, w).unwrap();
    let next = g.arg_max(logits, 1, false, DType::I32).unwrap();
    let positions: Vec<i32> = (0..N as i32).collect();
    let positions = g.constant(&Tensor::from_slice(&[N], &positions).unwrap()).unwrap();
    let here = g.compare(CompareOp::Eq, positions, i).unwrap();
    let buf = g.where_(here, next, buf).unwrap();
    let end = g.constant(&Tensor::scalar(END)).unwrap();
    let hit = g.compare(CompareOp::Eq, next, end).unwrap();
    let done = g.reshape(hit, &[]).unwrap();
    let one = g.constant(&Tensor::scalar(1i32)).unwrap();
    let i = g.binary(BinaryOp::Add, i, one).unwrap();
    for v in [i, next, buf, done] {
        g.output(v).unwrap();
    }
    g.build().unwrap()
}

/// The whole decode: Input `start` I32 [1], the loop from step 0 with an empty buffer; outputs
/// the four final loop values.
fn decode_graph(dec: &Decoder, max_iterations: u64) -> Graph {
    let mut g = GraphBuilder::new();
    let start = g.input("start", DType::I32, vec![1]).unwrap();
    let i0 = g.constant(&Tensor::scalar(0i32)).unwrap();
    let buf0 = g.constant(&Tensor::from_slice(&[N], &[-1i32; N]).unwrap()).unwrap();
    let done0 = g.constant(&Tensor::scalar(false)).unwrap();
    let outs = g.while_(&[i0, start, buf0, done0], decode_cond(), decode_body(dec), max_iterations).unwrap();
    for o in outs {
        g.output(o).unwrap();
    }
    g.build().unwrap()
}

/// Runs the decode from `start` in one `run` on `backend`.
fn decode_on(backend: &str, dec: &Decoder, start: i32, max_iterations: u64) -> Decoded {
    let start = Tensor::from_slice(&[1], &[start]).unwrap();
    let emb = dec.emb_tensor();
    Decoded::from_outputs(&run_on(backend, &decode_graph(dec, max_iterations), &[("emb", &emb)], &[("start", &start)]))
}

/// The decode cases: (start token, max_iterations). The budget is above `N` in the first two so
/// that the condition ends the loop (END, or the buffer full); the third stops at
/// `max_iterations` before either.
const DECODE_CASES: [(i32, u64); 3] = [(ENDING_START, N as u64 + 4), (ENDLESS_START, N as u64 + 4), (ENDLESS_START, 3)];

/// The host simulation's expectations also pin what each case exercises, so a change of
/// weights cannot silently drop the END case or the full-buffer case.
#[test]
fn decode_cases_cover_end_token_full_buffer_and_budget() {
    let dec = Decoder::new(1);
    let ending = simulate(&dec, ENDING_START, N as u64 + 4);
    assert_eq!(ending, Decoded { steps: 3, tok: END, buf: vec![3, 7, END, -1, -1, -1, -1, -1], done: true });
    let endless = simulate(&dec, ENDLESS_START, N as u64 + 4);
    assert_eq!(endless, Decoded { steps: N as i32, tok: 2, buf: vec![6, 4, 1, 2, 6, 4, 1, 2], done: false });
    assert_eq!(simulate(&dec, ENDLESS_START, 3).steps, 3);
}

#[test]
fn decode_while_on_cpu_ref_matches_host_simulation() {
    for seed in [1, 2] {
        let dec = Decoder::new(seed);
        for (start, max_it) in DECODE_CASES {
            let want = simulate(&dec, start, max_it);
            assert_eq!(decode_on("cpu-ref", &dec, start, max_it), want, "seed {seed} start {start} max {max_it}");
        }
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn decode_while_on_wgpu_matches_cpu_ref() {
    for seed in [1, 2] {
        let dec = Decoder::new(seed);
        for (start, max_it) in DECODE_CASES {
            let want = decode_on("cpu-ref", &dec, start, max_it);
            assert_eq!(decode_on("wgpu", &dec, start, max_it), want, "seed {seed} start {start} max {max_it}");
        }
    }
}

/// The loop condition `i < 8`, computed by one comparison, or (`reduced`) as `all(i < [8, 9])`:
/// a reduction writes the condition, which a backend may do in more than one step (zero the
/// output, then combine into it).
fn below_eight(reduced: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let [i, _x] = counter_leaves(&mut g);
    let c = if reduced {
        let n = g.constant(&Tensor::from_slice(&[2], &[8i32, 9]).unwrap()).unwrap();
        let each = g.compare(CompareOp::Lt, i, n).unwrap();
        g.reduce(ReduceOp::Min, each, &[0], false).unwrap()
    } else {
        let n = g.constant(&Tensor::scalar(8i32)).unwrap();
        g.compare(CompareOp::Lt, i, n).unwrap()
    };
    g.output(c).unwrap();
    g.build().unwrap()
}

/// The declared inputs of [`negating_loop`]'s graphs: `i` I32 [], `x` F32 [4].
fn counter_leaves(g: &mut GraphBuilder) -> [Value; 2] {
    [g.input("i", DType::I32, Vec::<usize>::new()).unwrap(), g.input("x", DType::F32, vec![4]).unwrap()]
}

/// A counting loop `(i, x) → (i + 1, −…−x)` whose body negates `x` `k` times, to 8.
fn negating_loop(k: usize, reduced: bool) -> Graph {
    let body = {
        let mut g = GraphBuilder::new();
        let [i, mut x] = counter_leaves(&mut g);
        for _ in 0..k {
            x = g.unary(UnaryOp::Neg, x).unwrap();
        }
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i = g.binary(BinaryOp::Add, i, one).unwrap();
        g.output(i).unwrap();
        g.output(x).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i0 = g.constant(&Tensor::scalar(0i32)).unwrap();
    let x0 = g.constant(&Tensor::from_slice(&[4], &[1.0f32, -2.0, 3.0, -4.0]).unwrap()).unwrap();
    for o in g.while_(&[i0, x0], below_eight(reduced), body, 12).unwrap() {
        g.output(o).unwrap();
    }
    g.build().unwrap()
}

/// The oracle for the next test: every loop runs 8 bodies, negating `x` an even number of times.
#[test]
fn while_of_every_body_length_on_cpu_ref_counts_to_eight() {
    for reduced in [false, true] {
        for k in 1..=40 {
            let out = run_on("cpu-ref", &negating_loop(k, reduced), &[], &[]);
            assert_eq!((i32s(&out[0]), f32s(&out[1])), (vec![8], vec![1.0, -2.0, 3.0, -4.0]), "k {k} {reduced}");
        }
    }
}

/// The decode body above is long enough that a backend may split one iteration's work into
/// several pieces, each deciding from the condition whether to run. A piece that decides after
/// the iteration began rewriting the condition (to evaluate it for the next iteration) sees a
/// half-written value and stops the loop early. Bodies of every length from 1 to 40 ops place
/// the condition's evaluation at every offset of such a split, for a condition written by one
/// op and by two; each loop must still count to 8.
#[cfg(feature = "wgpu")]
#[test]
fn while_of_every_body_length_on_wgpu_counts_like_cpu_ref() {
    let mut bad = Vec::new();
    for reduced in [false, true] {
        for k in 1..=40 {
            let g = negating_loop(k, reduced);
            let (got, want) = (run_on("wgpu", &g, &[], &[]), run_on("cpu-ref", &g, &[], &[]));
            if got != want {
                bad.push(format!(
                    "body of {k} ops, reduced condition {reduced}: i = {:?}, want {:?}",
                    i32s(&got[0]),
                    i32s(&want[0])
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Elman RNN as one Scan
// ---------------------------------------------------------------------------------------------

/// Batch, input width, hidden width, steps.
const B: usize = 2;
const I: usize = 3;
const H: usize = 5;
const T: usize = 5;

/// The scan's forms: (reverse, save_trajectory).
const RNN_FORMS: [(bool, bool); 4] = [(false, false), (false, true), (true, false), (true, true)];

/// The RNN's data: weights `w_ih` [I, H], `w_hh` [H, H], `b` [H] (params), `h0` [B, H] and
/// `xs` [T, B, I] (inputs).
struct RnnData {
    w_ih: Tensor,
    w_hh: Tensor,
    b: Tensor,
    h0: Tensor,
    xs: Tensor,
}

impl RnnData {
    /// Uniform values; the recurrent weights scaled by 1/√H so the state neither saturates nor
    /// vanishes over `T` steps (a saturated tanh would hide errors).
    fn new(seed: u64) -> RnnData {
        let mut rng = Rng::new(seed);
        let mut t = |shape: &[usize], scale: f64| {
            let n = shape.iter().product();
            let v: Vec<f32> = (0..n).map(|_| rng.uniform(-scale, scale) as f32).collect();
            Tensor::from_slice(shape, &v).unwrap()
        };
        let s = 1.0 / (H as f64).sqrt();
        RnnData {
            w_ih: t(&[I, H], 1.0),
            w_hh: t(&[H, H], 1.5 * s),
            b: t(&[H], 0.3),
            h0: t(&[B, H], 0.5),
            xs: t(&[T, B, I], 1.0),
        }
    }

    fn params(&self) -> [Feed<'_>; 3] {
        [("w_ih", &self.w_ih), ("w_hh", &self.w_hh), ("b", &self.b)]
    }

    fn inputs(&self) -> [Feed<'_>; 2] {
        [("h0", &self.h0), ("xs", &self.xs)]
    }
}

/// `tanh(x·W_ih + h·W_hh + b)`: the one cell both forms apply, op for op, so that a backend that
/// evaluates the scan's body like the same ops in a plain graph gives the same bits.
fn elman_cell(g: &mut GraphBuilder, h: Value, x: Value, [w_ih, w_hh, b]: [Value; 3]) -> Value {
    let xw = g.matmul(x, w_ih).unwrap();
    let hw = g.matmul(h, w_hh).unwrap();
    let s = g.binary(BinaryOp::Add, xw, hw).unwrap();
    let s = g.binary(BinaryOp::Add, s, b).unwrap();
    g.unary(UnaryOp::Tanh, s).unwrap()
}

/// The leaves both forms start from: inputs `h0`, `xs` and params `w_ih`, `w_hh`, `b`.
fn rnn_leaves(g: &mut GraphBuilder) -> (Value, Value, [Value; 3]) {
    let h0 = g.input("h0", DType::F32, vec![B, H]).unwrap();
    let xs = g.input("xs", DType::F32, vec![T, B, I]).unwrap();
    let w = [
        g.param("w_ih", DType::F32, &[I, H]).unwrap(),
        g.param("w_hh", DType::F32, &[H, H]).unwrap(),
        g.param("b", DType::F32, &[H]).unwrap(),
    ];
    (h0, xs, w)
}

/// The scan body: carry `h`, broadcast weights, step slice `x` [B, I]; returns `h'` as the new
/// carry and as the per-step value.
fn rnn_body() -> Graph {
    let mut g = GraphBuilder::new();
    let h = g.input("h", DType::F32, vec![B, H]).unwrap();
    let w = [
        g.input("w_ih", DType::F32, vec![I, H]).unwrap(),
        g.input("w_hh", DType::F32, vec![H, H]).unwrap(),
        g.input("b", DType::F32, vec![H]).unwrap(),
    ];
    let x = g.input("x", DType::F32, vec![B, I]).unwrap();
    let h = elman_cell(&mut g, h, x, w);
    g.output(h).unwrap();
    g.output(h).unwrap();
    g.build().unwrap()
}

/// The RNN as one Scan; outputs the final state, `ys` [T, B, H] and, with the trajectory, the
/// stacked states [T, B, H].
fn rnn_scan_graph(reverse: bool, trajectory: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let (h0, xs, w) = rnn_leaves(&mut g);
    for o in g.scan(rnn_body(), T as u64, reverse, (&[h0], &w, &[xs]), trajectory).unwrap() {
        g.output(o).unwrap();
    }
    g.build().unwrap()
}

/// The same RNN unrolled: `T` cells on the rows of `xs` in scan order, each step's state
/// stored at its own row `t` (also when reversed), the stack made by Concat; the stack is output
/// again in place of the trajectory, which equals `ys` here.
fn rnn_unrolled_graph(reverse: bool, trajectory: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let (mut h, xs, w) = rnn_leaves(&mut g);
    let mut rows: Vec<Option<Value>> = vec![None; T];
    for s in 0..T {
        let t = if reverse { T - 1 - s } else { s };
        let row = g.narrow(xs, 0, t as i64, 1, 1).unwrap();
        let x = g.reshape(row, &[B as i64, I as i64]).unwrap();
        h = elman_cell(&mut g, h, x, w);
        rows[t] = Some(g.reshape(h, &[1, B as i64, H as i64]).unwrap());
    }
    let rows: Vec<Value> = rows.into_iter().map(Option::unwrap).collect();
    let ys = g.concat(&rows, 0).unwrap();
    g.output(h).unwrap();
    g.output(ys).unwrap();
    if trajectory {
        g.output(ys).unwrap();
    }
    g.build().unwrap()
}

/// Runs `graph` on `backend` with the RNN's params and inputs.
fn rnn_on(backend: &str, graph: &Graph, data: &RnnData) -> Vec<Tensor> {
    run_on(backend, graph, &data.params(), &data.inputs())
}

/// The outputs' dtypes and shapes match and every element satisfies
/// `|got − want| ≤ tol·(1 + |want|)`; `tol = 0` asks for identical bits.
fn assert_close(label: &str, got: &[Tensor], want: &[Tensor], tol: f32) {
    assert_eq!(got.len(), want.len(), "{label}: output count");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.dtype(), g.shape()), (w.dtype(), w.shape()), "{label}: output {k}");
        if tol == 0.0 {
            assert_eq!(g.bytes(), w.bytes(), "{label}: output {k} differs in bits");
            continue;
        }
        for (e, (a, b)) in f32s(g).into_iter().zip(f32s(w)).enumerate() {
            assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{label}: output {k} element {e}: got {a}, want {b}");
        }
    }
}

/// Approx class (matmul and tanh, 1e-4), doubled for the `T` steps an error travels through.
#[cfg(feature = "wgpu")]
const RNN_TOL: f32 = 2e-4;

#[test]
fn rnn_scan_on_cpu_ref_equals_its_unrolled_graph() {
    let data = RnnData::new(7);
    for (reverse, trajectory) in RNN_FORMS {
        let label = format!("cpu-ref, reverse {reverse}, trajectory {trajectory}");
        let scanned = rnn_on("cpu-ref", &rnn_scan_graph(reverse, trajectory), &data);
        assert_eq!(scanned.len(), 2 + usize::from(trajectory), "{label}");
        assert_close(&label, &scanned, &rnn_on("cpu-ref", &rnn_unrolled_graph(reverse, trajectory), &data), 0.0);
    }
}

/// The reversed scan is not the forward one read backwards: guards against a reference that
/// ignores `reverse` (both forms would then agree with each other and still be wrong).
#[test]
fn rnn_reverse_scan_differs_from_forward() {
    let data = RnnData::new(7);
    let fwd = rnn_on("cpu-ref", &rnn_scan_graph(false, false), &data);
    let rev = rnn_on("cpu-ref", &rnn_scan_graph(true, false), &data);
    assert_ne!(f32s(&fwd[0]), f32s(&rev[0]), "final states");
}

#[cfg(feature = "wgpu")]
#[test]
fn rnn_unrolled_on_wgpu_matches_cpu_ref() {
    let data = RnnData::new(7);
    for (reverse, trajectory) in RNN_FORMS {
        let g = rnn_unrolled_graph(reverse, trajectory);
        let label = format!("unrolled, reverse {reverse}, trajectory {trajectory}");
        assert_close(&label, &rnn_on("wgpu", &g, &data), &rnn_on("cpu-ref", &g, &data), RNN_TOL);
    }
}

#[cfg(feature = "wgpu")]
#[test]
fn rnn_scan_on_wgpu_matches_cpu_ref_and_its_unrolled_graph() {
    let data = RnnData::new(7);
    for (reverse, trajectory) in RNN_FORMS {
        let label = format!("reverse {reverse}, trajectory {trajectory}");
        let scanned = rnn_on("wgpu", &rnn_scan_graph(reverse, trajectory), &data);
        let reference = rnn_on("cpu-ref", &rnn_scan_graph(reverse, trajectory), &data);
        assert_close(&format!("wgpu scan vs cpu-ref scan, {label}"), &scanned, &reference, RNN_TOL);
        let unrolled = rnn_on("wgpu", &rnn_unrolled_graph(reverse, trajectory), &data);
        assert_close(&format!("wgpu scan vs wgpu unrolled, {label}"), &scanned, &unrolled, RNN_TOL);
    }
}
