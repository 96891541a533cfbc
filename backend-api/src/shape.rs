//! Shapes with static and symbolic dims (§1.2) and the shape helpers every backend shares.

use crate::{bail, Result};
use std::fmt;

/// The maximum rank of any tensor.
pub const MAX_RANK: usize = 8;

/// One dimension: a static size or a named symbol bound at run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A known size.
    Static(usize),
    /// A symbol such as `"batch"`, bound to a size when a run's inputs are known.
    Sym(String),
}

impl Dim {
    /// The size if static.
    pub fn as_static(&self) -> Option<usize> {
        match self {
            Dim::Static(n) => Some(*n),
            Dim::Sym(_) => None,
        }
    }
}

impl From<usize> for Dim {
    fn from(n: usize) -> Dim {
        Dim::Static(n)
    }
}

impl From<&str> for Dim {
    fn from(s: &str) -> Dim {
        Dim::Sym(s.to_string())
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Sym(s) => f.write_str(s),
        }
    }
}

/// A list of dims. Rank 0 is a scalar.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Shape(pub Vec<Dim>);

impl Shape {
    /// A shape of static dims.
    pub fn of(dims: &[usize]) -> Shape {
        Shape(dims.iter().map(|&d| Dim::Static(d)).collect())
    }

    /// The rank (number of dims).
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The dims.
    pub fn dims(&self) -> &[Dim] {
        &self.0
    }

    /// The static sizes, or `None` when a dim is symbolic.
    pub fn as_static(&self) -> Option<Vec<usize>> {
        self.0.iter().map(Dim::as_static).collect()
    }

    /// The static sizes, or a `Shape` error naming `what` when a dim is symbolic.
    pub fn static_dims(&self, what: &str) -> Result<Vec<usize>> {
        match self.as_static() {
            Some(d) => Ok(d),
            None => bail!(Shape, "{what} has symbolic shape {self}; this rule needs static dims"),
        }
    }

    /// Whether every dim is static.
    pub fn is_static(&self) -> bool {
        self.0.iter().all(|d| d.as_static().is_some())
    }

    /// The element count when static and when it fits `usize` (`None` otherwise; validated
    /// graphs never hold a shape whose count overflows).
    pub fn numel(&self) -> Option<usize> {
        self.as_static().and_then(|d| try_numel(&d).ok())
    }
}

impl From<&[usize]> for Shape {
    fn from(d: &[usize]) -> Shape {
        Shape::of(d)
    }
}

impl From<Vec<usize>> for Shape {
    fn from(d: Vec<usize>) -> Shape {
        Shape::of(&d)
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(d: [usize; N]) -> Shape {
        Shape::of(&d)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|d| d.to_string()).collect();
        write!(f, "[{}]", parts.join(", "))
    }
}

/// Product of the dims (1 for rank 0).
pub fn numel(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// The largest byte size of one tensor: `isize::MAX`, what a Rust allocation and a slice can hold
/// (and what the `u64` byte counts of a device fit without overflow).
pub const MAX_TENSOR_BYTES: usize = isize::MAX as usize;

/// Product of the dims (1 for rank 0), or a `Shape` error when it overflows `usize`. Every size
/// computed from a graph, a file or a caller goes through this or [`nbytes`].
pub fn try_numel(dims: &[usize]) -> Result<usize> {
    // An empty tensor has 0 elements however its other dims multiply.
    if dims.contains(&0) {
        return Ok(0);
    }
    match dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) {
        Some(n) => Ok(n),
        None => bail!(Shape, "a tensor of dims {dims:?} has more elements than fit {} bits", usize::BITS),
    }
}

/// Bytes of a dense `dtype` tensor of `dims`, or a `Shape` error when they exceed
/// [`MAX_TENSOR_BYTES`] (or the element count overflows).
pub fn nbytes(dtype: crate::DType, dims: &[usize]) -> Result<usize> {
    let n = try_numel(dims)?;
    match n.checked_mul(dtype.size()).filter(|&b| b <= MAX_TENSOR_BYTES) {
        Some(b) => Ok(b),
        None => bail!(Shape, "a {dtype} tensor of dims {dims:?} needs more than {MAX_TENSOR_BYTES} bytes"),
    }
}

/// Row-major strides (in elements) of a contiguous tensor. A suffix product that overflows (only
/// possible for an empty tensor such as `[0, 2^62, 4]`, whose strides are never used to address an
/// element) saturates at `usize::MAX` instead of wrapping; [`try_strides`] refuses it instead.
pub fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    let mut acc = 1usize;
    for (st, &d) in s.iter_mut().zip(dims).rev() {
        *st = acc;
        acc = acc.saturating_mul(d);
    }
    s
}

