//! Gather, ScatterAdd, GatherBackward (§2.4), with the index rule of §1.6: negative indices count
//! from the end, anything still outside `[0, A)` reads as zero (gather) or is skipped (scatter).
//!
//! Index values are held as i128 and resolved against the axis size in i128, so no index value
//! of any index dtype can overflow or alias a valid position. Offsets built from checked shapes
//! are in range by construction; offsets built from index values are only used after
//! [`resolve`] has placed them in `[0, A)`.

use crate::layout::{count, element, split, Bindings};
use crate::mem::{try_bytes, try_filled};
use crate::value::{decode, encode, floats, from_floats, scalars, to_int, wrap, Scalar};
use backend_api::op::GatherBackwardAttrs;
use backend_api::shape::nbytes;
use backend_api::{bail, DType, Result, Tensor};
use std::collections::BTreeMap;

/// `(outer, len, inner)` of `dims` around `axis`: the products of the dims before it, its size,
/// and the product of the dims after it.
pub(crate) fn around(dims: &[usize], axis: usize, what: &str) -> Result<(usize, usize, usize)> {
    split(dims, axis, what)
}

/// `a + b` for two elements of `dt`: floats in f64 (rounded later, once), integers wrapped to
/// `dt` (§1.8), C64 per component.
pub(crate) fn add(a: Scalar, b: Scalar, dt: DType) -> Result<Scalar> {
    Ok(match (a, b) {
        (Scalar::F(x), Scalar::F(y)) => Scalar::F(x + y),
        (Scalar::I(x), Scalar::I(y)) => Scalar::I(wrap(x.wrapping_add(y), dt)),
        (Scalar::C(ar, ai), Scalar::C(br, bi)) => Scalar::C(ar + br, ai + bi),
        (a, b) => bail!(DType, "cannot add {a:?} and {b:?} as {dt}"),
    })
}

/// The values of an index tensor (I32, I64 or U32) as i128; a `DType` error for other dtypes.
pub(crate) fn index_values(indices: &Tensor, op: &str) -> Result<Vec<i128>> {
    match indices.dtype() {
        DType::I32 | DType::I64 | DType::U32 => {}
        d => bail!(DType, "{op} indices must be I32, I64 or U32, got {d}{:?}", indices.shape()),
    }
    // Every value of these dtypes fits I64, so this conversion is the identity.
    Ok(scalars(indices)?.into_iter().map(|s| to_int(s, DType::I64)).collect())
}

/// §1.6: `i` addressing an axis of size `a`, or `None` when out of range.
pub(crate) fn resolve(i: i128, a: usize) -> Option<usize> {
    let a = a as i128;
    let r = if i < 0 { i + a } else { i };
    if (0..a).contains(&r) {
        usize::try_from(r).ok()
    } else {
        None
    }
}

/// `dims[:axis] ++ indices ++ dims[axis+1:]`.
fn gathered(dims: &[usize], axis: usize, indices: &[usize]) -> Vec<usize> {
    let mut out = dims[..axis].to_vec();
    out.extend_from_slice(indices);
    out.extend_from_slice(&dims[axis + 1..]);
    out
}

/// `out[o, j, t] = data[o, resolve(indices[j]), t]`, zero (all-zero bytes: +0, 0, false, 0+0i)
/// where the index is out of range (§2.4.1). Copies bytes, so it is exact for every dtype.
pub fn gather(data: &Tensor, indices: &Tensor, axis: usize) -> Result<Tensor> {
    let (outer, a, inner) = around(data.shape(), axis, "Gather data")?;
    let idx = index_values(indices, "Gather")?;
    let shape = gathered(data.shape(), axis, indices.shape());
    let mut out = try_bytes(data.dtype(), &shape)?;
    if out.capacity() == 0 {
        // No elements: the other dims may be huge and the loops below would run for nothing.
        return Tensor::from_bytes(data.dtype(), &shape, out);
    }
    let zero = try_filled(nbytes(data.dtype(), &[inner])?, 0u8)?;
    for o in 0..outer {
        for &i in &idx {
            match resolve(i, a) {
                Some(r) => {
                    // Rows of the (non-empty) data, so every product is below its byte length;
                    // checked anyway, a failure reads as out of range.
                    let start = o.checked_mul(a).and_then(|x| x.checked_add(r)).and_then(|x| x.checked_mul(zero.len()));
                    let row = start.and_then(|s| Some(s..s.checked_add(zero.len())?));
                    match row.and_then(|row| data.bytes().get(row)) {
                        Some(b) => out.extend_from_slice(b),
                        None => bail!(Shape, "Gather row {r} outside data {:?}", data.shape()),
                    }
                }
                None => out.extend_from_slice(&zero),
            }
        }
    }
    Tensor::from_bytes(data.dtype(), &shape, out)
}

