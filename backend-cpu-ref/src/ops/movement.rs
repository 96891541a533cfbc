//! Reshape, Transpose, Narrow, Concat, Expand, Reverse, Pad (§2.3). Each op says, for every
//! output multi-index, which input element it copies; [`gather`] copies the bytes unchanged, so
//! these ops are exact for every dtype.

use crate::layout::{broadcast_strides, count, gather, offset, split, strides, Bindings};
use crate::mem::try_bytes;
use crate::value::{encode, Scalar};
use backend_api::op::{DimSpec, NarrowAttrs, PadAttrs, PadMode};
use backend_api::{bail, Result, Shape, Tensor};

/// The same bytes under `new_shape`; symbols come from `bindings`, `Infer` from the element count.
pub fn reshape(x: &Tensor, new_shape: &[DimSpec], bindings: &Bindings) -> Result<Tensor> {
    let n = count(x.shape())?;
    let mut dims = Vec::with_capacity(new_shape.len());
    let mut infer_at = None;
    for (i, d) in new_shape.iter().enumerate() {
        dims.push(match d {
            DimSpec::Static(s) => *s,
            DimSpec::Sym(s) => bindings.get(s)?,
            DimSpec::Infer => {
                infer_at = Some(i);
                1
            }
        });
    }
    if let Some(i) = infer_at {
        let known = count(&dims)?;
        if known == 0 || !n.is_multiple_of(known) {
            bail!(ShapeBinding, "Reshape of {:?} to {new_shape:?}: cannot infer a dim from {known}", x.shape());
        }
        dims[i] = n / known;
    }
    // An overflowing product is a count no input can have: the same mismatch.
    let got = count(&dims).map_err(|e| e.context(format!("Reshape of {:?} to {dims:?}", x.shape())))?;
    if got != n {
        bail!(ShapeBinding, "Reshape of {:?} ({n} elements) to {dims:?} ({got} elements)", x.shape());
    }
    x.clone().reshaped(&dims)
}

/// `out[i_0, …] = x[j]` with `j[perm[k]] = i_k`.
pub fn transpose(x: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let (xd, xs) = (x.shape(), strides(x.shape())?);
    if perm.len() != xd.len() || perm.iter().any(|&p| p >= xd.len()) {
        bail!(Axis, "Transpose perm {perm:?} does not fit {xd:?}");
    }
    let out: Vec<usize> = perm.iter().map(|&p| xd[p]).collect();
    let st: Vec<usize> = perm.iter().map(|&p| xs[p]).collect();
    gather(x, &out, None, |o| Some(offset(o, &st)))
}

/// `out[…, i, …] = x[…, start + i·step, …]` along `axis`.
pub fn narrow(x: &Tensor, a: &NarrowAttrs) -> Result<Tensor> {
    let mut out = x.shape().to_vec();
    let Some(d) = out.get_mut(a.axis) else { bail!(Axis, "Narrow axis {} out of range for {:?}", a.axis, x.shape()) };
    // The last index read, `start + (len − 1)·step`, checked: an overflow reads outside too.
    let last = a.len.checked_sub(1).map(|l| l.checked_mul(a.step).and_then(|s| s.checked_add(a.start)));
    if a.step == 0 || a.start > *d || last.is_some_and(|l| l.is_none_or(|l| l >= *d)) {
        bail!(Attribute, "Narrow {a:?} reads outside axis {} of {:?}", a.axis, x.shape());
    }
    *d = a.len;
    let xs = strides(x.shape())?;
    gather(x, &out, None, |o| {
        let mut idx = o.to_vec();
        idx[a.axis] = a.start + o[a.axis] * a.step;
        Some(offset(&idx, &xs))
    })
}

