//! Sequence ops (§2.10): `Scan`, a loop over the leading axis of its sequence inputs with carried
//! values, evaluated step by step with the body of [`super::control::Body`].

use super::control::Body;
use crate::eval::Env;
use crate::layout::count;
use crate::mem::try_vec;
use backend_api::op::ScanAttrs;
use backend_api::{bail, Result, Tensor};

pub(crate) mod delta;
pub(crate) mod recurrent;
pub(crate) mod ssm;

/// A stacked output `[length, *step]` being filled row by row (row t belongs to step t).
struct Stack {
    dtype: backend_api::DType,
    step: Vec<usize>,
    data: Vec<u8>,
}

impl Stack {
    fn new(like: &Tensor, length: usize) -> Result<Stack> {
        let Some(bytes) = like.bytes().len().checked_mul(length) else {
            bail!(Capacity, "a stacked Scan output of {length} x {:?} overflows", like.shape())
        };
        let mut data = try_vec(bytes)?;
        data.resize(bytes, 0);
        Ok(Stack { dtype: like.dtype(), step: like.shape().to_vec(), data })
    }

    /// Writes `t` (of the step shape) as row `row`.
    fn put(&mut self, row: usize, t: &Tensor, what: &str) -> Result<()> {
        if t.dtype() != self.dtype || t.shape() != self.step.as_slice() {
            bail!(
                Subgraph,
                "Scan {what} of step {row} is {}{:?}, not {}{:?}",
                t.dtype(),
                t.shape(),
                self.dtype,
                self.step
            );
        }
        let n = t.bytes().len();
        match self.data.get_mut(row * n..(row + 1) * n) {
            Some(dst) => dst.copy_from_slice(t.bytes()),
            None => bail!(Shape, "Scan {what}: row {row} is past the stack"),
        }
        Ok(())
    }

    fn finish(self, length: usize) -> Result<Tensor> {
        let shape: Vec<usize> = std::iter::once(length).chain(self.step.iter().copied()).collect();
        Tensor::from_bytes(self.dtype, &shape, self.data)
    }
}

/// Slice `t` of the leading axis of `xs` (shape `[length, *step]`).
fn step_of(xs: &Tensor, t: usize) -> Result<Tensor> {
    let step = xs.shape().get(1..).unwrap_or(&[]).to_vec();
    let n = xs.dtype().size().saturating_mul(count(&step)?);
    match xs.bytes().get(t * n..(t + 1) * n) {
        Some(b) => Tensor::from_bytes(xs.dtype(), &step, b.to_vec()),
        None => bail!(Shape, "Scan sequence input {:?} has no step {t}", xs.shape()),
    }
}

/// `Scan(carries…, bcast…, xs…)` per §2.10.7: final carries, stacked per-step values, and the
/// stacked carries with `save_trajectory`. The body is not evaluated for `length = 0`.
pub(crate) fn scan(body: &Body, a: &ScanAttrs, ins: &[&Tensor], env: &Env<'_>) -> Result<Vec<Tensor>> {
    let (c, bc, x) = (a.num_carry as usize, a.num_bcast as usize, a.num_xs as usize);
    if ins.len() != c + bc + x {
        bail!(Arity, "Scan takes {c} carries, {bc} broadcast and {x} sequence inputs, was given {}", ins.len());
    }
    let Ok(length) = usize::try_from(a.length) else { bail!(Shape, "Scan length {} exceeds usize", a.length) };
    let (carries, rest) = ins.split_at(c);
    let (bcast, xs) = rest.split_at(bc);
    for (m, s) in xs.iter().enumerate() {
        if s.shape().first() != Some(&length) {
            bail!(Shape, "Scan sequence input {m} {:?} does not have leading dim {length}", s.shape());
        }
    }
    let mut carry: Vec<Tensor> = carries.iter().map(|t| (*t).clone()).collect();
    let mut ys: Vec<Stack> = Vec::new();
    let mut traj: Vec<Stack> = Vec::new();
    if a.save_trajectory {
        traj = carry.iter().map(|t| Stack::new(t, length)).collect::<Result<_>>()?;
    }
    for i in 0..length {
        let t = if a.reverse { length - 1 - i } else { i };
        let slices: Vec<Tensor> = xs.iter().map(|s| step_of(s, t)).collect::<Result<_>>()?;
        let args: Vec<&Tensor> = carry.iter().chain(bcast.iter().copied()).chain(slices.iter()).collect();
        let mut out = body.run(&args, env)?;
        if out.len() < c {
            bail!(Subgraph, "Scan body returned {} values, fewer than its {c} carries", out.len());
        }
        let y = out.split_off(c);
        if ys.is_empty() && !y.is_empty() {
            ys = y.iter().map(|v| Stack::new(v, length)).collect::<Result<_>>()?;
        }
        for (k, (stack, v)) in ys.iter_mut().zip(&y).enumerate() {
            stack.put(t, v, &format!("output y{k}"))?;
        }
        for (k, (stack, v)) in traj.iter_mut().zip(&out).enumerate() {
            stack.put(t, v, &format!("trajectory of carry {k}"))?;
        }
        carry = out;
    }
    let mut outs = carry;
    if length == 0 {
        // no step ran: the per-step outputs are empty stacks of the body's declared shapes
        outs.extend(empty_ys(body, c, env)?);
    } else {
        outs.extend(ys.into_iter().map(|s| s.finish(length)).collect::<Result<Vec<_>>>()?);
    }
    if a.save_trajectory {
        outs.extend(traj.into_iter().map(|s| s.finish(length)).collect::<Result<Vec<_>>>()?);
    }
    Ok(outs)
}

/// Empty stacks `[0, *shape(y_k)]` of the body's per-step outputs (after its `c` carries), from
/// their declared types.
fn empty_ys(body: &Body, c: usize, env: &Env<'_>) -> Result<Vec<Tensor>> {
    body.output_types()
        .iter()
        .skip(c)
        .map(|ty| {
            let dims = env.bindings.resolve(&ty.shape)?;
            let shape: Vec<usize> = std::iter::once(0).chain(dims).collect();
            Tensor::from_bytes(ty.dtype, &shape, Vec::new())
        })
        .collect()
}

#[cfg(test)]
mod tests;
