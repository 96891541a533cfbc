//! Reductions and scans (§2.5): `Reduce`, `ArgMax`/`ArgMin`, `TopK`, `Cumsum`, `CumsumBackward`.

use super::util::{index_dtype_ok, nonzero_at, out, st, static_at};
use super::{arity, axis_ok, dtype_in};
use crate::op::{ArgReduceAttrs, CumsumAttrs, ReduceAttrs, TopKAttrs};
use crate::{bail, DTypeSet, Dim, Result, Shape, TensorType};

pub(crate) fn reduce(a: &ReduceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Reduce")?;
    let x = &ins[0];
    dtype_in(x, a.op.dtypes(), &format!("Reduce.{} input x", a.op.name()))?;
    for (i, &ax) in a.axes.iter().enumerate() {
        axis_ok(ax, x.rank(), "Reduce")?;
        if a.axes[..i].contains(&ax) {
            bail!(Axis, "Reduce axes {:?} repeat axis {ax}", a.axes);
        }
    }
    Ok(vec![TensorType { dtype: x.dtype, shape: reduced_shape(&x.shape, &a.axes, a.keep_dims) }])
}

/// `shape` with `axes` removed, or set to 1 when `keep_dims`.
pub(crate) fn reduced_shape(shape: &Shape, axes: &[usize], keep_dims: bool) -> Shape {
    let mut out = Vec::with_capacity(shape.rank());
    for (i, d) in shape.0.iter().enumerate() {
        if !axes.contains(&i) {
            out.push(d.clone());
        } else if keep_dims {
            out.push(Dim::Static(1));
        }
    }
    Shape(out)
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
