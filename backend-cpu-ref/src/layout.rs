//! Index arithmetic on row-major shapes: multi-index iteration, strides, broadcasting, and the
//! byte gather that every movement op is written with.

use crate::mem::{try_bytes, try_vec};
use backend_api::shape::try_numel;
use backend_api::{bail, DType, Dim, Result, Shape, Tensor};

/// The sizes bound to symbolic dims during one run: (symbol, size, who bound it).
#[derive(Clone, Debug, Default)]
pub struct Bindings(Vec<(String, usize, String)>);

impl Bindings {
    /// Bindings as [`backend_api::check_slot`] records them.
    pub fn from_slots(v: Vec<(String, usize, String)>) -> Bindings {
        Bindings(v)
    }

    /// The size bound to `sym`, or a `ShapeBinding` error.
    pub fn get(&self, sym: &str) -> Result<usize> {
        match self.0.iter().find(|(s, _, _)| s == sym) {
            Some((_, n, _)) => Ok(*n),
            None => bail!(ShapeBinding, "symbol {sym} is not bound by any run input"),
        }
    }

    /// Binds `sym` to `n` (named after `by`), or checks an earlier binding.
    pub fn bind(&mut self, sym: &str, n: usize, by: &str) -> Result<()> {
        match self.0.iter().find(|(s, _, _)| s == sym) {
            Some((_, prev, who)) if *prev != n => {
                bail!(ShapeBinding, "symbol {sym} is {prev} from {who} but {n} from {by}")
            }
            Some(_) => Ok(()),
            None => {
                self.0.push((sym.to_string(), n, by.to_string()));
                Ok(())
            }
        }
    }

    /// The sizes of `shape`, symbols looked up.
    pub fn resolve(&self, shape: &Shape) -> Result<Vec<usize>> {
        shape
            .dims()
            .iter()
            .map(|d| match d {
                Dim::Static(n) => Ok(*n),
                Dim::Sym(s) => self.get(s),
            })
            .collect()
    }

    /// Checks computed sizes against a declared shape, binding symbols seen for the first time; a
    /// mismatch is the deferred shape check of §1.2 failing (`ShapeBinding`).
    pub fn check(&mut self, declared: &Shape, got: &[usize], what: &str) -> Result<()> {
        if declared.rank() != got.len() {
            bail!(ShapeBinding, "{what} has shape {got:?} but was declared {declared}");
        }
        for (d, &n) in declared.dims().iter().zip(got) {
            match d {
                Dim::Static(s) if *s != n => {
                    bail!(ShapeBinding, "{what} has shape {got:?} but was declared {declared}")
                }
                Dim::Static(_) => {}
                Dim::Sym(s) => self.bind(s, n, what)?,
            }
        }
        Ok(())
    }
}

/// The element count of `dims`: 0 when any dim is 0 (even if the others multiply past `usize`),
/// else the checked product ([`try_numel`]: a `Shape` error on overflow).
pub fn count(dims: &[usize]) -> Result<usize> {
    if dims.contains(&0) {
        return Ok(0);
    }
    try_numel(dims)
}

/// `(outer, len, inner)` of `dims` around `axis`: the element counts of the dims before it, its
/// size, and the element count of the dims after it (each checked, 0 when a dim is 0).
pub fn split(dims: &[usize], axis: usize, what: &str) -> Result<(usize, usize, usize)> {
    match (dims.get(..axis), dims.get(axis), dims.get(axis + 1..)) {
        (Some(before), Some(&len), Some(after)) => Ok((count(before)?, len, count(after)?)),
        _ => bail!(Axis, "{what}: axis {axis} out of range for shape {dims:?}"),
    }
}