/// The inputs one after another along `axis`.
pub fn concat(xs: &[&Tensor], axis: usize) -> Result<Tensor> {
    let Some(x0) = xs.first() else { bail!(Arity, "Concat needs at least one input") };
    let (dtype, rank) = (x0.dtype(), x0.shape().len());
    if axis >= rank {
        bail!(Axis, "Concat axis {axis} out of range for rank {rank}");
    }
    let mut out = x0.shape().to_vec();
    out[axis] = 0;
    for x in xs {
        let same_rest = x.shape().len() == rank && (0..rank).all(|a| a == axis || x.shape()[a] == x0.shape()[a]);
        if x.dtype() != dtype || !same_rest {
            bail!(Shape, "Concat input {}{:?} does not match {}{:?}", x.dtype(), x.shape(), dtype, x0.shape());
        }
        let Some(total) = out[axis].checked_add(x.shape()[axis]) else {
            bail!(Shape, "Concat of {} inputs along axis {axis}: the axis overflows usize", xs.len())
        };
        out[axis] = total;
    }
    let mut data = try_bytes(dtype, &out)?;
    if data.capacity() == 0 {
        // No elements: the outer dims may be huge and the loop below would run for nothing.
        return Tensor::from_bytes(dtype, &out, data);
    }
    // Each input contributes a contiguous block of `shape[axis]·inner` elements per outer index;
    // the output is not empty, so these products are below its byte size.
    let (outer, _, inner) = split(&out, axis, "Concat")?;
    for o in 0..outer {
        for x in xs {
            let block = x.shape()[axis] * inner * dtype.size();
            match x.bytes().get(o * block..(o + 1) * block) {
                Some(b) => data.extend_from_slice(b),
                None => bail!(Shape, "Concat block {o} outside input {:?}", x.shape()),
            }
        }
    }
    Tensor::from_bytes(dtype, &out, data)
}

/// numpy `broadcast_to` the target shape (symbols resolved from `bindings`).
pub fn expand(x: &Tensor, target: &Shape, bindings: &Bindings) -> Result<Tensor> {
    let out = bindings.resolve(target)?;
    let st = broadcast_strides(x.shape(), &out)?;
    gather(x, &out, None, |o| Some(offset(o, &st)))
}

/// Flips the listed axes.
pub fn reverse(x: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let (xd, xs) = (x.shape().to_vec(), strides(x.shape())?);
    if axes.iter().any(|&a| a >= xd.len()) {
        bail!(Axis, "Reverse axes {axes:?} out of range for {xd:?}");
    }
    gather(x, &xd, None, |o| {
        let mut idx = o.to_vec();
        for &a in axes {
            idx[a] = xd[a] - 1 - o[a];
        }
        Some(offset(&idx, &xs))
    })
}

/// Border padding by `Constant`, `Reflect` or `Edge` (§2.3.7).
pub fn pad(x: &Tensor, a: &PadAttrs) -> Result<Tensor> {
    let (xd, xs) = (x.shape().to_vec(), strides(x.shape())?);
    let r = xd.len();
    if a.pads_begin.len() != r || a.pads_end.len() != r {
        bail!(Attribute, "Pad of {xd:?}: pads {:?} / {:?} need {r} entries", a.pads_begin, a.pads_end);
    }
    let padded = |i: usize| xd[i].checked_add(a.pads_begin[i])?.checked_add(a.pads_end[i]);
    let Some(out) = (0..r).map(padded).collect::<Option<Vec<usize>>>() else {
        bail!(Shape, "Pad of {xd:?} by {:?} / {:?} overflows usize", a.pads_begin, a.pads_end);
    };
    let mut fill = Vec::new();
    let value = match a.mode {
        PadMode::Constant { value } => value,
        PadMode::Reflect | PadMode::Edge => 0.0,
    };
    // The constant is converted by the Cast rules, from F64 (C64 gets (value, 0)).
    encode(Scalar::F(value), x.dtype(), &mut fill);
    gather(x, &out, Some(&fill), |o| {
        let mut idx = Vec::with_capacity(r);
        for (i, &oi) in o.iter().enumerate() {
            // usize → i128 is lossless, so no position aliases another.
            idx.push(pad_source(oi as i128 - a.pads_begin[i] as i128, xd[i] as i128, a.mode)?);
        }
        Some(offset(&idx, &xs))
    })
}

