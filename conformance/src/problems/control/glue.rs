//! The ops the control-flow generators add around generated bodies: fitting a value to a type
//! (so a body's result can be a loop value, a carry or a branch output of a given type),
//! combining an accumulator with a result, small data, closing a func over its example values.
//! Every op here is Exact and continuous in float inputs (see [`super::func::Class`]).

use super::func::{floaty, Func, FuncBuilder};
use crate::values::{FloatDomain, IntDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{BinaryOp, PadMode};
use backend_api::{DType, Result, Tensor, TensorType, Value};

/// Small integers (floats with the IEEE specials): the glue's data, exact under every glue op.
fn small() -> Values {
    Values { float: FloatDomain::new(&[Piece::Ints(3)], IEEE_SPECIALS), int: IntDomain::Only(-3, 3) }
}

/// A tensor of small values of type `t`.
pub(crate) fn small_tensor(rng: &mut Rng, t: &TensorType) -> Result<Tensor> {
    small().tensor(rng, t.dtype, &t.dims()?, 0.05)
}

/// `v` reshaped (flattened, cut or zero-padded at random ends, reshaped) and cast to `target`.
pub(crate) fn fit(fb: &mut FuncBuilder, rng: &mut Rng, v: Value, target: &TensorType) -> Result<Value> {
    let from = fb.ty(v)?;
    let mut v = v;
    if from.dtype != target.dtype {
        v = fb.gb.cast(v, target.dtype)?;
    }
    if from.shape == target.shape {
        return Ok(v);
    }
    let (n, want) = (backend_api::shape::numel(&from.dims()?), backend_api::shape::numel(&target.dims()?));
    let dims: Vec<i64> = target.dims()?.iter().map(|&d| d as i64).collect();
    if n != want {
        let flat = fb.gb.reshape(v, &[n as i64])?;
        v = if n > want {
            let start = rng.below(n - want + 1);
            fb.gb.narrow(flat, 0, start as i64, want, 1)?
        } else {
            let before = rng.below(want - n + 1);
            fb.gb.pad(flat, &[before], &[want - n - before], PadMode::Constant { value: 0.0 })?
        };
    }
    fb.gb.reshape(v, &dims)
}

/// `v` fitted to `target` where every backend gets the same result from it, else a constant of
/// `target`: a result that is not `exact` may not change dtype, and no float becomes an integer
/// or a Bool (a flushed subnormal would cast differently).
pub(crate) fn adapt(fb: &mut FuncBuilder, rng: &mut Rng, v: Value, exact: bool, target: &TensorType) -> Result<Value> {
    let from = fb.ty(v)?.dtype;
    let discrete = floaty(from) && !floaty(target.dtype);
    if from != target.dtype && (!exact || discrete) {
        let t = small_tensor(rng, target)?;
        return fb.gb.constant(&t);
    }
    fit(fb, rng, v, target)
}

/// `op(acc, y)` for an exact binary op of the dtype (values of the same type): the update of an
/// accumulating loop value.
pub(crate) fn combine(fb: &mut FuncBuilder, rng: &mut Rng, acc: Value, y: Value) -> Result<Value> {
    let d = fb.ty(acc)?.dtype;
    let ops: &[BinaryOp] = match d {
        DType::Bool => &[BinaryOp::Xor, BinaryOp::Or, BinaryOp::And],
        DType::C64 => &[BinaryOp::Add, BinaryOp::Sub],
        d if d.is_float() => &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Max, BinaryOp::Min],
        _ => &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Max, BinaryOp::Xor],
    };
    let op = ops.get(rng.below(ops.len())).copied().unwrap_or(BinaryOp::Add);
    fb.gb.binary(op, acc, y)
}

/// `f` with no inputs: each input replaced by a constant holding its example value (a body
/// that captures nothing).
pub(crate) fn close(f: &Func) -> Result<Func> {
    let mut fb = FuncBuilder::new();
    let consts = f.args.iter().map(|t| fb.gb.constant(t)).collect::<Result<Vec<_>>>()?;
    let outs = fb.call(f, &consts)?;
    fb.finish(&outs)
}

/// One of the shapes of a one-element condition: `[]`, `[1]`, `[1, 1]`.
pub(crate) fn cond_shape(rng: &mut Rng) -> Vec<usize> {
    vec![1; rng.below(3)]
}

/// `xs` stacked along a new leading axis (`[xs.len(), *shape]`) for a `Scan` sequence input:
/// step 0 holds `first`, the others elements drawn from it (fresh values for Bool, whose
/// one-element conditions would otherwise never change).
pub(crate) fn steps(rng: &mut Rng, first: &Tensor, length: usize) -> Result<Tensor> {
    let mut shape = vec![length];
    shape.extend_from_slice(first.shape());
    let mut bytes = Vec::with_capacity(first.bytes().len() * length);
    for step in 0..length {
        let t = if step == 0 || first.numel() == 0 {
            first.clone()
        } else if first.dtype() == DType::Bool {
            small().tensor(rng, DType::Bool, first.shape(), 0.0)?
        } else {
            crate::values::pooled(rng, first, first.shape())?
        };
        bytes.extend_from_slice(t.bytes());
    }
    Tensor::from_bytes(first.dtype(), &shape, bytes)
}
