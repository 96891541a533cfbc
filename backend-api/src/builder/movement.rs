//! [`GraphBuilder`] methods that add the ops of §2.3 (shape and movement).

use crate::op::*;
use crate::shape::{canon_axes, canon_axis};
use crate::{bail, GraphBuilder, Result, Shape, Value};

impl GraphBuilder {
    /// Reshape; `-1` infers one dim.
    pub fn reshape(&mut self, x: Value, new_shape: &[i64]) -> Result<Value> {
        let mut dims = Vec::with_capacity(new_shape.len());
        for &d in new_shape {
            dims.push(match d {
                -1 => DimSpec::Infer,
                d if d < 0 => bail!(Attribute, "Reshape entry {d} is negative (only -1 is allowed)"),
                d => match usize::try_from(d) {
                    Ok(d) => DimSpec::Static(d),
                    Err(_) => bail!(Attribute, "Reshape entry {d} does not fit this host's usize"),
                },
            });
        }
        self.add1(Op::Reshape { new_shape: dims }, &[x])
    }
    /// Reshape to entries that may be symbols: `reshape_to(x, &["batch".into(), DimSpec::Infer])`
    /// (`DimSpec` converts from `usize` and `&str`). `Infer` next to symbols is typed when it
    /// comes out as a size or a single symbol.
    pub fn reshape_to(&mut self, x: Value, new_shape: &[DimSpec]) -> Result<Value> {
        self.add1(Op::Reshape { new_shape: new_shape.to_vec() }, &[x])
    }
    /// Axis permutation (negative entries accepted).
    pub fn transpose(&mut self, x: Value, perm: &[i64]) -> Result<Value> {
        let r = self.rank(x)?;
        if perm.len() != r {
            bail!(Axis, "Transpose perm {perm:?} has {} entries for rank {r}", perm.len());
        }
        let perm = if r == 0 { vec![] } else { canon_axes(perm, r)? };
        self.add1(Op::Transpose { perm }, &[x])
    }
    /// Strided slice (negative `start` counts from the end).
    pub fn narrow(&mut self, x: Value, axis: i64, start: i64, len: usize, step: usize) -> Result<Value> {
        let t = self.value_type(x)?.clone();
        let axis = canon_axis(axis, t.rank())?;
        let d = t.shape.0.get(axis).and_then(crate::Dim::as_static).unwrap_or(0);
        let from_end = i64::try_from(d).ok().and_then(|d| start.checked_add(d));
        let start = match (start < 0, from_end.map(usize::try_from), usize::try_from(start)) {
            (false, _, Ok(s)) => s,
            (true, Some(Ok(s)), _) => s,
            _ => bail!(Attribute, "Narrow start {start} is before the beginning of axis {axis} (size {d}) of {t}"),
        };
        self.add1(Op::Narrow(NarrowAttrs { axis, start, len, step }), &[x])
    }
    /// Concatenation along `axis`.
    pub fn concat(&mut self, xs: &[Value], axis: i64) -> Result<Value> {
        let Some(&x0) = xs.first() else { bail!(Arity, "Concat needs at least one input") };
        let axis = canon_axis(axis, self.rank(x0)?)?;
        self.add1(Op::Concat { axis }, xs)
    }
    /// numpy `broadcast_to`.
    pub fn expand(&mut self, x: Value, shape: impl Into<Shape>) -> Result<Value> {
        self.add1(Op::Expand { shape: shape.into() }, &[x])
    }
    /// Flip along axes.
    pub fn reverse(&mut self, x: Value, axes: &[i64]) -> Result<Value> {
        let axes = if axes.is_empty() { vec![] } else { canon_axes(axes, self.rank(x)?)? };
        self.add1(Op::Reverse { axes }, &[x])
    }
    /// Border padding.
    pub fn pad(&mut self, x: Value, pads_begin: &[usize], pads_end: &[usize], mode: PadMode) -> Result<Value> {
        let a = PadAttrs { pads_begin: pads_begin.to_vec(), pads_end: pads_end.to_vec(), mode };
        self.add1(Op::Pad(a), &[x])
    }
}
