//! Reductions (§2.5.1).

use super::{arity, axis_ok, dtype_in};
use crate::op::ReduceAttrs;
use crate::{bail, Dim, Result, Shape, TensorType};

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