/// Checks `updates` of ScatterAdd against `data` and `indices`.
fn check_updates(data: &Tensor, indices: &Tensor, updates: &Tensor, axis: usize) -> Result<()> {
    let dt = data.dtype();
    if dt == DType::Bool {
        bail!(DType, "ScatterAdd data must be numeric or C64, got {dt}{:?}", data.shape());
    }
    let want = gathered(data.shape(), axis, indices.shape());
    if updates.dtype() != dt || updates.shape() != want.as_slice() {
        bail!(
            Shape,
            "ScatterAdd updates {}{:?} must be {dt}{want:?} (data {dt}{:?}, indices {:?}, axis {axis})",
            updates.dtype(),
            updates.shape(),
            data.shape(),
            indices.shape()
        );
    }
    Ok(())
}

/// `out = data; out[o, resolve(indices[j]), t] += updates[o, j, t]` (§2.4.2). Out-of-range
/// contributions are skipped; repeated indices accumulate. Each touched element is accumulated
/// exactly as a [`Scalar`] (floats in f64) and rounded once; untouched elements keep their bytes.
pub fn scatter_add(data: &Tensor, indices: &Tensor, updates: &Tensor, axis: usize) -> Result<Tensor> {
    let dt = data.dtype();
    let (outer, a, inner) = around(data.shape(), axis, "ScatterAdd data")?;
    check_updates(data, indices, updates, axis)?;
    let idx = index_values(indices, "ScatterAdd")?;
    if count(data.shape())? == 0 || count(updates.shape())? == 0 {
        // Nothing to add to, or nothing to add (out-of-range indices of an empty axis are skipped).
        return Ok(data.clone());
    }
    let upd = scalars(updates)?;
    // Only touched elements are decoded, so a huge `data` with few updates stays cheap.
    let mut acc: BTreeMap<usize, Scalar> = BTreeMap::new();
    for o in 0..outer {
        for (j, &i) in idx.iter().enumerate() {
            let Some(r) = resolve(i, a) else { continue };
            for t in 0..inner {
                let e = (o * a + r) * inner + t;
                let Some(&u) = upd.get((o * idx.len() + j) * inner + t) else {
                    bail!(Shape, "ScatterAdd update ({o}, {j}, {t}) outside updates {:?}", updates.shape());
                };
                let cur = match acc.get(&e) {
                    Some(&s) => s,
                    None => decode(dt, element(data, e)?),
                };
                acc.insert(e, add(cur, u, dt)?);
            }
        }
    }
    let size = dt.size();
    let mut bytes = data.bytes().to_vec();
    let mut enc = Vec::with_capacity(size);
    for (e, s) in acc {
        enc.clear();
        encode(s, dt, &mut enc);
        match bytes.get_mut(e * size..(e + 1) * size) {
            Some(slot) => slot.iter_mut().zip(&enc).for_each(|(d, s)| *d = *s),
            None => bail!(Shape, "ScatterAdd element {e} outside data {:?}", data.shape()),
        }
    }
    Tensor::from_bytes(dt, data.shape(), bytes)
}

