//! `Rnn`, `Gru`, `Lstm` (§2.10.1–2.10.3) → the input projection of every step as one `MatMul`
//! per layer and direction, and the recurrence as a `Scan` whose body is the cell: a `MatMul` by
//! `W_hhᵀ` and the gates' elementwise ops. Computed in F32 (§2.10: the recurrent cells compute
//! in f32 whatever the dtype), cast back at the end.
//!
//! The state is carried as `[1, B, H]` (a slice of `h0`'s layout), so that `B` may be a symbol;
//! the sequence length must be static (it is the `Scan`'s `length`).

use super::arg;
use crate::op::{BinaryOp, RecurrentAttrs, ReduceOp, RnnNonlinearity, UnaryOp};
use crate::shape::Dim;
use crate::{bail, DType, Graph, GraphBuilder, Result, Shape, Tensor, Value};

/// The kinds this decomposition makes.
pub(crate) const USES: &[crate::OpKind] = &[
    crate::OpKind::Cast,
    crate::OpKind::Transpose,
    crate::OpKind::MatMul,
    crate::OpKind::Binary,
    crate::OpKind::Unary,
    crate::OpKind::Narrow,
    crate::OpKind::Concat,
    crate::OpKind::Expand,
    crate::OpKind::Constant,
    crate::OpKind::Reduce,
    crate::OpKind::Scan,
];

/// Which recurrent cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    /// Elman `Rnn`.
    Rnn,
    /// `Gru`, gates r, z, n.
    Gru,
    /// `Lstm`, gates i, f, g, o.
    Lstm,
}

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
}

/// The weights of one layer and direction (F32).
struct Weights {
    w_ih: Value,
    w_hh: Value,
    b_ih: Option<Value>,
    b_hh: Option<Value>,
}

/// The node's outputs `y`, `h_n` (and `c_n` for `Lstm`).
pub(crate) fn recurrent(g: &mut GraphBuilder, cell: Cell, a: &RecurrentAttrs, ins: &[Value]) -> Result<Vec<Value>> {
    let x = arg(ins, 0)?;
    let dtype = g.value_type(x)?.dtype;
    let (l_n, d_n) = (usize::try_from(a.num_layers).unwrap_or(usize::MAX), a.num_directions());
    let per = if a.has_bias { 4 } else { 2 };
    let mut u = to_f32(g, x)?;
    if a.batch_first {
        u = g.transpose(u, &[1, 0, 2])?;
    }
    let dims = g.value_type(u)?.shape.dims().to_vec();
    let (Some(s), Some(b)) = (dims.first().and_then(Dim::as_static), dims.get(1).cloned()) else {
        bail!(Unsupported, "the decomposition of a recurrent op needs a static sequence length, not {:?}", dims)
    };
    let h = usize::try_from(a.hidden_size).unwrap_or(usize::MAX);
    let state_shape = Shape(vec![Dim::Static(1), b.clone(), Dim::Static(h)]);
    let states = initial_states(g, cell, a, ins, 1 + l_n * d_n * per)?;
    let (mut h_n, mut c_n) = (Vec::new(), Vec::new());
    for l in 0..l_n {
        let mut outs = Vec::with_capacity(d_n);
        for d in 0..d_n {
            let w = weights(g, ins, 1 + (l * d_n + d) * per, a.has_bias)?;
            let k = l * d_n + d;
            let (h0, c0) = (state(g, &states.0, k, &state_shape)?, state(g, &states.1, k, &state_shape)?);
            let r = direction(g, cell, a, u, &w, (h0, c0), (s, d == 1), &state_shape)?;
            outs.push(r.y);
            h_n.push(r.h);
            c_n.extend(r.c);
        }
        u = if outs.len() == 1 { outs[0] } else { g.concat(&outs, 2)? };
    }
    if a.batch_first {
        u = g.transpose(u, &[1, 0, 2])?;
    }
    let h_all = g.concat(&h_n, 0)?;
    let mut result = vec![from_f32(g, u, dtype)?, from_f32(g, h_all, dtype)?];
    if cell == Cell::Lstm {
        let c = g.concat(&c_n, 0)?;
        result.push(from_f32(g, c, dtype)?);
    }
    Ok(result)
}

fn to_f32(g: &mut GraphBuilder, v: Value) -> Result<Value> {
    if g.value_type(v)?.dtype == DType::F32 {
        Ok(v)
    } else {
        g.cast(v, DType::F32)
    }
}

