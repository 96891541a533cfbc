//! Shape and movement ops (§2.3).

use super::{arity, axis_ok, rank_ok, same_dtype};
use crate::op::{DimSpec, NarrowAttrs, PadAttrs, PadMode};
use crate::shape::try_numel;
use crate::{bail, Dim, Result, Shape, TensorType};

/// The `Infer` (−1) entry of a Reshape involving symbols: `numel(x)` over the other entries, where
/// each symbol of the target cancels one of `x`'s. Typed when the quotient is a static size or
/// exactly one symbol (`[b, 4, 8] → [-1, 32]` gives `b`; `[b, 4, 8] → [b, -1]` gives 32);
/// anything else (`b·c`, `3·b / 2`) is not a dim and is an error.
fn infer_symbolic(x: &TensorType, new_shape: &[DimSpec]) -> Result<Dim> {
    let mut syms: Vec<&str> = Vec::new();
    let mut size = 1usize;
    for d in x.shape.dims() {
        match d {
            Dim::Static(n) => size = size.saturating_mul(*n),
            Dim::Sym(s) => syms.push(s),
        }
    }
    let mut others = 1usize;
    for d in new_shape {
        match d {
            DimSpec::Static(n) => others = others.saturating_mul(*n),
            DimSpec::Sym(s) => match syms.iter().position(|x| x == s) {
                Some(i) => {
                    syms.remove(i);
                }
                None => bail!(Shape, "Reshape of {x} to {new_shape:?}: the target's symbol {s} is not a dim of the input, so -1 cannot be inferred"),
            },
            DimSpec::Infer => {}
        }
    }
    if others == 0 {
        bail!(Shape, "Reshape of {x} to {new_shape:?}: cannot infer a dim when the others multiply to 0");
    }
    if size == 0 {
        return Ok(Dim::Static(0));
    }
    match (size % others, size / others, syms.as_slice()) {
        (0, q, []) => Ok(Dim::Static(q)),
        (0, 1, [s]) => Ok(Dim::Sym(s.to_string())),
        _ => bail!(
            Shape,
            "Reshape of {x} to {new_shape:?}: the inferred dim would be {size}/{others}·{} — not a size or a single symbol; give it as a symbol",
            syms.join("·")
        ),
    }
}

pub(crate) fn reshape(new_shape: &[DimSpec], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Reshape")?;
    let x = &ins[0];
    let infers = new_shape.iter().filter(|d| matches!(d, DimSpec::Infer)).count();
    if infers > 1 {
        bail!(Attribute, "Reshape target {new_shape:?} has more than one inferred (-1) dim");
    }
    let has_sym = new_shape.iter().any(|d| matches!(d, DimSpec::Sym(_)));
    let out: Vec<Dim> = if has_sym || !x.shape.is_static() {
        // Symbolic reshapes are checked again when symbols are bound (the element counts must
        // agree); an inferred dim is typed here when it is a size or a single symbol.
        let inferred = if infers > 0 { Some(infer_symbolic(x, new_shape)?) } else { None };
        new_shape
            .iter()
            .map(|d| match d {
                DimSpec::Static(n) => Dim::Static(*n),
                DimSpec::Sym(s) => Dim::Sym(s.clone()),
                DimSpec::Infer => inferred.clone().unwrap_or(Dim::Static(0)),
            })
            .collect()
    } else {
        let n = try_numel(&x.dims()?)?;
        let statics: Vec<usize> = new_shape.iter().map(|d| if let DimSpec::Static(s) = d { *s } else { 1 }).collect();
        let Ok(known) = try_numel(&statics) else {
            bail!(Shape, "Reshape of {x} ({n} elements) to {new_shape:?}: the target's element count overflows")
        };
        let mut dims = Vec::with_capacity(new_shape.len());
        for d in new_shape {
            dims.push(match d {
                DimSpec::Static(s) => *s,
                DimSpec::Infer => {
                    if known == 0 {
                        bail!(
                            Shape,
                            "Reshape of {x} to {new_shape:?}: cannot infer a dim when the others multiply to 0"
                        );
                    }
                    if !n.is_multiple_of(known) {
                        bail!(Shape, "Reshape of {x} ({n} elements) to {new_shape:?}: {n} is not divisible by {known}");
                    }
                    n / known
                }
                DimSpec::Sym(_) => 0,
            });
        }
        match try_numel(&dims) {
            Ok(m) if m == n => {}
            Ok(m) => bail!(Shape, "Reshape of {x} ({n} elements) to {dims:?} ({m} elements)"),
            Err(_) => bail!(Shape, "Reshape of {x} ({n} elements) to {dims:?}: the target's element count overflows"),
        }
        dims.into_iter().map(Dim::Static).collect()
    };
    let t = TensorType { dtype: x.dtype, shape: Shape(out) };
    rank_ok(&t)?;
    Ok(vec![t])
}

pub(crate) fn transpose(perm: &[usize], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Transpose")?;
    let x = &ins[0];
    let r = x.rank();
    let mut seen = vec![false; r];
    if perm.len() != r {
        bail!(Axis, "Transpose perm {perm:?} has {} entries for {x} of rank {r}", perm.len());
    }
    for &p in perm {
        if p >= r || seen[p] {
            bail!(Axis, "Transpose perm {perm:?} is not a permutation of 0..{r}");
        }
        seen[p] = true;
    }
    let dims = perm.iter().map(|&p| x.shape.0[p].clone()).collect();
    Ok(vec![TensorType { dtype: x.dtype, shape: Shape(dims) }])
}

