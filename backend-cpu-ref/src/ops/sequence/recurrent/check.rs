//! The checks of §2.10.1 on a recurrent node's run-time inputs (the builder made the same ones on
//! declared types; these keep the kernel safe when called directly), and the sizes they fix.

use super::Cell;
use crate::layout::count;
use backend_api::op::RecurrentAttrs;
use backend_api::{bail, DType, Result, Tensor};

/// The sizes of one recurrent node, all checked: every buffer is allocated from these.
#[derive(Clone, Debug)]
pub(super) struct Dims {
    /// `B`.
    pub batch: usize,
    /// `S`.
    pub seq: usize,
    /// `In`, the features of `x`.
    pub input: usize,
    /// `H`.
    pub hidden: usize,
    /// `L`.
    pub layers: usize,
    /// `D`.
    pub dirs: usize,
    /// `D·H`, the features of every layer's output.
    pub dh: usize,
    /// Inputs per layer and direction: 2 weights, plus 2 biases with `has_bias`.
    pub per_slot: usize,
    /// Index of the first initial-state input (= the input count when there is none).
    pub state_input: usize,
    /// Elements of one `[L·D, B, H]` state tensor.
    pub state_len: usize,
    /// Elements of one layer's output `B·S·D·H`.
    pub out_len: usize,
    /// `x` is `[B, S, In]` (else `[S, B, In]`).
    pub batch_first: bool,
}

impl Dims {
    /// The row of `(t, bi)` in a sequence buffer laid out as `x` is.
    pub fn row(&self, t: usize, bi: usize) -> usize {
        if self.batch_first {
            bi * self.seq + t
        } else {
            t * self.batch + bi
        }
    }

    /// Shape of `y`: `[B, S, D·H]` or `[S, B, D·H]`.
    pub fn y_shape(&self) -> [usize; 3] {
        if self.batch_first {
            [self.batch, self.seq, self.dh]
        } else {
            [self.seq, self.batch, self.dh]
        }
    }

    /// Shape of every state, `[L·D, B, H]` (its first dim was checked when `state_len` was).
    pub fn state_shape(&self) -> [usize; 3] {
        [self.layers * self.dirs, self.batch, self.hidden]
    }
}

fn mul(a: usize, b: usize, op: &str) -> Result<usize> {
    match a.checked_mul(b) {
        Some(n) => Ok(n),
        None => bail!(Shape, "{op}: size {a} x {b} overflows usize"),
    }
}

/// Checks attributes, arity, dtypes and every shape of `ins`, and returns the sizes.
pub(super) fn dims(cell: Cell, a: &RecurrentAttrs, ins: &[&Tensor]) -> Result<Dims> {
    let op = cell.name();
    if a.hidden_size == 0 || a.num_layers == 0 {
        bail!(Attribute, "{op} hidden_size {} and num_layers {} must be >= 1", a.hidden_size, a.num_layers);
    }
    let (hidden, layers, dirs) = (a.hidden_size as usize, a.num_layers as usize, a.num_directions());
    let per_slot = 2 + 2 * usize::from(a.has_bias);
    let states = if a.has_initial_state { cell.states() } else { 0 };
    let slots = mul(layers, dirs, op)?;
    let state_input = mul(slots, per_slot, op)?.saturating_add(1);
    let want = state_input.saturating_add(states);
    if ins.len() != want {
        bail!(
            Arity,
            "{op} with {layers} layer(s), {dirs} direction(s), has_bias {}, has_initial_state {} takes {want} \
             inputs, got {}",
            a.has_bias,
            a.has_initial_state,
            ins.len()
        );
    }
    let x = dtypes(op, ins)?;
    let &[d0, d1, input] = x.shape() else { bail!(Shape, "{op} x {:?} must have rank 3", x.shape()) };
    let (batch, seq) = if a.batch_first { (d0, d1) } else { (d1, d0) };
    let dh = mul(dirs, hidden, op)?;
    let dims = Dims {
        batch,
        seq,
        input,
        hidden,
        layers,
        dirs,
        dh,
        per_slot,
        state_input,
        state_len: count(&[slots, batch, hidden])?,
        out_len: count(&[batch, seq, dh])?,
        batch_first: a.batch_first,
    };
    weights(cell, &dims, ins)?;
    for (k, t) in ins.iter().enumerate().skip(state_input) {
        let name = ["h0", "c0"][(k - state_input).min(1)];
        shape_is(t, &dims.state_shape(), &format!("{op} initial state {name} ([L·D, B, H])"))?;
    }
    Ok(dims)
}

/// `x` is float32-family and every other input has its dtype; returns `x`.
fn dtypes<'t>(op: &str, ins: &[&'t Tensor]) -> Result<&'t Tensor> {
    let Some(&x) = ins.first() else { bail!(Arity, "{op} has no input x") };
    match x.dtype() {
        DType::F32 | DType::F16 | DType::BF16 => {}
        other => bail!(DType, "{op} x {other}{:?} must be F32, F16 or BF16", x.shape()),
    }
    for (i, t) in ins.iter().enumerate() {
        if t.dtype() != x.dtype() {
            bail!(DType, "{op} input {i} {}{:?} must have the dtype of x ({})", t.dtype(), t.shape(), x.dtype());
        }
    }
    Ok(x)
}

/// Shapes of every `w_ih`, `w_hh` (and biases): `[Gc·H, in_l]`, `[Gc·H, H]`, `[Gc·H]`.
fn weights(cell: Cell, dims: &Dims, ins: &[&Tensor]) -> Result<()> {
    let op = cell.name();
    let gh = mul(cell.gates(), dims.hidden, op)?;
    for layer in 0..dims.layers {
        let in_l = if layer == 0 { dims.input } else { dims.dh };
        for dir in 0..dims.dirs {
            let base = 1 + (layer * dims.dirs + dir) * dims.per_slot;
            let tag = format!("{op} layer {layer} direction {dir}");
            let want: [&[usize]; 4] = [&[gh, in_l], &[gh, dims.hidden], &[gh], &[gh]];
            let names = ["w_ih ([Gc·H, in])", "w_hh ([Gc·H, H])", "b_ih ([Gc·H])", "b_hh ([Gc·H])"];
            for (k, (want, name)) in want.iter().zip(names).take(dims.per_slot).enumerate() {
                match ins.get(base + k) {
                    Some(t) => shape_is(t, want, &format!("{tag} {name}"))?,
                    None => bail!(Arity, "{tag}: input {} is missing", base + k),
                }
            }
        }
    }
    Ok(())
}

fn shape_is(t: &Tensor, want: &[usize], what: &str) -> Result<()> {
    if t.shape() != want {
        bail!(Shape, "{what} is {:?}, expected {want:?}", t.shape());
    }
    Ok(())
}
