//! Reduce (§2.5.1): Sum, Mean, Max, Min, Prod over any set of axes. Floats accumulate in f64 and
//! round once; integers wrap after every step; Bool Max/Min are any/all. ArgMax/ArgMin/TopK
//! (§2.5.2–2.5.4) are in `arg`, Cumsum/CumsumBackward (§2.5.5–2.5.6) in `cumsum`.

use crate::layout::{count, for_each_index, offset, strides};
use crate::mem::try_filled;
use crate::ops::math;
use crate::value::{from_scalars, int_bounds, scalars, wrap, Scalar};
use backend_api::op::{ReduceAttrs, ReduceOp};
use backend_api::{bail, DType, Result, Tensor};

pub mod arg;
pub mod cumsum;

/// Reduces `x` over `a.axes` (empty axes: `x` unchanged).
pub fn reduce(x: &Tensor, a: &ReduceAttrs) -> Result<Tensor> {
    let (dt, xd) = (x.dtype(), x.shape());
    if a.axes.iter().any(|&ax| ax >= xd.len()) {
        bail!(Axis, "Reduce axes {:?} out of range for {xd:?}", a.axes);
    }
    // Output positions seen from an input index: the keep-dims shape, stride 0 on reduced axes.
    let kept: Vec<usize> = (0..xd.len()).map(|i| if a.axes.contains(&i) { 1 } else { xd[i] }).collect();
    let mut ost = strides(&kept)?;
    for &ax in &a.axes {
        ost[ax] = 0;
    }
    let out_shape: Vec<usize> =
        if a.keep_dims { kept.clone() } else { (0..xd.len()).filter(|i| !a.axes.contains(i)).map(|i| xd[i]).collect() };
    let reduced: Vec<usize> = a.axes.iter().map(|&ax| xd[ax]).collect();
    // Only a non-empty input has a Mean to divide, and then this count is below its size.
    let n = count(&reduced)?;
    let xs = scalars(x)?;
    let mut acc: Vec<Option<Scalar>> = try_filled(count(&kept)?, None)?;
    let mut lin = 0usize;
    for_each_index(xd, |idx| {
        let o = offset(idx, &ost);
        let (Some(slot), Some(&v)) = (acc.get_mut(o), xs.get(lin)) else {
            bail!(Shape, "Reduce index {idx:?} out of range");
        };
        *slot = Some(match *slot {
            None => v,
            Some(prev) => combine(a.op, dt, prev, v)?,
        });
        lin += 1;
        Ok(())
    })?;
    let out = acc
        .into_iter()
        .map(|s| match s {
            None => empty_identity(a.op, dt),
            Some(Scalar::F(sum)) if a.op == ReduceOp::Mean => Ok(Scalar::F(sum / n as f64)),
            Some(v) => Ok(v),
        })
        .collect::<Result<Vec<_>>>()?;
    from_scalars(dt, &out_shape, &out)
}

/// One accumulation step.
fn combine(op: ReduceOp, dt: DType, a: Scalar, b: Scalar) -> Result<Scalar> {
    Ok(match (op, a, b) {
        (ReduceOp::Sum | ReduceOp::Mean, Scalar::F(x), Scalar::F(y)) => Scalar::F(x + y),
        (ReduceOp::Sum, Scalar::I(x), Scalar::I(y)) => Scalar::I(wrap(x.wrapping_add(y), dt)),
        (ReduceOp::Prod, Scalar::F(x), Scalar::F(y)) => Scalar::F(x * y),
        (ReduceOp::Prod, Scalar::I(x), Scalar::I(y)) => Scalar::I(wrap(x.wrapping_mul(y), dt)),
        (ReduceOp::Max, Scalar::F(x), Scalar::F(y)) => Scalar::F(math::max(x, y)),
        (ReduceOp::Max, Scalar::I(x), Scalar::I(y)) => Scalar::I(x.max(y)),
        (ReduceOp::Max, Scalar::B(x), Scalar::B(y)) => Scalar::B(x || y),
        (ReduceOp::Min, Scalar::F(x), Scalar::F(y)) => Scalar::F(math::min(x, y)),
        (ReduceOp::Min, Scalar::I(x), Scalar::I(y)) => Scalar::I(x.min(y)),
        (ReduceOp::Min, Scalar::B(x), Scalar::B(y)) => Scalar::B(x && y),
        (op, _, _) => bail!(DType, "Reduce.{} is not defined for {dt}", op.name()),
    })
}

