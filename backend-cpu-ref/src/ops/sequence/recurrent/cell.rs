//! One time step of each cell (§2.10.1–2.10.3) for one batch row, in f64, with the gate order of
//! the spec: `Gru` r, z, n; `Lstm` i, f, g, o (consecutive chunks of `H` rows).

use super::check::Dims;
use super::Cell;
use crate::mem::try_filled;
use crate::ops::math::{max, sigmoid};
use crate::value::floats;
use backend_api::op::RnnNonlinearity;
use backend_api::{bail, Result, Tensor};
use std::ops::Range;

/// One layer-direction's parameters as f64: `w_ih` `[Gc·H, in]`, `w_hh` `[Gc·H, H]` and the
/// biases (`None` without `has_bias`: the terms are omitted, not added as zeros).
pub(super) struct Weights {
    ih: Vec<f64>,
    hh: Vec<f64>,
    b_ih: Option<Vec<f64>>,
    b_hh: Option<Vec<f64>>,
    input: usize,
    hidden: usize,
}

impl Weights {
    /// The parameters of layer-direction `slot` (inputs in PyTorch order), whose input has `input`
    /// features.
    pub(super) fn load(cell: Cell, dims: &Dims, ins: &[&Tensor], slot: usize, input: usize) -> Result<Weights> {
        let base = 1 + slot * dims.per_slot;
        let get = |k: usize, what: &str| match ins.get(base + k) {
            Some(t) => floats(t, what),
            None => bail!(Arity, "{} slot {slot}: {what} (input {}) is missing", cell.name(), base + k),
        };
        let bias = dims.per_slot == 4;
        Ok(Weights {
            ih: get(0, "w_ih")?,
            hh: get(1, "w_hh")?,
            b_ih: if bias { Some(get(2, "b_ih")?) } else { None },
            b_hh: if bias { Some(get(3, "b_hh")?) } else { None },
            input,
            hidden: dims.hidden,
        })
    }

    /// `out[g] = W_ih[g]·u + b_ih[g]` for every row `g` of `W_ih`.
    fn input_gates(&self, u: &[f64], out: &mut [f64]) {
        affine(&self.ih, self.input, self.b_ih.as_deref(), 0..out.len(), u, out);
    }

    /// `out[g − rows.start] = W_hh[g]·v + b_hh[g]` for `g` in `rows`.
    fn hidden_gates(&self, v: &[f64], rows: Range<usize>, out: &mut [f64]) {
        affine(&self.hh, self.hidden, self.b_hh.as_deref(), rows, v, out);
    }
}

/// `out[g − rows.start] = w[g]·v (+ b[g])` for the rows `g` of the row-major `[·, cols]` matrix `w`.
fn affine(w: &[f64], cols: usize, b: Option<&[f64]>, rows: Range<usize>, v: &[f64], out: &mut [f64]) {
    for (o, g) in out.iter_mut().zip(rows) {
        let dot: f64 = w[g * cols..(g + 1) * cols].iter().zip(v).map(|(a, b)| a * b).sum();
        *o = match b {
            Some(b) => dot + b[g],
            None => dot,
        };
    }
}

/// Per-step buffers, allocated once per direction: `gi`, `gh` (`Gc·H` each) and, for `Gru`, the
/// gates `r`, `z` and `r ⊙ h` (`H` each).
pub(super) struct Scratch {
    gi: Vec<f64>,
    gh: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    rh: Vec<f64>,
}

impl Scratch {
    pub(super) fn new(cell: Cell, hidden: usize) -> Result<Scratch> {
        let Some(gates) = cell.gates().checked_mul(hidden) else {
            bail!(Shape, "{} gate rows {} x {hidden} overflow", cell.name(), cell.gates())
        };
        let gru = if matches!(cell, Cell::Gru { .. }) { hidden } else { 0 };
        Ok(Scratch {
            gi: try_filled(gates, 0.0)?,
            gh: try_filled(gates, 0.0)?,
            r: try_filled(gru, 0.0)?,
            z: try_filled(gru, 0.0)?,
            rh: try_filled(gru, 0.0)?,
        })
    }
}

impl Cell {
    /// Advances `h` (and `c` for `Lstm`; empty otherwise) by one step with input `u`.
    pub(super) fn step(self, w: &Weights, u: &[f64], h: &mut [f64], c: &mut [f64], s: &mut Scratch) {
        w.input_gates(u, &mut s.gi);
        match self {
            Cell::Rnn(phi) => rnn(phi, w, h, s),
            Cell::Gru { linear_before_reset } => gru(linear_before_reset, w, h, s),
            Cell::Lstm => lstm(w, h, c, s),
        }
    }
}

/// `h' = φ(gi + W_hh·h + b_hh)`.
fn rnn(phi: RnnNonlinearity, w: &Weights, h: &mut [f64], s: &mut Scratch) {
    let n = h.len();
    w.hidden_gates(h, 0..n, &mut s.gh);
    for (k, hk) in h.iter_mut().enumerate() {
        let a = s.gi[k] + s.gh[k];
        *hk = match phi {
            RnnNonlinearity::Tanh => a.tanh(),
            // NaN-propagating, as the spec's Relu (§1.7)
            RnnNonlinearity::Relu => max(a, 0.0),
        };
    }
}

/// `r = σ(gi_r + gh_r)`, `z = σ(gi_z + gh_z)`, `n = tanh(gi_n + r ⊙ gh_n)` (or
/// `tanh(gi_n + W_hh,n·(r ⊙ h) + b_hh,n)` without `linear_before_reset`), `h' = (1 − z) ⊙ n + z ⊙ h`.
fn gru(linear_before_reset: bool, w: &Weights, h: &mut [f64], s: &mut Scratch) {
    let n = h.len();
    w.hidden_gates(h, 0..2 * n, &mut s.gh[..2 * n]);
    for k in 0..n {
        s.r[k] = sigmoid(s.gi[k] + s.gh[k]);
        s.z[k] = sigmoid(s.gi[n + k] + s.gh[n + k]);
    }
    if linear_before_reset {
        w.hidden_gates(h, 2 * n..3 * n, &mut s.gh[2 * n..]);
        for k in 0..n {
            s.gh[2 * n + k] *= s.r[k];
        }
    } else {
        for ((rh, r), hk) in s.rh.iter_mut().zip(&s.r).zip(h.iter()) {
            *rh = r * hk;
        }
        w.hidden_gates(&s.rh, 2 * n..3 * n, &mut s.gh[2 * n..]);
    }
    for (k, hk) in h.iter_mut().enumerate() {
        let cand = (s.gi[2 * n + k] + s.gh[2 * n + k]).tanh();
        *hk = (1.0 - s.z[k]) * cand + s.z[k] * *hk;
    }
}

/// `a = gi + W_hh·h + b_hh`; `c' = σ(a_f) ⊙ c + σ(a_i) ⊙ tanh(a_g)`; `h' = σ(a_o) ⊙ tanh(c')`.
fn lstm(w: &Weights, h: &mut [f64], c: &mut [f64], s: &mut Scratch) {
    let n = h.len();
    w.hidden_gates(h, 0..4 * n, &mut s.gh);
    for (k, (hk, ck)) in h.iter_mut().zip(c.iter_mut()).enumerate() {
        let a = |gate: usize| s.gi[gate * n + k] + s.gh[gate * n + k];
        let (i, f, g, o) = (sigmoid(a(0)), sigmoid(a(1)), a(2).tanh(), sigmoid(a(3)));
        *ck = f * *ck + i * g;
        *hk = o * ck.tanh();
    }
}