pub(crate) fn narrow(a: &NarrowAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Narrow")?;
    let x = &ins[0];
    axis_ok(a.axis, x.rank(), "Narrow")?;
    if a.step == 0 {
        bail!(Attribute, "Narrow step must be >= 1");
    }
    if let Some(d) = x.shape.0[a.axis].as_static() {
        if a.start > d {
            bail!(Attribute, "Narrow start {} > dim {d} of {x} on axis {}", a.start, a.axis);
        }
        // The last index read, start + (len − 1)·step; an overflow reads past any dim.
        let last = a.len.checked_sub(1).map(|l| l.checked_mul(a.step).and_then(|o| o.checked_add(a.start)));
        match last {
            Some(Some(i)) if i >= d => bail!(
                Attribute,
                "Narrow start {} len {} step {} reads index {i} past dim {d} of {x} on axis {}",
                a.start,
                a.len,
                a.step,
                a.axis
            ),
            Some(None) => bail!(
                Attribute,
                "Narrow start {} len {} step {} reads an index past usize::MAX (dim {d} of {x} on axis {})",
                a.start,
                a.len,
                a.step,
                a.axis
            ),
            _ => {}
        }
    } else {
        bail!(Shape, "Narrow on symbolic axis {} of {x} is not supported", a.axis);
    }
    let mut s = x.shape.clone();
    s.0[a.axis] = Dim::Static(a.len);
    Ok(vec![TensorType { dtype: x.dtype, shape: s }])
}

pub(crate) fn concat(axis: usize, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    if ins.is_empty() {
        bail!(Arity, "Concat needs at least one input");
    }
    same_dtype(ins, "Concat")?;
    let x0 = &ins[0];
    axis_ok(axis, x0.rank(), "Concat")?;
    let mut total = 0usize;
    for (i, t) in ins.iter().enumerate() {
        if t.rank() != x0.rank() {
            bail!(Shape, "Concat input {i} {t} has rank {} but input 0 {x0} has rank {}", t.rank(), x0.rank());
        }
        for a in 0..x0.rank() {
            if a != axis && t.shape.0[a] != x0.shape.0[a] {
                bail!(Shape, "Concat input {i} {t} differs from input 0 {x0} on axis {a}");
            }
        }
        match t.shape.0[axis].as_static() {
            Some(d) => match total.checked_add(d) {
                Some(t) => total = t,
                None => bail!(Shape, "Concat along axis {axis}: the sizes up to input {i} {t} overflow usize"),
            },
            None => bail!(Shape, "Concat along symbolic axis {axis} of {t} is not supported"),
        }
    }
    let mut s = x0.shape.clone();
    s.0[axis] = Dim::Static(total);
    Ok(vec![TensorType { dtype: x0.dtype, shape: s }])
}

pub(crate) fn expand(target: &Shape, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Expand")?;
    let x = &ins[0];
    if x.rank() > target.rank() {
        bail!(Shape, "Expand of {x} to {target}: input rank exceeds target rank");
    }
    let pad = target.rank() - x.rank();
    for (i, d) in x.shape.0.iter().enumerate() {
        let t = &target.0[i + pad];
        if d != t && *d != Dim::Static(1) {
            bail!(Shape, "Expand of {x} to {target}: input dim {d} on axis {i} is neither 1 nor {t}");
        }
    }
    let t = TensorType { dtype: x.dtype, shape: target.clone() };
    rank_ok(&t)?;
    Ok(vec![t])
}

pub(crate) fn reverse(axes: &[usize], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Reverse")?;
    let x = &ins[0];
    for (i, &a) in axes.iter().enumerate() {
        axis_ok(a, x.rank(), "Reverse")?;
        if axes[..i].contains(&a) {
            bail!(Axis, "Reverse axes {axes:?} repeat axis {a}");
        }
    }
    Ok(vec![x.clone()])
}

pub(crate) fn pad(a: &PadAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Pad")?;
    let x = &ins[0];
    let dims = x.shape.static_dims("Pad input")?;
    if a.pads_begin.len() != dims.len() || a.pads_end.len() != dims.len() {
        bail!(
            Attribute,
            "Pad of {x}: pads_begin {:?} and pads_end {:?} need {} entries each",
            a.pads_begin,
            a.pads_end,
            dims.len()
        );
    }
    for (ax, &d) in dims.iter().enumerate() {
        let (b, e) = (a.pads_begin[ax], a.pads_end[ax]);
        match a.mode {
            PadMode::Constant { value } => {
                if !value.is_finite() {
                    bail!(Attribute, "Pad constant value {value} is not finite");
                }
            }
            PadMode::Reflect => {
                if (b > 0 && b >= d) || (e > 0 && e >= d) {
                    bail!(Attribute, "Pad Reflect on axis {ax} of {x}: pads ({b}, {e}) must be < dim {d}");
                }
            }
            PadMode::Edge => {
                if d == 0 && (b > 0 || e > 0) {
                    bail!(Attribute, "Pad Edge on axis {ax} of {x}: the axis is empty, nothing to replicate");
                }
            }
        }
    }
    let mut out = Vec::with_capacity(dims.len());
    for ((&d, &b), &e) in dims.iter().zip(&a.pads_begin).zip(&a.pads_end) {
        match d.checked_add(b).and_then(|p| p.checked_add(e)) {
            Some(p) => out.push(p),
            None => bail!(Shape, "Pad of {x}: dim {d} padded by ({b}, {e}) overflows usize"),
        }
    }
    let t = TensorType::new(x.dtype, &out);
    Ok(vec![t])
}