fn from_f32(g: &mut GraphBuilder, v: Value, to: DType) -> Result<Value> {
    if to == DType::F32 {
        Ok(v)
    } else {
        g.cast(v, to)
    }
}

/// `h0` and (`Lstm`) `c0` in F32, when the node has them (inputs from `at`).
fn initial_states(
    g: &mut GraphBuilder,
    cell: Cell,
    a: &RecurrentAttrs,
    ins: &[Value],
    at: usize,
) -> Result<(Option<Value>, Option<Value>)> {
    if !a.has_initial_state {
        return Ok((None, None));
    }
    let h0 = to_f32(g, arg(ins, at)?)?;
    let c0 = if cell == Cell::Lstm { Some(to_f32(g, arg(ins, at + 1)?)?) } else { None };
    Ok((Some(h0), c0))
}

/// Slice `k` of an initial state `[L·D, B, H]` as `[1, B, H]`, or zeros.
fn state(g: &mut GraphBuilder, all: &Option<Value>, k: usize, shape: &Shape) -> Result<Value> {
    match all {
        Some(v) => g.narrow(*v, 0, i64::try_from(k).unwrap_or(i64::MAX), 1, 1),
        None => {
            let zero = g.constant(&Tensor::scalar(0.0f32))?;
            g.expand(zero, shape.clone())
        }
    }
}

/// The weights starting at input `at`, in F32.
fn weights(g: &mut GraphBuilder, ins: &[Value], at: usize, bias: bool) -> Result<Weights> {
    let w_ih = to_f32(g, arg(ins, at)?)?;
    let w_hh = to_f32(g, arg(ins, at + 1)?)?;
    let (b_ih, b_hh) =
        if bias { (Some(to_f32(g, arg(ins, at + 2)?)?), Some(to_f32(g, arg(ins, at + 3)?)?)) } else { (None, None) };
    Ok(Weights { w_ih, w_hh, b_ih, b_hh })
}

/// One direction's outputs: `y` `[S, B, H]`, the final `h` (and `c`) `[1, B, H]`.
struct Direction {
    y: Value,
    h: Value,
    c: Option<Value>,
}

#[allow(clippy::too_many_arguments)]
fn direction(
    g: &mut GraphBuilder,
    cell: Cell,
    a: &RecurrentAttrs,
    u: Value,
    w: &Weights,
    (h0, c0): (Value, Value),
    (s, reverse): (usize, bool),
    state_shape: &Shape,
) -> Result<Direction> {
    let w_ih_t = g.transpose(w.w_ih, &[1, 0])?;
    let mut proj = g.matmul(u, w_ih_t)?;
    if let Some(b) = w.b_ih {
        proj = g.binary(BinaryOp::Add, proj, b)?;
    }
    let w_hh_t = g.transpose(w.w_hh, &[1, 0])?;
    let gh_width = cell.gates() * usize::try_from(a.hidden_size).unwrap_or(usize::MAX);
    let step = g.value_type(proj)?.shape.dims().get(1..).map(<[Dim]>::to_vec).unwrap_or_default();
    let body = cell_body(cell, a, state_shape, &Shape(step), gh_width, w.b_hh.is_some())?;
    let mut carries = vec![h0];
    if cell == Cell::Lstm {
        carries.push(c0);
    }
    let mut bcast = vec![w_hh_t];
    bcast.extend(w.b_hh);
    let length = u64::try_from(s).unwrap_or(u64::MAX);
    let outs = g.scan(body, length, reverse, (&carries, &bcast, &[proj]), false)?;
    let n = carries.len();
    let (Some(&h), Some(&ys)) = (outs.first(), outs.get(n)) else {
        bail!(Arity, "the recurrent Scan made {} outputs", outs.len())
    };
    // ys is [S, 1, B, H]: the state's leading 1 summed away (exact).
    let y = g.reduce(ReduceOp::Sum, ys, &[1], false)?;
    Ok(Direction { y, h, c: (cell == Cell::Lstm).then(|| outs.get(1).copied()).flatten() })
}