/// The input index read for padded position `p` on an axis of size `d`, or `None` for the fill.
fn pad_source(p: i128, d: i128, mode: PadMode) -> Option<usize> {
    if (0..d).contains(&p) {
        return usize::try_from(p).ok();
    }
    let q = match mode {
        PadMode::Constant { .. } => return None,
        PadMode::Reflect => {
            if p < 0 {
                -p
            } else {
                2 * (d - 1) - p
            }
        }
        PadMode::Edge => p.clamp(0, d - 1),
    };
    // Validation keeps reflect pads below `d`; anything else would be a bug, reported by gather.
    if (0..d).contains(&q) {
        usize::try_from(q).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::element;
    use backend_api::{Complex32, DType};

    fn at(x: &Tensor, i: usize) -> Vec<u8> {
        element(x, i).unwrap().to_vec()
    }

    fn t(shape: &[usize], v: &[i32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn v(t: &Tensor) -> Vec<i32> {
        t.to_vec::<i32>().unwrap()
    }

    #[test]
    fn every_dtype_moves_bit_exactly() {
        for dt in DType::ALL {
            // Distinct byte patterns (NaN payloads included for floats); Bools must stay 0/1.
            let data: Vec<u8> = (0..6 * dt.size())
                .map(|i| if dt == DType::Bool { (i % 2) as u8 } else { (i * 37 + 11) as u8 })
                .collect();
            let x = Tensor::from_bytes(dt, &[2, 3], data).unwrap();
            let back = transpose(&transpose(&x, &[1, 0]).unwrap(), &[1, 0]).unwrap();
            assert_eq!(back, x, "{dt}");
            let both = concat(&[&x, &x], 0).unwrap();
            assert_eq!(&both.bytes()[..x.bytes().len()], x.bytes(), "{dt}");
            let twice = reverse(&reverse(&x, &[0, 1]).unwrap(), &[1, 0]).unwrap();
            assert_eq!(twice, x, "{dt}");
            let p = pad(&x, &PadAttrs { pads_begin: vec![0, 1], pads_end: vec![0, 0], mode: PadMode::Edge }).unwrap();
            assert_eq!(at(&p, 0), at(&x, 0), "{dt}");
        }
    }

    #[test]
    fn reshape_infers_and_binds() {
        let x = t(&[2, 3], &[0, 1, 2, 3, 4, 5]);
        let b = Bindings::default();
        let y = reshape(&x, &[DimSpec::Infer, DimSpec::Static(2)], &b).unwrap();
        assert_eq!(y.shape(), &[3, 2]);
        assert_eq!(v(&y), v(&x));
        let mut b = Bindings::default();
        b.bind("n", 6, "x").unwrap();
        assert_eq!(reshape(&x, &[DimSpec::Sym("n".into())], &b).unwrap().shape(), &[6]);
        assert_eq!(reshape(&x, &[DimSpec::Static(4)], &b).unwrap_err().kind(), backend_api::ErrorKind::ShapeBinding);
        let e = t(&[0, 5], &[]);
        assert_eq!(reshape(&e, &[DimSpec::Static(5), DimSpec::Static(0)], &b).unwrap().shape(), &[5, 0]);
    }

    #[test]
    fn transpose_permutes() {
        let x = t(&[2, 3], &[0, 1, 2, 3, 4, 5]);
        let y = transpose(&x, &[1, 0]).unwrap();
        assert_eq!(y.shape(), &[3, 2]);
        assert_eq!(v(&y), [0, 3, 1, 4, 2, 5]);
        let x = t(&[2, 1, 3], &[0, 1, 2, 3, 4, 5]);
        let y = transpose(&x, &[2, 0, 1]).unwrap();
        assert_eq!(y.shape(), &[3, 2, 1]);
        assert_eq!(v(&y), [0, 3, 1, 4, 2, 5]);
        let s = Tensor::scalar(7i32);
        assert_eq!(v(&transpose(&s, &[]).unwrap()), [7]);
    }

    #[test]
    fn narrow_with_step() {
        let x = t(&[2, 5], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let y = narrow(&x, &NarrowAttrs { axis: 1, start: 1, len: 2, step: 2 }).unwrap();
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(v(&y), [1, 3, 6, 8]);
        let z = narrow(&x, &NarrowAttrs { axis: 0, start: 2, len: 0, step: 1 }).unwrap();
        assert_eq!(z.shape(), &[0, 5]);
    }

    #[test]
    fn concat_along_middle_axis() {
        let a = t(&[2, 1, 2], &[0, 1, 2, 3]);
        let b = t(&[2, 2, 2], &[10, 11, 12, 13, 14, 15, 16, 17]);
        let e = t(&[2, 0, 2], &[]);
        let y = concat(&[&a, &e, &b], 1).unwrap();
        assert_eq!(y.shape(), &[2, 3, 2]);
        assert_eq!(v(&y), [0, 1, 10, 11, 12, 13, 2, 3, 14, 15, 16, 17]);
    }

    #[test]
    fn expand_and_reverse() {
        let x = t(&[2, 1], &[1, 2]);
        let y = expand(&x, &Shape::of(&[2, 2, 3]), &Bindings::default()).unwrap();
        assert_eq!(v(&y), [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]);
        let z = expand(&x, &Shape::of(&[2, 0]), &Bindings::default()).unwrap();
        assert_eq!(z.shape(), &[2, 0]);
        let s = expand(&Tensor::scalar(4i32), &Shape::of(&[3]), &Bindings::default()).unwrap();
        assert_eq!(v(&s), [4, 4, 4]);
        let x = t(&[2, 3], &[0, 1, 2, 3, 4, 5]);
        assert_eq!(v(&reverse(&x, &[1]).unwrap()), [2, 1, 0, 5, 4, 3]);
        assert_eq!(v(&reverse(&x, &[0, 1]).unwrap()), [5, 4, 3, 2, 1, 0]);
        assert_eq!(v(&reverse(&x, &[]).unwrap()), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn pad_modes() {
        let x = t(&[4], &[1, 2, 3, 4]);
        let p = |mode, b, e| v(&pad(&x, &PadAttrs { pads_begin: vec![b], pads_end: vec![e], mode }).unwrap());
        assert_eq!(p(PadMode::Constant { value: -7.9 }, 1, 2), [-7, 1, 2, 3, 4, -7, -7]);
        assert_eq!(p(PadMode::Reflect, 2, 3), [3, 2, 1, 2, 3, 4, 3, 2, 1]);
        assert_eq!(p(PadMode::Edge, 2, 1), [1, 1, 1, 2, 3, 4, 4]);
        let e = t(&[0], &[]);
        let y = pad(&e, &PadAttrs { pads_begin: vec![1], pads_end: vec![1], mode: PadMode::Constant { value: 5.0 } })
            .unwrap();
        assert_eq!(v(&y), [5, 5]);
        let m = t(&[2, 2], &[1, 2, 3, 4]);
        let y = pad(&m, &PadAttrs { pads_begin: vec![1, 0], pads_end: vec![0, 1], mode: PadMode::Edge }).unwrap();
        assert_eq!(v(&y), [1, 2, 2, 1, 2, 2, 3, 4, 4]);
        let c = Tensor::from_slice(&[1], &[Complex32 { re: 1.0, im: 2.0 }]).unwrap();
        let y = pad(&c, &PadAttrs { pads_begin: vec![1], pads_end: vec![0], mode: PadMode::Constant { value: 3.0 } })
            .unwrap();
        assert_eq!(y.to_vec::<Complex32>().unwrap(), [Complex32 { re: 3.0, im: 0.0 }, Complex32 { re: 1.0, im: 2.0 }]);
        let u = Tensor::from_slice(&[1], &[9u8]).unwrap();
        let y = pad(&u, &PadAttrs { pads_begin: vec![1], pads_end: vec![0], mode: PadMode::Constant { value: -3.0 } })
            .unwrap();
        assert_eq!(y.dtype(), DType::U8);
        assert_eq!(at(&y, 0), [0]);
    }

    #[test]
    fn impossible_sizes_are_errors_not_wraps() {
        let x = t(&[4], &[1, 2, 3, 4]);
        let pads = PadAttrs { pads_begin: vec![0], pads_end: vec![usize::MAX], mode: PadMode::Constant { value: 0.0 } };
        assert_eq!(pad(&x, &pads).unwrap_err().kind(), backend_api::ErrorKind::Shape);
        let pads = PadAttrs { pads_begin: vec![1 << 62], pads_end: vec![0], mode: PadMode::Constant { value: 0.0 } };
        assert_eq!(pad(&x, &pads).unwrap_err().kind(), backend_api::ErrorKind::Shape);
        let dims = [DimSpec::Static((1 << 62) + 1), DimSpec::Static(4)];
        assert!(reshape(&x, &dims, &Bindings::default()).is_err());
        let huge = NarrowAttrs { axis: 0, start: 1, len: 3, step: usize::MAX / 2 };
        assert_eq!(narrow(&x, &huge).unwrap_err().kind(), backend_api::ErrorKind::Attribute);
        let e = Tensor::from_bytes(DType::I32, &[0, 1 << 62], Vec::new()).unwrap();
        assert_eq!(concat(&[&e, &e], 1).unwrap().shape(), &[0, 1 << 63]);
        assert_eq!(concat(&[&e, &e, &e, &e], 1).unwrap_err().kind(), backend_api::ErrorKind::Shape);
    }
}
