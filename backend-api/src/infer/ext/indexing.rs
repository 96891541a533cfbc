//! Indexing (§2.4), arg-reductions, TopK and Cumsum (§2.5.2–2.5.6).

use super::util::{index_dtype_ok, index_input, nonzero_at, out, st, static_at};
use crate::infer::reduce::reduced_shape;
use crate::infer::{arity, axis_ok, dtype_in};
use crate::op::{ArgReduceAttrs, CumsumAttrs, GatherAttrs, GatherBackwardAttrs, ScatterAddAttrs, TopKAttrs};
use crate::{bail, DTypeSet, Dim, Result, Shape, TensorType};

/// `data.shape[:axis] ++ indices.shape ++ data.shape[axis+1:]`.
fn gathered(data: &Shape, axis: usize, indices: &Shape) -> Vec<Dim> {
    let mut dims = data.0[..axis].to_vec();
    dims.extend(indices.0.iter().cloned());
    dims.extend(data.0[axis + 1..].iter().cloned());
    dims
}

pub(crate) fn gather(a: &GatherAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "Gather")?;
    let (data, idx) = (&ins[0], &ins[1]);
    axis_ok(a.axis, data.rank(), "Gather data")?;
    index_input(idx, "Gather input indices")?;
    Ok(vec![out(data.dtype, gathered(&data.shape, a.axis, &idx.shape))?])
}

pub(crate) fn scatter_add(a: &ScatterAddAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "ScatterAdd")?;
    let (data, idx, upd) = (&ins[0], &ins[1], &ins[2]);
    dtype_in(data, DTypeSet::NUMERIC.union(DTypeSet::C64), "ScatterAdd input data")?;
    axis_ok(a.axis, data.rank(), "ScatterAdd data")?;
    index_input(idx, "ScatterAdd input indices")?;
    if upd.dtype != data.dtype {
        bail!(DType, "ScatterAdd updates {upd} must have the dtype of data {data}");
    }
    let want = Shape(gathered(&data.shape, a.axis, &idx.shape));
    if upd.shape != want {
        bail!(Shape, "ScatterAdd updates {upd} must have shape {want} (data {data}, indices {idx}, axis {})", a.axis);
    }
    Ok(vec![data.clone()])
}

pub(crate) fn gather_backward(a: &GatherBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "GatherBackward")?;
    let (dy, idx) = (&ins[0], &ins[1]);
    dtype_in(dy, DTypeSet::FLOAT, "GatherBackward input dy")?;
    index_input(idx, "GatherBackward input indices")?;
    axis_ok(a.axis, a.data_shape.rank(), "GatherBackward data_shape")?;
    let want = Shape(gathered(&a.data_shape, a.axis, &idx.shape));
    if dy.shape != want {
        bail!(
            Shape,
            "GatherBackward dy {dy} must have shape {want} (data_shape {}, indices {idx}, axis {})",
            a.data_shape,
            a.axis
        );
    }
    Ok(vec![out(dy.dtype, a.data_shape.0.clone())?])
}

pub(crate) fn arg_reduce(a: &ArgReduceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "ArgMax/ArgMin")?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::NUMERIC.union(DTypeSet::BOOL), "ArgMax/ArgMin input x")?;
    axis_ok(a.axis, x.rank(), "ArgMax/ArgMin")?;
    index_dtype_ok(a.index_dtype, "ArgMax/ArgMin")?;
    nonzero_at(x, a.axis, "ArgMax/ArgMin input x (the reduced axis is empty)")?;
    Ok(vec![TensorType { dtype: a.index_dtype, shape: reduced_shape(&x.shape, &[a.axis], a.keep_dims) }])
}

pub(crate) fn top_k(a: &TopKAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "TopK")?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::NUMERIC, "TopK input x")?;
    axis_ok(a.axis, x.rank(), "TopK")?;
    index_dtype_ok(a.index_dtype, "TopK")?;
    let n = static_at(x, a.axis, "TopK input x (k is checked against the axis size)")?;
    if a.k > n {
        bail!(Attribute, "TopK k = {} exceeds the size {n} of axis {} of {x}", a.k, a.axis);
    }
    let mut dims = x.shape.0.clone();
    dims[a.axis] = st(a.k);
    Ok(vec![out(x.dtype, dims.clone())?, out(a.index_dtype, dims)?])
}

pub(crate) fn cumsum(a: &CumsumAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Cumsum")?;
    dtype_in(&ins[0], DTypeSet::NUMERIC, "Cumsum input x")?;
    axis_ok(a.axis, ins[0].rank(), "Cumsum")?;
    Ok(vec![ins[0].clone()])
}

/// `CumsumBackward` (§2.5.6): `Cumsum`'s rules with a float `dy`. The op dispatch currently sends
/// both ops to [`cumsum`], so the builder runs this stricter check before adding the node.
pub(crate) fn cumsum_backward(a: &CumsumAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "CumsumBackward")?;
    dtype_in(&ins[0], DTypeSet::FLOAT, "CumsumBackward input dy")?;
    cumsum(a, ins)
}
