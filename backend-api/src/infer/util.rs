//! Small checks shared by the inference of the op families.

use crate::{bail, DType, DTypeSet, Dim, Result, Shape, TensorType};

/// A static dim.
pub(crate) fn st(n: usize) -> Dim {
    Dim::Static(n)
}

/// A type from a dtype and dims, checking the maximum rank (§1.2).
pub(crate) fn out(dtype: DType, dims: Vec<Dim>) -> Result<TensorType> {
    let t = TensorType { dtype, shape: Shape(dims) };
    crate::infer::rank_ok(&t)?;
    Ok(t)
}

/// Checks the exact rank.
pub(crate) fn rank_is(t: &TensorType, r: usize, what: &str) -> Result<()> {
    if t.rank() != r {
        bail!(Shape, "{what} {t} must have rank {r}, got rank {}", t.rank());
    }
    Ok(())
}

/// Checks a rank range.
pub(crate) fn rank_in(t: &TensorType, lo: usize, hi: usize, what: &str) -> Result<()> {
    if t.rank() < lo || t.rank() > hi {
        bail!(Shape, "{what} {t} must have rank {lo}..={hi}, got rank {}", t.rank());
    }
    Ok(())
}

/// Checks the exact shape (symbols match only the same symbol).
pub(crate) fn shape_is(t: &TensorType, want: &[Dim], what: &str) -> Result<()> {
    if t.shape.0 != want {
        bail!(Shape, "{what} {t} must have shape {}", Shape(want.to_vec()));
    }
    Ok(())
}

/// Checks one exact dtype.
pub(crate) fn dtype_is(t: &TensorType, d: DType, what: &str) -> Result<()> {
    if t.dtype != d {
        bail!(DType, "{what} {t} must be {d}");
    }
    Ok(())
}

/// An index-producing op's `index_dtype` must be I32 or I64 (§1.6).
pub(crate) fn index_dtype_ok(d: DType, op: &str) -> Result<()> {
    if d != DType::I32 && d != DType::I64 {
        bail!(Attribute, "{op} index_dtype {d} must be I32 or I64");
    }
    Ok(())
}

/// An index input must have an index dtype (§1.6).
pub(crate) fn index_input(t: &TensorType, what: &str) -> Result<()> {
    crate::infer::dtype_in(t, DTypeSet::INDEX, what)
}

/// `eps` must be finite and ≥ 0 (§2.7).
pub(crate) fn eps_ok(eps: f32, op: &str) -> Result<()> {
    if !eps.is_finite() || eps < 0.0 {
        bail!(Attribute, "{op} eps {eps} must be finite and >= 0");
    }
    Ok(())
}

/// The static size of `t.shape[axis]`, or a `Shape` error saying the rule needs it.
pub(crate) fn static_at(t: &TensorType, axis: usize, what: &str) -> Result<usize> {
    match t.shape.0.get(axis).and_then(Dim::as_static) {
        Some(d) => Ok(d),
        None => bail!(Shape, "{what} {t}: axis {axis} must be a static dim for this rule"),
    }
}

/// Fails with `Shape` when `t.shape[axis]` is statically 0.
pub(crate) fn nonzero_at(t: &TensorType, axis: usize, what: &str) -> Result<()> {
    if t.shape.0.get(axis) == Some(&Dim::Static(0)) {
        bail!(Shape, "{what} {t}: axis {axis} must be >= 1");
    }
    Ok(())
}

/// `a · b`, or a `Shape` error naming `what` when the product overflows `usize`.
pub(crate) fn mul(a: usize, b: usize, what: &str) -> Result<usize> {
    match a.checked_mul(b) {
        Some(p) => Ok(p),
        None => bail!(Shape, "{what}: {a}·{b} overflows the index range"),
    }
}

/// The effective kernel extent `dilation·(k − 1) + 1` (§2.9), or an `Attribute` error on overflow.
pub(crate) fn kernel_extent(dilation: usize, k: usize, what: &str) -> Result<usize> {
    match dilation.checked_mul(k.saturating_sub(1)).and_then(|e| e.checked_add(1)) {
        Some(e) => Ok(e),
        None => bail!(Attribute, "{what}: kernel extent {dilation}·({k} − 1) + 1 overflows the index range"),
    }
}