/// `out = 0; out[o, resolve(indices[j]), t] += dy[o, j, t]` with `out` of shape `data_shape`
/// (§2.4.3), accumulated in f64 and rounded once into the dtype of `dy`.
pub fn gather_backward(dy: &Tensor, indices: &Tensor, a: &GatherBackwardAttrs, bindings: &Bindings) -> Result<Tensor> {
    let dims = bindings.resolve(&a.data_shape)?;
    let (outer, size, inner) = around(&dims, a.axis, "GatherBackward data_shape")?;
    let want = gathered(&dims, a.axis, indices.shape());
    if dy.shape() != want.as_slice() {
        bail!(
            Shape,
            "GatherBackward dy {:?} must have shape {want:?} (data_shape {dims:?}, indices {:?}, axis {})",
            dy.shape(),
            indices.shape(),
            a.axis
        );
    }
    let idx = index_values(indices, "GatherBackward")?;
    let g = floats(dy, "GatherBackward dy")?;
    let mut out = try_filled(count(&dims)?, 0.0f64)?;
    if out.is_empty() || g.is_empty() {
        return from_floats(dy.dtype(), &dims, &out);
    }
    for o in 0..outer {
        for (j, &i) in idx.iter().enumerate() {
            let Some(r) = resolve(i, size) else { continue };
            for t in 0..inner {
                let (e, s) = ((o * size + r) * inner + t, (o * idx.len() + j) * inner + t);
                match (out.get_mut(e), g.get(s)) {
                    (Some(d), Some(v)) => *d += v,
                    _ => bail!(Shape, "GatherBackward element {e} / dy element {s} out of range"),
                }
            }
        }
    }
    from_floats(dy.dtype(), &dims, &out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::Shape;

    fn gb(dy: &Tensor, idx: &Tensor, axis: usize, dims: &[usize]) -> Tensor {
        let a = GatherBackwardAttrs { axis, data_shape: Shape::from(dims.to_vec()) };
        gather_backward(dy, idx, &a, &Bindings::default()).unwrap()
    }

    #[test]
    fn empty_operands_finish_at_once_after_their_checks() {
        let g = 1usize << 62;
        let empty = |dims: &[usize]| Tensor::from_bytes(DType::F32, dims, Vec::new()).unwrap();
        let idx = Tensor::from_slice(&[2], &[0i32, 1]).unwrap();
        let data = empty(&[0, g]);
        assert_eq!(scatter_add(&data, &idx, &empty(&[0, 2]), 1).unwrap(), data);
        let bad = Tensor::from_slice(&[2], &[0.0f32, 1.0]).unwrap();
        assert_eq!(scatter_add(&data, &bad, &empty(&[0, 2]), 1).unwrap_err().kind(), backend_api::ErrorKind::DType);
        assert_eq!(gb(&empty(&[0, 2]), &idx, 1, &[0, g]).shape(), &[0, g]);
        assert_eq!(gb(&empty(&[2, 0]), &idx, 0, &[g, 0]).shape(), &[g, 0]);
        assert_eq!(gather(&data, &idx, 1).unwrap().shape(), &[0, 2]);
        assert_eq!(gather(&empty(&[g, 0]), &idx, 0).unwrap().shape(), &[2, 0]);
    }

    #[test]
    fn resolve_wraps_negatives_and_rejects_the_rest() {
        assert_eq!(resolve(0, 3), Some(0));
        assert_eq!(resolve(-1, 3), Some(2));
        assert_eq!(resolve(-3, 3), Some(0));
        assert_eq!(resolve(-4, 3), None);
        assert_eq!(resolve(3, 3), None);
        assert_eq!(resolve(0, 0), None);
        assert_eq!(resolve(i64::MIN as i128, 3), None);
        assert_eq!(resolve(u32::MAX as i128, 3), None);
        assert_eq!(resolve((1 << 24) + 1, (1 << 24) + 2), Some((1 << 24) + 1));
    }

    #[test]
    fn gather_rows_and_columns_by_hand() {
        let d = Tensor::from_slice(&[3, 2], &[1i8, 2, 3, 4, 5, 6]).unwrap();
        let i = Tensor::from_slice(&[2, 2], &[2i32, -1, 0, 7]).unwrap();
        let y = gather(&d, &i, 0).unwrap();
        assert_eq!(y.shape(), &[2, 2, 2]);
        assert_eq!(y.to_vec::<i8>().unwrap(), [5, 6, 5, 6, 1, 2, 0, 0]);
        let i = Tensor::from_slice(&[3], &[1u32, 0, 2]).unwrap();
        let y = gather(&d, &i, 1).unwrap();
        assert_eq!(y.shape(), &[3, 3]);
        assert_eq!(y.to_vec::<i8>().unwrap(), [2, 1, 0, 4, 3, 0, 6, 5, 0]);
        // Rank-0 indices drop the axis.
        let y = gather(&d, &Tensor::scalar(-2i64), 0).unwrap();
        assert_eq!(y.shape(), &[2]);
        assert_eq!(y.to_vec::<i8>().unwrap(), [3, 4]);
    }

    #[test]
    fn gather_any_dtype_and_empty_axis() {
        let b = Tensor::from_slice(&[2], &[true, false]).unwrap();
        let y = gather(&b, &Tensor::from_slice(&[3], &[1i32, 0, 5]).unwrap(), 0).unwrap();
        assert_eq!(y.to_vec::<bool>().unwrap(), [false, true, false]);
        let f = Tensor::from_slice(&[2], &[-0.0f32, f32::NAN]).unwrap();
        let y = gather(&f, &Tensor::from_slice(&[3], &[0i32, 1, -3]).unwrap(), 0).unwrap().to_vec::<f32>().unwrap();
        assert!(y[0] == 0.0 && y[0].is_sign_negative() && y[1].is_nan());
        assert!(y[2] == 0.0 && y[2].is_sign_positive());
        let e = Tensor::from_slice::<f64>(&[2, 0], &[]).unwrap();
        let y = gather(&e, &Tensor::from_slice(&[2], &[0i32, -1]).unwrap(), 1).unwrap();
        assert_eq!(y.to_vec::<f64>().unwrap(), [0.0; 4]);
        assert!(gather(&e, &Tensor::from_slice(&[1], &[0.0f32]).unwrap(), 1).is_err());
    }

    #[test]
    fn scatter_add_accumulates_collisions_and_skips_out_of_range() {
        let d = Tensor::from_slice(&[4], &[10i32, 20, 30, 40]).unwrap();
        let i = Tensor::from_slice(&[5], &[1i64, 1, -1, 4, -5]).unwrap();
        let u = Tensor::from_slice(&[5], &[1i32, 2, 3, 100, 100]).unwrap();
        let y = scatter_add(&d, &i, &u, 0).unwrap();
        assert_eq!(y.to_vec::<i32>().unwrap(), [10, 23, 30, 43]);
        // Integer wrap; 2-D along axis 1.
        let d = Tensor::from_slice(&[2, 2], &[250u8, 0, 1, 2]).unwrap();
        let i = Tensor::from_slice(&[3], &[0u32, 0, 1]).unwrap();
        let u = Tensor::from_slice(&[2, 3], &[3u8, 4, 5, 6, 7, 8]).unwrap();
        let y = scatter_add(&d, &i, &u, 1).unwrap();
        assert_eq!(y.to_vec::<u8>().unwrap(), [1, 5, 14, 10]);
        // Floats accumulate wide and round once: 1 + 2^-24 + 2^-24 rounds to 1 + 2^-23.
        let d = Tensor::from_slice(&[1], &[1.0f32]).unwrap();
        let e = (2f32).powi(-24);
        let u = Tensor::from_slice(&[2], &[e, e]).unwrap();
        let y = scatter_add(&d, &Tensor::from_slice(&[2], &[0i32, 0]).unwrap(), &u, 0).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [1.0 + 2.0 * e]);
        // Empty indices leave data unchanged; wrong updates shape is an error.
        let none = Tensor::from_slice::<i32>(&[0], &[]).unwrap();
        let empty_u = Tensor::from_slice::<f32>(&[0], &[]).unwrap();
        assert_eq!(scatter_add(&d, &none, &empty_u, 0).unwrap(), d);
        assert!(scatter_add(&d, &none, &u, 0).is_err());
    }

    #[test]
    fn scatter_add_c64() {
        use backend_api::Complex32;
        let c = |re, im| Complex32 { re, im };
        let d = Tensor::from_slice(&[2], &[c(1.0, 1.0), c(0.0, 0.0)]).unwrap();
        let i = Tensor::from_slice(&[2], &[0i32, 0]).unwrap();
        let u = Tensor::from_slice(&[2], &[c(2.0, -1.0), c(0.5, 3.0)]).unwrap();
        let y = scatter_add(&d, &i, &u, 0).unwrap();
        assert_eq!(y.to_vec::<Complex32>().unwrap(), [c(3.5, 3.0), c(0.0, 0.0)]);
    }

    #[test]
    fn gather_backward_by_hand() {
        let dy = Tensor::from_slice(&[2, 3], &[1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let i = Tensor::from_slice(&[3], &[2i32, -1, 9]).unwrap();
        let y = gb(&dy, &i, 1, &[2, 3]);
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [0., 0., 3., 0., 0., 9.]);
        let none = Tensor::from_slice::<u32>(&[0], &[]).unwrap();
        let dy = Tensor::from_slice::<f64>(&[0, 2], &[]).unwrap();
        assert_eq!(gb(&dy, &none, 0, &[3, 2]).to_vec::<f64>().unwrap(), [0.0; 6]);
    }
}