/// Row-major strides, or a `Shape` error when a suffix product overflows `usize`.
pub fn try_strides(dims: &[usize]) -> Result<Vec<usize>> {
    let mut s = vec![1usize; dims.len()];
    let mut acc = Some(1usize);
    for (st, &d) in s.iter_mut().zip(dims).rev() {
        match acc {
            Some(a) => *st = a,
            None => bail!(Shape, "the strides of dims {dims:?} overflow {} bits", usize::BITS),
        }
        acc = acc.and_then(|a| a.checked_mul(d));
    }
    Ok(s)
}

/// Strides of `from` read as if broadcast to `to` (§1.4): 0 on stretched and missing axes.
/// `from` must broadcast to `to` (validation guarantees it for every node); extra leading axes of
/// `from` (which validation never lets through) are ignored rather than panicking.
pub fn broadcast_strides(from: &[usize], to: &[usize]) -> Vec<usize> {
    let own = strides(from);
    let skip = from.len().saturating_sub(to.len());
    let pad = to.len().saturating_sub(from.len());
    (0..to.len())
        .map(|i| {
            if i < pad {
                return 0;
            }
            let j = i - pad + skip;
            if from[j] == 1 {
                0
            } else {
                own[j]
            }
        })
        .collect()
}

/// Canonicalises an axis in `[-rank, rank)` (§1.5).
pub fn canon_axis(axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if rank == 0 {
        bail!(Axis, "axis {axis} given for a rank-0 tensor, which has no axes");
    }
    if axis < -r || axis >= r {
        bail!(Axis, "axis {axis} is outside [-{r}, {r}) for rank {rank}");
    }
    Ok(if axis < 0 { (axis + r) as usize } else { axis as usize })
}

/// Canonicalises a set of axes, rejecting duplicates (§1.5). Keeps the given order.
pub fn canon_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let c = canon_axis(a, rank)?;
        if out.contains(&c) {
            bail!(Axis, "axis {a} (canonical {c}) is listed twice in {axes:?}");
        }
        out.push(c);
    }
    Ok(out)
}

/// Broadcasts two shapes by numpy rules (§1.4), symbols included (equal symbols match; a symbol
/// against 1 gives the symbol; a symbol against another size cannot be decided and is an error).
pub fn broadcast_shapes(a: &Shape, b: &Shape) -> Result<Shape> {
    let r = a.rank().max(b.rank());
    let one = Dim::Static(1);
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        let da = if i + a.rank() >= r { &a.0[i + a.rank() - r] } else { &one };
        let db = if i + b.rank() >= r { &b.0[i + b.rank() - r] } else { &one };
        let d = match (da, db) {
            (x, y) if x == y => x.clone(),
            (Dim::Static(1), y) => y.clone(),
            (x, Dim::Static(1)) => x.clone(),
            _ => bail!(Shape, "shapes {a} and {b} do not broadcast (dim {da} against {db})"),
        };
        out.push(d);
    }
    Ok(Shape(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn sizes_are_checked() {
        assert_eq!(try_numel(&[]).unwrap(), 1);
        assert_eq!(try_numel(&[3, 0, 1 << 62]).unwrap(), 0);
        assert_eq!(try_numel(&[1 << 62, 1 << 62, 0]).unwrap(), 0, "0 however the other dims multiply");
        assert!(try_numel(&[1 << 62, 4]).is_err());
        assert_eq!(nbytes(DType::F16, &[3, 5]).unwrap(), 30);
        assert!(nbytes(DType::F32, &[1 << 62]).is_err(), "bytes overflow");
        assert!(nbytes(DType::U8, &[usize::MAX]).is_err(), "beyond isize::MAX");
        assert_eq!(nbytes(DType::U8, &[MAX_TENSOR_BYTES]).unwrap(), MAX_TENSOR_BYTES);
    }

    #[test]
    fn strides_never_wrap() {
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(try_strides(&[2, 3, 4]).unwrap(), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
        // An empty tensor whose suffix products overflow: saturated, or refused by try_strides.
        assert_eq!(strides(&[1, 0, 1 << 62, 4]), vec![0, usize::MAX, 4, 1]);
        assert!(try_strides(&[1, 0, 1 << 62, 4]).unwrap_err().to_string().contains("overflow"));
        assert_eq!(Shape::of(&[1 << 62, 4]).numel(), None);
    }
}