/// The cell as a Scan body: inputs `h` (`c`), `W_hhᵀ` (`b_hh`), the step's projected input
/// `[B, Gc·H]`; outputs `h'` (`c'`), then `h'` again as the per-step value.
fn cell_body(cell: Cell, a: &RecurrentAttrs, state: &Shape, step: &Shape, width: usize, bias: bool) -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let h_n = usize::try_from(a.hidden_size).unwrap_or(usize::MAX);
    let h = g.input("h", DType::F32, state.clone())?;
    let c = if cell == Cell::Lstm { Some(g.input("c", DType::F32, state.clone())?) } else { None };
    let w = g.input("w_hh_t", DType::F32, vec![h_n, width])?;
    let b = if bias { Some(g.input("b_hh", DType::F32, vec![width])?) } else { None };
    let gi = g.input("gi", DType::F32, step.clone())?;
    let mut gh = g.matmul(h, w)?;
    if let Some(b) = b {
        gh = g.binary(BinaryOp::Add, gh, b)?;
    }
    let chunk = |g: &mut GraphBuilder, v: Value, k: usize| g.narrow(v, -1, i64::try_from(k * h_n).unwrap_or(0), h_n, 1);
    let sig = |g: &mut GraphBuilder, v: Value| g.unary(UnaryOp::Sigmoid, v);
    let (h1, c1) = match cell {
        Cell::Rnn => {
            let z = g.binary(BinaryOp::Add, gi, gh)?;
            let act = match a.nonlinearity {
                RnnNonlinearity::Tanh => UnaryOp::Tanh,
                RnnNonlinearity::Relu => UnaryOp::Relu,
            };
            (g.unary(act, z)?, None)
        }
        Cell::Gru => {
            let (gi_r, gh_r) = (chunk(&mut g, gi, 0)?, chunk(&mut g, gh, 0)?);
            let (gi_z, gh_z) = (chunk(&mut g, gi, 1)?, chunk(&mut g, gh, 1)?);
            let gi_n = chunk(&mut g, gi, 2)?;
            let rs = g.binary(BinaryOp::Add, gi_r, gh_r)?;
            let r = sig(&mut g, rs)?;
            let zs = g.binary(BinaryOp::Add, gi_z, gh_z)?;
            let z = sig(&mut g, zs)?;
            let hn = if a.linear_before_reset {
                let gh_n = chunk(&mut g, gh, 2)?;
                g.binary(BinaryOp::Mul, r, gh_n)?
            } else {
                // W_hh,n·(r ⊙ h) + b_hh,n: the n columns of W_hhᵀ and of b_hh.
                let rh = g.binary(BinaryOp::Mul, r, h)?;
                let w_n = g.narrow(w, 1, i64::try_from(2 * h_n).unwrap_or(0), h_n, 1)?;
                let mut v = g.matmul(rh, w_n)?;
                if let Some(b) = b {
                    let b_n = g.narrow(b, 0, i64::try_from(2 * h_n).unwrap_or(0), h_n, 1)?;
                    v = g.binary(BinaryOp::Add, v, b_n)?;
                }
                v
            };
            let ns = g.binary(BinaryOp::Add, gi_n, hn)?;
            let n = g.unary(UnaryOp::Tanh, ns)?;
            // (1 − z) ⊙ n + z ⊙ h
            let one = g.constant(&Tensor::scalar(1.0f32))?;
            let omz = g.binary(BinaryOp::Sub, one, z)?;
            let a1 = g.binary(BinaryOp::Mul, omz, n)?;
            let a2 = g.binary(BinaryOp::Mul, z, h)?;
            (g.binary(BinaryOp::Add, a1, a2)?, None)
        }
        Cell::Lstm => {
            let Some(c) = c else { bail!(Arity, "an Lstm cell without its cell state") };
            let sum = g.binary(BinaryOp::Add, gi, gh)?;
            let (ai, af) = (chunk(&mut g, sum, 0)?, chunk(&mut g, sum, 1)?);
            let (ag, ao) = (chunk(&mut g, sum, 2)?, chunk(&mut g, sum, 3)?);
            let (i, f) = (sig(&mut g, ai)?, sig(&mut g, af)?);
            let gg = g.unary(UnaryOp::Tanh, ag)?;
            let o = sig(&mut g, ao)?;
            let fc = g.binary(BinaryOp::Mul, f, c)?;
            let ig = g.binary(BinaryOp::Mul, i, gg)?;
            let c1 = g.binary(BinaryOp::Add, fc, ig)?;
            let tc = g.unary(UnaryOp::Tanh, c1)?;
            (g.binary(BinaryOp::Mul, o, tc)?, Some(c1))
        }
    };
    g.output(h1)?;
    if let Some(c1) = c1 {
        g.output(c1)?;
    }
    g.output(h1)?;
    g.build()
}
