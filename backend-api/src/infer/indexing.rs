//! Indexing (§2.4): `Gather`, `ScatterAdd`, `GatherBackward`.

use super::util::{index_input, out};
use super::{arity, axis_ok, dtype_in};
use crate::op::{GatherAttrs, GatherBackwardAttrs, ScatterAddAttrs};
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