/// Calls `f` with every multi-index of `dims` in row-major order (once for rank 0, never when a
/// dim is 0).
pub fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    if dims.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0usize; dims.len()];
    loop {
        f(&idx)?;
        let mut axis = dims.len();
        loop {
            if axis == 0 {
                return Ok(());
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < dims[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// Row-major strides (in elements) of a contiguous tensor of `dims`, products checked. An empty
/// tensor gets all-zero strides: no element of it is ever addressed, and its other dims may
/// multiply past `usize` (`[0, 2^62, 2^62]`).
pub fn strides(dims: &[usize]) -> Result<Vec<usize>> {
    let mut s = vec![0usize; dims.len()];
    if dims.contains(&0) {
        return Ok(s);
    }
    let mut acc = 1usize;
    for (st, &d) in s.iter_mut().zip(dims).rev() {
        *st = acc;
        let Some(next) = acc.checked_mul(d) else { bail!(Shape, "a tensor of dims {dims:?} has too many elements") };
        acc = next;
    }
    Ok(s)
}

/// The linear (row-major) offset of `idx` given `strides`. Saturates instead of wrapping, so an
/// index outside the tensor gives an offset outside it (which every reader turns into an error),
/// never an alias of a valid one.
pub fn offset(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).fold(0usize, |acc, (i, s)| acc.saturating_add(i.saturating_mul(*s)))
}

/// The numpy broadcast of several shapes (§1.4).
pub fn broadcast_shape(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        let pad = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[pad + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                bail!(Shape, "shapes {shapes:?} do not broadcast (dim {d} against {o} on axis {})", pad + i);
            }
        }
    }
    Ok(out)
}

/// Strides that read a tensor of shape `from` as if broadcast to `to`: 0 on stretched and on
/// missing leading axes.
pub fn broadcast_strides(from: &[usize], to: &[usize]) -> Result<Vec<usize>> {
    if from.len() > to.len() {
        bail!(Shape, "cannot broadcast shape {from:?} to the lower-rank shape {to:?}");
    }
    let own = strides(from)?;
    let pad = to.len() - from.len();
    let mut out = vec![0usize; to.len()];
    for (i, &d) in from.iter().enumerate() {
        if d == to[pad + i] {
            out[pad + i] = if d == 1 { 0 } else { own[i] };
        } else if d != 1 {
            bail!(Shape, "shape {from:?} does not broadcast to {to:?} (axis {i})");
        }
    }
    Ok(out)
}

/// For every element of `to` (row-major), the linear index of the element of `from` it reads under
/// broadcasting.
pub fn broadcast_map(from: &[usize], to: &[usize]) -> Result<Vec<usize>> {
    let st = broadcast_strides(from, to)?;
    let mut map = try_vec(count(to)?)?;
    for_each_index(to, |idx| {
        map.push(offset(idx, &st));
        Ok(())
    })?;
    Ok(map)
}

/// The bytes of element `i` of `t`, or an error (never a panic) if `i` is out of range.
pub fn element(t: &Tensor, i: usize) -> Result<&[u8]> {
    let s = t.dtype().size();
    let range = i.checked_mul(s).and_then(|start| Some(start..start.checked_add(s)?));
    match range.and_then(|r| t.bytes().get(r)) {
        Some(b) => Ok(b),
        None => bail!(Shape, "element {i} is outside a {}{:?} tensor", t.dtype(), t.shape()),
    }
}

/// Builds a tensor of `x`'s dtype and shape `out_shape` whose element at multi-index `o` is
/// `x[src(o)]` (a linear index), or the element `fill` when `src` gives `None`.
pub fn gather(
    x: &Tensor,
    out_shape: &[usize],
    fill: Option<&[u8]>,
    mut src: impl FnMut(&[usize]) -> Option<usize>,
) -> Result<Tensor> {
    let dtype: DType = x.dtype();
    let mut data = try_bytes(dtype, out_shape)?;
    for_each_index(out_shape, |o| {
        match (src(o), fill) {
            (Some(i), _) => data.extend_from_slice(element(x, i)?),
            (None, Some(f)) => data.extend_from_slice(f),
            (None, None) => bail!(Shape, "output index {o:?} maps outside the input {:?}", x.shape()),
        }
        Ok(())
    })?;
    Tensor::from_bytes(dtype, out_shape, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_row_major() {
        let mut seen = Vec::new();
        for_each_index(&[2, 3], |i| {
            seen.push(i.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![vec![0, 0], vec![0, 1], vec![0, 2], vec![1, 0], vec![1, 1], vec![1, 2]]);
        let mut n = 0;
        for_each_index(&[], |_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 1);
        for_each_index(&[3, 0], |_| panic!("no elements")).unwrap();
    }

    #[test]
    fn sizes_are_checked_and_empty_wins() {
        let g = 1usize << 62;
        assert_eq!(count(&[g, g, 0]).unwrap(), 0);
        assert_eq!(count(&[g, 4]).unwrap_err().kind(), backend_api::ErrorKind::Shape);
        assert_eq!(strides(&[g, g, 0]).unwrap(), vec![0, 0, 0]);
        assert_eq!(strides(&[2, 3, 4]).unwrap(), vec![12, 4, 1]);
        assert!(strides(&[g, 8, 1]).is_err());
        assert_eq!(split(&[g, 0, g], 1, "t").unwrap(), (g, 0, g));
        assert_eq!(split(&[g, g, 0], 0, "t").unwrap(), (1, g, 0));
        assert_eq!(split(&[2], 1, "t").unwrap_err().kind(), backend_api::ErrorKind::Axis);
        for_each_index(&[g, g, 0], |_| panic!("no elements")).unwrap();
        assert_eq!(offset(&[usize::MAX, 1], &[2, 1]), usize::MAX);
        let t = Tensor::from_slice(&[2], &[1u8, 2]).unwrap();
        assert!(element(&t, usize::MAX).is_err());
    }

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(broadcast_shape(&[&[2, 1, 3], &[4, 1]]).unwrap(), vec![2, 4, 3]);
        assert_eq!(broadcast_shape(&[&[1], &[0]]).unwrap(), vec![0]);
        assert!(broadcast_shape(&[&[2], &[3]]).is_err());
        assert_eq!(broadcast_map(&[3], &[2, 3]).unwrap(), vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(broadcast_map(&[2, 1], &[2, 3]).unwrap(), vec![0, 0, 0, 1, 1, 1]);
        assert!(broadcast_map(&[2, 3], &[3]).is_err());
    }
}
