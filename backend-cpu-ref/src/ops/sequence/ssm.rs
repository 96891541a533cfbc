//! `SelectiveScan` (§2.10.4) and `Mamba2` (§2.10.5): the sequential recurrences exactly as the
//! spec writes them, one state per (batch, channel) or (batch, head). Computed in f64 (wider than
//! the f32 the spec asks for, as every cpu-ref family) and rounded once into the input dtype.
//! Nothing is clamped: a growing state overflows to ±inf and then to NaN, as IEEE arithmetic does.
//!
//! Operands are checked by the op's own shape inference ([`checked_outputs`]), so the indexing
//! below is in range by construction.

use crate::layout::count;
use crate::mem::try_filled;
use crate::value::{floats, from_floats};
use backend_api::op::{Op, StateSpaceAttrs};
use backend_api::{bail, DType, Result, Shape, Tensor, TensorType};

/// The operands of a state-space op decoded to f64, with the output dtype and shapes.
pub(super) struct Operands {
    /// Every input as f64, in input order (the initial state last when present).
    pub values: Vec<Vec<f64>>,
    /// The dtype every input shares and both outputs take.
    pub dtype: DType,
    /// Shape of output 0 (the per-step outputs).
    pub out_shape: Vec<usize>,
    /// Shape of output 1 (the final state).
    pub state_shape: Vec<usize>,
}

impl Operands {
    /// Checks `ins` against `op` with the op's shape inference (the spec's `Arity`, `Shape`,
    /// `DType` and `Attribute` errors, with the shapes named) and decodes them.
    pub(super) fn of(op: &Op, ins: &[&Tensor], names: &[&str]) -> Result<Operands> {
        let label = backend_api::spec::op_label(op);
        let types: Vec<TensorType> =
            ins.iter().map(|t| TensorType { dtype: t.dtype(), shape: Shape::of(t.shape()) }).collect();
        let outs = backend_api::infer::infer(op, &types).map_err(|e| e.context(format!("{label} operands")))?;
        let [out, state] = outs.as_slice() else { bail!(Shape, "{label} inferred {} outputs, not 2", outs.len()) };
        let mut values = Vec::with_capacity(ins.len());
        for (t, name) in ins.iter().zip(names) {
            values.push(floats(t, &format!("{label} input {name}"))?);
        }
        Ok(Operands {
            values,
            dtype: out.dtype,
            out_shape: out.shape.static_dims(&format!("{label} output 0"))?,
            state_shape: state.shape.static_dims(&format!("{label} output 1"))?,
        })
    }

    /// The initial state (input `at`, present iff `has_initial_state`), else zeros.
    pub(super) fn initial_state(&self, at: usize) -> Result<Vec<f64>> {
        match self.values.get(at) {
            Some(s) => Ok(s.clone()),
            None => try_filled(count(&self.state_shape)?, 0.0),
        }
    }

    /// Both outputs, each rounded once into the dtype.
    pub(super) fn finish(&self, out: &[f64], state: &[f64]) -> Result<Vec<Tensor>> {
        Ok(vec![from_floats(self.dtype, &self.out_shape, out)?, from_floats(self.dtype, &self.state_shape, state)?])
    }
}

/// One step of one channel's state `h[N]`: `h ← exp(Δ·a) ⊙ h + Δ·b·x`, then `Σ c·h` (with the
/// updated `h`).
fn selective_step(h: &mut [f64], delta: f64, x: f64, a: &[f64], b: &[f64], c: &[f64]) -> f64 {
    let mut y = 0.0;
    for n in 0..h.len() {
        h[n] = (delta * a[n]).exp() * h[n] + delta * b[n] * x;
        y += c[n] * h[n];
    }
    y
}

/// `SelectiveScan(x, delta, a, b, c[, h0])` per §2.10.4: `(y [B, S, C], h_final [B, C, N])`.
pub fn selective_scan(ins: &[&Tensor], attrs: &StateSpaceAttrs) -> Result<Vec<Tensor>> {
    let ops = Operands::of(&Op::SelectiveScan(*attrs), ins, &["x", "delta", "a", "b", "c", "h0"])?;
    let mut h = ops.initial_state(5)?;
    let [bs, s, c] = [ops.out_shape[0], ops.out_shape[1], ops.out_shape[2]];
    let n = ops.state_shape[2];
    let mut y = try_filled(count(&ops.out_shape)?, 0.0)?;
    if y.is_empty() {
        // B, S or C is 0: the state is empty or never updated (the other dims may be huge).
        return ops.finish(&y, &h);
    }
    let v = &ops.values;
    for bi in 0..bs {
        for ch in 0..c {
            let state = &mut h[(bi * c + ch) * n..][..n];
            let a = &v[2][ch * n..][..n];
            for t in 0..s {
                let at = (bi * s + t) * c + ch;
                let row = (bi * s + t) * n;
                y[at] = selective_step(state, v[1][at], v[0][at], a, &v[3][row..][..n], &v[4][row..][..n]);
            }
        }
    }
    ops.finish(&y, &h)
}

/// One step of one head's state `St[P, N]`: `St ← α·St + dt·x ⊗ b` with `α = exp(dt·a)`, then
/// `y[p] = Σ_n St[p, n]·c[n]` into `y`.
fn mamba2_step(st: &mut [f64], dt: f64, a: f64, x: &[f64], b: &[f64], c: &[f64], y: &mut [f64]) {
    let alpha = (dt * a).exp();
    let n = b.len();
    for (p, yp) in y.iter_mut().enumerate() {
        let row = &mut st[p * n..][..n];
        let mut acc = 0.0;
        for j in 0..n {
            row[j] = alpha * row[j] + dt * x[p] * b[j];
            acc += row[j] * c[j];
        }
        *yp = acc;
    }
}

/// `Mamba2(x, dt, a, b, c[, state0])` per §2.10.5: `(y [B, S, H, P], state [B, H, P, N])`.
pub fn mamba2(ins: &[&Tensor], attrs: &StateSpaceAttrs) -> Result<Vec<Tensor>> {
    let ops = Operands::of(&Op::Mamba2(*attrs), ins, &["x", "dt", "a", "b", "c", "state0"])?;
    let mut st = ops.initial_state(5)?;
    let [bs, s, heads, p] = [ops.out_shape[0], ops.out_shape[1], ops.out_shape[2], ops.out_shape[3]];
    let n = ops.state_shape[3];
    let mut y = try_filled(count(&ops.out_shape)?, 0.0)?;
    if y.is_empty() {
        // B, S, H or P is 0: the state is empty or never updated (the other dims may be huge).
        return ops.finish(&y, &st);
    }
    let v = &ops.values;
    for bi in 0..bs {
        for h in 0..heads {
            let state = &mut st[(bi * heads + h) * p * n..][..p * n];
            for t in 0..s {
                let row = (bi * s + t) * heads + h;
                let (x, b, c) = (&v[0][row * p..][..p], &v[3][row * n..][..n], &v[4][row * n..][..n]);
                mamba2_step(state, v[1][row], v[2][h], x, b, c, &mut y[row * p..][..p]);
            }
        }
    }
    ops.finish(&y, &st)
}

#[cfg(test)]
#[path = "ssm_tests.rs"]
pub(super) mod tests;
