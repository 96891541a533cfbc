//! ArgMax, ArgMin (§2.5.2–2.5.3) and TopK (§2.5.4), with the arg-op and sorting rules of §1.7.
//!
//! Slice offsets are built from the checked shape, so indexing is in range by construction.

use crate::layout::count;
use crate::mem::{tensor_bytes, try_filled, try_vec};
use crate::ops::indexing::around;
use crate::value::{from_scalars, scalars, Scalar};
use backend_api::op::{ArgReduceAttrs, TopKAttrs};
use backend_api::{bail, DType, Result, Tensor};
use std::cmp::Ordering;

/// The total order of §1.7 on elements of one dtype: −∞ < finite < +∞ < NaN, −0 = +0, all NaNs
/// equal; integers by value; Bool false < true.
pub(crate) fn total_cmp(a: Scalar, b: Scalar) -> Ordering {
    match (a, b) {
        (Scalar::F(x), Scalar::F(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            // Neither is NaN, so `partial_cmp` answers (and says −0 = +0).
            (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        },
        (Scalar::I(x), Scalar::I(y)) => x.cmp(&y),
        (Scalar::B(x), Scalar::B(y)) => x.cmp(&y),
        // Elements of one tensor share a kind; C64 is rejected before any comparison.
        _ => Ordering::Equal,
    }
}

fn is_nan(s: Scalar) -> bool {
    matches!(s, Scalar::F(x) if x.is_nan())
}

/// An error unless `d` is an index output dtype (I32 or I64).
fn index_out(d: DType, op: &str) -> Result<()> {
    if d != DType::I32 && d != DType::I64 {
        bail!(Attribute, "{op} index_dtype must be I32 or I64, got {d}");
    }
    Ok(())
}

/// ArgMax (`max = true`) or ArgMin along `a.axis`: the first NaN if the slice has one, else the
/// first index of the extreme (ties → smallest index).
pub fn arg_reduce(x: &Tensor, a: &ArgReduceAttrs, max: bool) -> Result<Tensor> {
    let op = if max { "ArgMax" } else { "ArgMin" };
    index_out(a.index_dtype, op)?;
    if x.dtype() == DType::C64 {
        bail!(DType, "{op} input must be numeric or Bool, got {}{:?}", x.dtype(), x.shape());
    }
    let (outer, n, inner) = around(x.shape(), a.axis, op)?;
    if n == 0 {
        bail!(Shape, "{op} over the empty axis {} of {:?}", a.axis, x.shape());
    }
    let want = if max { Ordering::Greater } else { Ordering::Less };
    let v = scalars(x)?;
    let mut out = if v.is_empty() { Vec::new() } else { try_vec(outer * inner)? };
    // Empty input (so empty output): no loop over the dims around the empty one.
    for o in 0..if v.is_empty() { 0 } else { outer } {
        for t in 0..inner {
            let at = |i: usize| v[(o * n + i) * inner + t];
            let best = match (0..n).find(|&i| is_nan(at(i))) {
                Some(first_nan) => first_nan,
                // Strictly better only, so ties keep the smaller index.
                None => (1..n).fold(0, |b, i| if total_cmp(at(i), at(b)) == want { i } else { b }),
            };
            out.push(Scalar::I(best as i128));
        }
    }
    let mut shape = x.shape().to_vec();
    if a.keep_dims {
        shape[a.axis] = 1;
    } else {
        shape.remove(a.axis);
    }
    from_scalars(a.index_dtype, &shape, &out)
}

/// The positions `0..n` of one slice in TopK order: by [`total_cmp`], descending when `largest`,
/// ties → smaller index (the sort is stable and starts in index order).
fn order(vals: &[Scalar], largest: bool) -> Vec<usize> {
    let mut ord: Vec<usize> = (0..vals.len()).collect();
    ord.sort_by(|&i, &j| {
        let c = total_cmp(vals[i], vals[j]);
        if largest {
            c.reverse()
        } else {
            c
        }
    });
    ord
}

/// TopK along `a.axis`: outputs (values, indices), both of `x`'s shape with `shape[axis] = k`.
/// Values are copied as bytes, so −0 and NaN payloads come out as they went in.
pub fn top_k(x: &Tensor, a: &TopKAttrs) -> Result<Vec<Tensor>> {
    index_out(a.index_dtype, "TopK")?;
    let dt = x.dtype();
    if !dt.is_float() && !dt.is_int() {
        bail!(DType, "TopK input must be numeric, got {dt}{:?}", x.shape());
    }
    let (outer, n, inner) = around(x.shape(), a.axis, "TopK")?;
    let k = a.k;
    if k > n {
        bail!(Attribute, "TopK k = {k} exceeds the size {n} of axis {} of {:?}", a.axis, x.shape());
    }
    let mut shape = x.shape().to_vec();
    shape[a.axis] = k;
    let (v, size) = (scalars(x)?, dt.size());
    if count(&shape)? == 0 {
        // No output element: no loop over the (maybe huge) dims around the empty one.
        return Ok(vec![Tensor::from_bytes(dt, &shape, Vec::new())?, from_scalars(a.index_dtype, &shape, &[])?]);
    }
    let mut vals = try_filled(tensor_bytes(dt, &shape)?, 0u8)?;
    let mut idxs = try_filled(count(&shape)?, Scalar::I(0))?;
    let mut slice = try_vec(n)?;
    for o in 0..outer {
        for t in 0..inner {
            slice.clear();
            slice.extend((0..n).map(|i| v[(o * n + i) * inner + t]));
            for (m, &i) in order(&slice, a.largest).iter().take(k).enumerate() {
                let (src, dst) = ((o * n + i) * inner + t, (o * k + m) * inner + t);
                idxs[dst] = Scalar::I(i as i128);
                let from = x.bytes().get(src * size..(src + 1) * size);
                match (vals.get_mut(dst * size..(dst + 1) * size), from) {
                    (Some(d), Some(s)) => d.copy_from_slice(s),
                    _ => bail!(Shape, "TopK element {src} outside {:?}", x.shape()),
                }
            }
        }
    }
    Ok(vec![Tensor::from_bytes(dt, &shape, vals)?, from_scalars(a.index_dtype, &shape, &idxs)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ar(x: &Tensor, axis: usize, keep_dims: bool, max: bool) -> Tensor {
        let a = ArgReduceAttrs { axis, keep_dims, index_dtype: DType::I32 };
        arg_reduce(x, &a, max).unwrap()
    }

    fn tk(x: &Tensor, k: usize, axis: usize, largest: bool) -> (Tensor, Vec<i64>) {
        let a = TopKAttrs { k, axis, largest, index_dtype: DType::I64 };
        let mut o = top_k(x, &a).unwrap();
        let i = o.pop().unwrap().to_vec::<i64>().unwrap();
        (o.pop().unwrap(), i)
    }

    #[test]
    fn arg_ops_by_hand() {
        let x = Tensor::from_slice(&[2, 4], &[1.0f32, 3., 3., -1., -0., 0., -5., -5.]).unwrap();
        assert_eq!(ar(&x, 1, false, true).to_vec::<i32>().unwrap(), [1, 0]);
        assert_eq!(ar(&x, 1, false, false).to_vec::<i32>().unwrap(), [3, 2]);
        let y = ar(&x, 0, true, true);
        assert_eq!(y.shape(), &[1, 4]);
        assert_eq!(y.to_vec::<i32>().unwrap(), [0, 0, 0, 0]);
        assert_eq!(ar(&x, 0, false, false).to_vec::<i32>().unwrap(), [1, 1, 1, 1]);
    }

    #[test]
    fn arg_ops_nan_inf_bool_int() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let x = Tensor::from_slice(&[5], &[1.0, nan, inf, nan, -inf]).unwrap();
        assert_eq!(ar(&x, 0, false, true).to_vec::<i32>().unwrap(), [1]);
        assert_eq!(ar(&x, 0, false, false).to_vec::<i32>().unwrap(), [1]);
        let x = Tensor::from_slice(&[3], &[-inf, -inf, -inf]).unwrap();
        assert_eq!(ar(&x, 0, false, true).to_vec::<i32>().unwrap(), [0]);
        let b = Tensor::from_slice(&[4], &[false, true, false, true]).unwrap();
        assert_eq!(ar(&b, 0, false, true).to_vec::<i32>().unwrap(), [1]);
        assert_eq!(ar(&b, 0, false, false).to_vec::<i32>().unwrap(), [0]);
        let i = Tensor::from_slice(&[3], &[u32::MAX, 0, u32::MAX]).unwrap();
        assert_eq!(ar(&i, 0, false, true).to_vec::<i32>().unwrap(), [0]);
        assert_eq!(ar(&i, 0, false, false).to_vec::<i32>().unwrap(), [1]);
        let a = ArgReduceAttrs { axis: 0, keep_dims: false, index_dtype: DType::I64 };
        let y = arg_reduce(&Tensor::from_slice(&[2], &[i8::MIN, i8::MAX]).unwrap(), &a, true).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), [1]);
        assert!(arg_reduce(&Tensor::from_slice::<f32>(&[0], &[]).unwrap(), &a, true).is_err());
    }

    #[test]
    fn top_k_nan_ties_and_signed_zero() {
        let nan = f32::NAN;
        let x = Tensor::from_slice(&[7], &[2.0f32, nan, -0.0, 5., 0.0, nan, 5.]).unwrap();
        let (v, i) = tk(&x, 7, 0, true);
        assert_eq!(i, [1, 5, 3, 6, 0, 2, 4]);
        let v = v.to_vec::<f32>().unwrap();
        assert!(v[0].is_nan() && v[1].is_nan() && v[2] == 5.0 && v[4] == 2.0);
        assert!(v[5].is_sign_negative() && v[6].is_sign_positive());
        let (v, i) = tk(&x, 4, 0, false);
        assert_eq!(i, [2, 4, 0, 3]);
        assert_eq!(v.to_vec::<f32>().unwrap(), [-0.0, 0.0, 2.0, 5.0]);
        let (v, i) = tk(&x, 0, 0, true);
        assert!(i.is_empty());
        assert_eq!(v.shape(), &[0]);
    }

    #[test]
    fn top_k_along_a_middle_axis_with_ints() {
        // x[2, 3, 2]; top 2 along axis 1.
        let x = Tensor::from_slice(&[2, 3, 2], &[1i32, 9, 4, 9, 4, 0, -1, -2, -3, -2, -1, 7]).unwrap();
        let (v, i) = tk(&x, 2, 1, true);
        assert_eq!(v.shape(), &[2, 2, 2]);
        assert_eq!(v.to_vec::<i32>().unwrap(), [4, 9, 4, 9, -1, 7, -1, -2]);
        assert_eq!(i, [1, 0, 2, 1, 0, 2, 2, 0]);
        let (v, i) = tk(&x, 3, 1, false);
        assert_eq!(v.to_vec::<i32>().unwrap(), [1, 0, 4, 9, 4, 9, -3, -2, -1, -2, -1, 7]);
        assert_eq!(i, [0, 2, 1, 0, 2, 1, 1, 0, 0, 1, 2, 2]);
        let a = TopKAttrs { k: 4, axis: 1, largest: true, index_dtype: DType::I32 };
        assert!(top_k(&x, &a).is_err());
    }

    #[test]
    fn top_k_infinities_and_f16() {
        use half::f16;
        let h = |v: f32| f16::from_f32(v);
        let x = Tensor::from_slice(&[4], &[h(1.0), f16::NEG_INFINITY, f16::INFINITY, h(1.0)]).unwrap();
        let (v, i) = tk(&x, 4, 0, true);
        assert_eq!(i, [2, 0, 3, 1]);
        assert_eq!(v.to_vec::<f16>().unwrap(), [f16::INFINITY, h(1.0), h(1.0), f16::NEG_INFINITY]);
    }
}