/// The result of reducing zero elements (§2.5.1).
fn empty_identity(op: ReduceOp, dt: DType) -> Result<Scalar> {
    let (lo, hi) = int_bounds(dt);
    Ok(match (op, dt.is_float(), dt.is_int()) {
        (ReduceOp::Sum, true, _) => Scalar::F(0.0),
        (ReduceOp::Sum, _, true) => Scalar::I(0),
        (ReduceOp::Prod, true, _) => Scalar::F(1.0),
        (ReduceOp::Prod, _, true) => Scalar::I(1),
        (ReduceOp::Mean, true, _) => Scalar::F(f64::NAN),
        (ReduceOp::Max, true, _) => Scalar::F(f64::NEG_INFINITY),
        (ReduceOp::Max, _, true) => Scalar::I(lo),
        (ReduceOp::Min, true, _) => Scalar::F(f64::INFINITY),
        (ReduceOp::Min, _, true) => Scalar::I(hi),
        (ReduceOp::Max, _, _) if dt == DType::Bool => Scalar::B(false),
        (ReduceOp::Min, _, _) if dt == DType::Bool => Scalar::B(true),
        (op, _, _) => bail!(DType, "Reduce.{} is not defined for {dt}", op.name()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn r(x: &Tensor, op: ReduceOp, axes: &[usize], keep_dims: bool) -> Tensor {
        reduce(x, &ReduceAttrs { op, axes: axes.to_vec(), keep_dims }).unwrap()
    }
    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    #[test]
    fn sums_over_any_axes() {
        let x = f32s(&[2, 3, 2], &[1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.]);
        let y = r(&x, ReduceOp::Sum, &[1], false);
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [9., 12., 27., 30.]);
        let y = r(&x, ReduceOp::Sum, &[0, 2], true);
        assert_eq!(y.shape(), &[1, 3, 1]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [1. + 2. + 7. + 8., 3. + 4. + 9. + 10., 5. + 6. + 11. + 12.]);
        let y = r(&x, ReduceOp::Mean, &[0, 1, 2], false);
        assert_eq!(y.shape(), &[] as &[usize]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [6.5]);
        let y = r(&x, ReduceOp::Prod, &[2], false);
        assert_eq!(y.to_vec::<f32>().unwrap(), [2., 12., 30., 56., 90., 132.]);
        assert_eq!(r(&x, ReduceOp::Sum, &[], false), x);
    }

    #[test]
    fn empty_reductions_give_identities() {
        let x = f32s(&[2, 0], &[]);
        let get = |op| r(&x, op, &[1], false).to_vec::<f32>().unwrap();
        assert_eq!(get(ReduceOp::Sum), [0.0, 0.0]);
        assert_eq!(get(ReduceOp::Prod), [1.0, 1.0]);
        assert!(get(ReduceOp::Mean).iter().all(|v| v.is_nan()));
        assert_eq!(get(ReduceOp::Max), [f32::NEG_INFINITY; 2]);
        assert_eq!(get(ReduceOp::Min), [f32::INFINITY; 2]);
        let i = Tensor::from_slice::<i8>(&[0, 2], &[]).unwrap();
        assert_eq!(r(&i, ReduceOp::Max, &[0], false).to_vec::<i8>().unwrap(), [i8::MIN; 2]);
        assert_eq!(r(&i, ReduceOp::Min, &[0], false).to_vec::<i8>().unwrap(), [i8::MAX; 2]);
        let u = Tensor::from_slice::<u32>(&[0], &[]).unwrap();
        assert_eq!(r(&u, ReduceOp::Min, &[0], false).to_vec::<u32>().unwrap(), [u32::MAX]);
        let b = Tensor::from_slice::<bool>(&[0], &[]).unwrap();
        assert_eq!(r(&b, ReduceOp::Max, &[0], false).to_vec::<bool>().unwrap(), [false]);
        assert_eq!(r(&b, ReduceOp::Min, &[0], false).to_vec::<bool>().unwrap(), [true]);
        // Reducing an axis of an empty tensor that is not the empty one gives an empty output.
        assert_eq!(r(&x, ReduceOp::Sum, &[0], false).shape(), &[0]);
    }

    #[test]
    fn max_min_propagate_nan_and_bool_is_any_all() {
        let x = f32s(&[2, 3], &[1., f32::NAN, 3., -0., 0., -1.]);
        let mx = r(&x, ReduceOp::Max, &[1], false).to_vec::<f32>().unwrap();
        assert!(mx[0].is_nan());
        assert_eq!(mx[1], 0.0);
        assert!(!mx[1].is_sign_negative());
        let z = f32s(&[2], &[0., -0.]);
        assert!(r(&z, ReduceOp::Min, &[0], false).to_vec::<f32>().unwrap()[0].is_sign_negative());
        let b = Tensor::from_slice(&[2, 2], &[true, false, true, true]).unwrap();
        assert_eq!(r(&b, ReduceOp::Max, &[1], false).to_vec::<bool>().unwrap(), [true, true]);
        assert_eq!(r(&b, ReduceOp::Min, &[1], false).to_vec::<bool>().unwrap(), [false, true]);
    }

    #[test]
    fn integer_sums_and_products_wrap() {
        let x = Tensor::from_slice(&[3], &[100i8, 100, 100]).unwrap();
        assert_eq!(r(&x, ReduceOp::Sum, &[0], false).to_vec::<i8>().unwrap(), [44]);
        assert_eq!(r(&x, ReduceOp::Prod, &[0], false).to_vec::<i8>().unwrap(), [64]); // 10^6 mod 256
        let u = Tensor::from_slice(&[2], &[u32::MAX, 2]).unwrap();
        assert_eq!(r(&u, ReduceOp::Sum, &[0], false).to_vec::<u32>().unwrap(), [1]);
        let big = Tensor::from_slice(&[3], &[i64::MAX, i64::MAX, 3]).unwrap();
        assert_eq!(
            r(&big, ReduceOp::Prod, &[0], false).to_vec::<i64>().unwrap(),
            [i64::MAX.wrapping_mul(i64::MAX).wrapping_mul(3)]
        );
    }

    #[test]
    fn half_sums_accumulate_wide_and_round_once() {
        // 2048 + 1 + 1 in f16 step by step stays 2048; accumulated wide it is 2050.
        let x = Tensor::from_slice(&[3], &[f16::from_f32(2048.0), f16::ONE, f16::ONE]).unwrap();
        assert_eq!(r(&x, ReduceOp::Sum, &[0], false).to_vec::<f16>().unwrap(), [f16::from_f32(2050.0)]);
    }
}
