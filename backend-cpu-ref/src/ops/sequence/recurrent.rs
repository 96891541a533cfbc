//! `Rnn`, `Gru` and `Lstm` (§2.10.1–2.10.3): PyTorch's stacked, optionally bidirectional recurrent
//! layers, computed step by step in f64 and rounded once into the output dtype.
//!
//! Sequences are kept in the layout of `x` (`[B, S, ·]` or `[S, B, ·]`) for every layer, so `y`
//! needs no transposition: a (time, batch) pair names a row and each row holds one step's features.
//! Slice indices are in range by construction: every buffer is sized from the shapes that
//! [`check::dims`] checked, with checked arithmetic.

use crate::mem::try_filled;
use crate::value::{floats, from_floats};
use backend_api::op::{RecurrentAttrs, RnnNonlinearity};
use backend_api::{bail, Result, Tensor};

mod cell;
mod check;

use cell::{Scratch, Weights};
use check::Dims;

/// Which recurrent cell a node computes, with the attribute only that cell reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cell {
    /// Elman cell `h' = φ(W_ih·u + b_ih + W_hh·h + b_hh)`.
    Rnn(RnnNonlinearity),
    /// Gates r, z, n; `linear_before_reset` picks where the reset gate applies.
    Gru { linear_before_reset: bool },
    /// Gates i, f, g, o, with a cell state `c`.
    Lstm,
}

impl Cell {
    /// Gate count `Gc`: the number of `H`-row chunks in every weight and bias.
    pub(crate) fn gates(self) -> usize {
        match self {
            Cell::Rnn(_) => 1,
            Cell::Gru { .. } => 3,
            Cell::Lstm => 4,
        }
    }

    /// The op name, for error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cell::Rnn(_) => "Rnn",
            Cell::Gru { .. } => "Gru",
            Cell::Lstm => "Lstm",
        }
    }

    /// State tensors per layer and direction: `h`, and `c` for `Lstm`.
    pub(crate) fn states(self) -> usize {
        match self {
            Cell::Rnn(_) | Cell::Gru { .. } => 1,
            Cell::Lstm => 2,
        }
    }
}

/// `Rnn(x, weights…, [h0])` (§2.10.1): `[y, h_n]`.
pub fn rnn(a: &RecurrentAttrs, ins: &[&Tensor]) -> Result<Vec<Tensor>> {
    recurrent(Cell::Rnn(a.nonlinearity), a, ins)
}

/// `Gru(x, weights…, [h0])` (§2.10.2): `[y, h_n]`.
pub fn gru(a: &RecurrentAttrs, ins: &[&Tensor]) -> Result<Vec<Tensor>> {
    recurrent(Cell::Gru { linear_before_reset: a.linear_before_reset }, a, ins)
}

/// `Lstm(x, weights…, [h0, c0])` (§2.10.3): `[y, h_n, c_n]`.
pub fn lstm(a: &RecurrentAttrs, ins: &[&Tensor]) -> Result<Vec<Tensor>> {
    recurrent(Cell::Lstm, a, ins)
}

/// The states of every layer and direction, `[L·D, B, H]` each: the initial values on entry, the
/// final ones (`h_n`, `c_n`) once every direction has run. `c` is empty for `Rnn` and `Gru`.
struct States {
    h: Vec<f64>,
    c: Vec<f64>,
}

impl States {
    fn new(cell: Cell, dims: &Dims, ins: &[&Tensor]) -> Result<States> {
        let n = dims.state_len;
        let first = dims.state_input;
        let load = |k: usize, what: &str| match ins.get(first + k) {
            Some(t) => floats(t, what),
            None => try_filled(n, 0.0),
        };
        let h = load(0, "initial state h0")?;
        let c = if cell == Cell::Lstm { load(1, "initial state c0")? } else { Vec::new() };
        Ok(States { h, c })
    }
}

/// Runs every layer and direction (§2.10.1 semantics) and returns `y`, `h_n` (and `c_n`).
fn recurrent(cell: Cell, a: &RecurrentAttrs, ins: &[&Tensor]) -> Result<Vec<Tensor>> {
    let Some(x) = ins.first() else { bail!(Arity, "{} has no input x", cell.name()) };
    let dims = check::dims(cell, a, ins)?;
    let mut states = States::new(cell, &dims, ins)?;
    let mut seq = floats(x, "x")?;
    let mut width = dims.input;
    for layer in 0..dims.layers {
        let mut out = try_filled(dims.out_len, 0.0)?;
        for dir in 0..dims.dirs {
            let slot = layer * dims.dirs + dir;
            let w = Weights::load(cell, &dims, ins, slot, width)?;
            direction(cell, &dims, &w, (&seq, width), (&mut out, dir), &mut states, slot)?;
        }
        seq = out;
        width = dims.dh;
    }
    let dtype = x.dtype();
    let mut outs =
        vec![from_floats(dtype, &dims.y_shape(), &seq)?, from_floats(dtype, &dims.state_shape(), &states.h)?];
    if cell == Cell::Lstm {
        outs.push(from_floats(dtype, &dims.state_shape(), &states.c)?);
    }
    Ok(outs)
}

/// One direction of one layer: every batch row walks the sequence (forwards for `dir` 0, backwards
/// for 1) from its state in `slot`, writes each new `h` to features `[dir·H, (dir+1)·H)` of `out`
/// at that step's row, and leaves its final state in `slot`.
fn direction(
    cell: Cell,
    dims: &Dims,
    w: &Weights,
    (seq, width): (&[f64], usize),
    (out, dir): (&mut [f64], usize),
    states: &mut States,
    slot: usize,
) -> Result<()> {
    let h_len = dims.hidden;
    let mut scratch = Scratch::new(cell, h_len)?;
    for bi in 0..dims.batch {
        let at = (slot * dims.batch + bi) * h_len;
        let h = &mut states.h[at..at + h_len];
        // `c` is empty for the cells without a cell state; they never read it.
        let c = if states.c.is_empty() { &mut [][..] } else { &mut states.c[at..at + h_len] };
        for step in 0..dims.seq {
            let t = if dir == 0 { step } else { dims.seq - 1 - step };
            let row = dims.row(t, bi);
            let u = &seq[row * width..(row + 1) * width];
            cell.step(w, u, h, c, &mut scratch);
            let o = row * dims.dh + dir * h_len;
            out[o..o + h_len].copy_from_slice(h);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
