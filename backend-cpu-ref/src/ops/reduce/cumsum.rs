//! Cumsum and CumsumBackward (§2.5.5–2.5.6): prefix sums along any axis, inclusive or exclusive,
//! forward or reversed. Floats accumulate in f64 and round once per output; integers wrap.
//!
//! Slice offsets are built from the checked shape, so indexing is in range by construction.

use crate::mem::try_filled;
use crate::ops::indexing::{add, around};
use crate::value::{from_scalars, scalars, Scalar};
use backend_api::op::CumsumAttrs;
use backend_api::{bail, Result, Tensor};

/// Prefix sums of `x` along `a.axis` (§2.5.5). An empty sum (the first exclusive position) is
/// +0 / 0; the first inclusive position is the element itself, exactly.
pub fn cumsum(x: &Tensor, a: &CumsumAttrs) -> Result<Tensor> {
    let dt = x.dtype();
    if !dt.is_float() && !dt.is_int() {
        bail!(DType, "Cumsum input must be numeric, got {dt}{:?}", x.shape());
    }
    let (outer, n, inner) = around(x.shape(), a.axis, "Cumsum")?;
    let zero = if dt.is_float() { Scalar::F(0.0) } else { Scalar::I(0) };
    let v = scalars(x)?;
    if v.is_empty() {
        // No loops over the (maybe huge) dims around an empty one.
        return from_scalars(dt, x.shape(), &v);
    }
    let mut y = try_filled(v.len(), zero)?;
    for o in 0..outer {
        for t in 0..inner {
            let mut acc: Option<Scalar> = None;
            for step in 0..n {
                let i = if a.reverse { n - 1 - step } else { step };
                let e = (o * n + i) * inner + t;
                let before = acc;
                acc = Some(match acc {
                    Some(s) => add(s, v[e], dt)?,
                    None => v[e],
                });
                y[e] = if a.exclusive { before.unwrap_or(zero) } else { acc.unwrap_or(zero) };
            }
        }
    }
    from_scalars(dt, x.shape(), &y)
}

/// The gradient of `Cumsum` (§2.5.6): its transpose, `Cumsum(dy, axis, exclusive, !reverse)`.
pub fn cumsum_backward(dy: &Tensor, a: &CumsumAttrs) -> Result<Tensor> {
    if !dy.dtype().is_float() {
        bail!(DType, "CumsumBackward dy must be float, got {}{:?}", dy.dtype(), dy.shape());
    }
    let t = CumsumAttrs { axis: a.axis, exclusive: a.exclusive, reverse: !a.reverse };
    cumsum(dy, &t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::DType;

    fn ca(axis: usize, exclusive: bool, reverse: bool) -> CumsumAttrs {
        CumsumAttrs { axis, exclusive, reverse }
    }

    fn cs(x: &[f64], exclusive: bool, reverse: bool) -> Vec<f64> {
        let t = Tensor::from_slice(&[x.len()], x).unwrap();
        cumsum(&t, &ca(0, exclusive, reverse)).unwrap().to_vec::<f64>().unwrap()
    }

    #[test]
    fn all_four_variants_by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(cs(&x, false, false), [1., 3., 6., 10.]);
        assert_eq!(cs(&x, true, false), [0., 1., 3., 6.]);
        assert_eq!(cs(&x, false, true), [10., 9., 7., 4.]);
        assert_eq!(cs(&x, true, true), [9., 7., 4., 0.]);
    }

    #[test]
    fn sizes_zero_and_one() {
        for (ex, rev) in [(false, false), (true, false), (false, true), (true, true)] {
            assert!(cs(&[], ex, rev).is_empty());
            let y = cs(&[-0.0], ex, rev);
            if ex {
                assert!(y[0] == 0.0 && y[0].is_sign_positive());
            } else {
                assert!(y[0] == 0.0 && y[0].is_sign_negative(), "inclusive size 1 is y = x");
            }
            assert_eq!(cs(&[7.5], ex, rev), [if ex { 0.0 } else { 7.5 }]);
        }
        let e = Tensor::from_slice::<i32>(&[3, 0], &[]).unwrap();
        assert_eq!(cumsum(&e, &ca(1, true, true)).unwrap().shape(), &[3, 0]);
    }

    #[test]
    fn other_axes_and_wrapping_ints() {
        let x = Tensor::from_slice(&[2, 3], &[1i8, 2, 3, 100, 100, 100]).unwrap();
        let y = cumsum(&x, &ca(0, false, false)).unwrap().to_vec::<i8>().unwrap();
        assert_eq!(y, [1, 2, 3, 101, 102, 103]);
        let y = cumsum(&x, &ca(1, false, false)).unwrap().to_vec::<i8>().unwrap();
        assert_eq!(y, [1, 3, 6, 100, -56, 44]);
        let y = cumsum(&x, &ca(1, true, true)).unwrap().to_vec::<i8>().unwrap();
        assert_eq!(y, [5, 3, 0, -56, 100, 0]);
        let u = Tensor::from_slice(&[3], &[u32::MAX, 2, 5]).unwrap();
        let y = cumsum(&u, &ca(0, false, false)).unwrap().to_vec::<u32>().unwrap();
        assert_eq!(y, [u32::MAX, 1, 6]);
        let b = Tensor::from_slice(&[1], &[true]).unwrap();
        assert!(cumsum(&b, &ca(0, false, false)).is_err());
    }

    #[test]
    fn half_sums_round_once() {
        use half::f16;
        // 2048 + 1 + 1: stepwise in f16 stays 2048, accumulated wide it reaches 2050.
        let x = Tensor::from_slice(&[3], &[f16::from_f32(2048.0), f16::ONE, f16::ONE]).unwrap();
        let y = cumsum(&x, &ca(0, false, false)).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(y[2], f16::from_f32(2050.0));
        assert_eq!(y[1], f16::from_f32(2048.0));
    }

    /// CumsumBackward is the exact derivative: for each input j, the finite difference
    /// Σ_i dy_i (f(x + h e_j) − f(x − h e_j))_i / 2h equals dx_j.
    #[test]
    fn backward_matches_finite_differences() {
        let dims = [2usize, 3, 4];
        let x: Vec<f64> = (0..24).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.37).collect();
        let dy: Vec<f64> = (0..24).map(|i| ((i * 5 % 13) as f64 - 6.0) * 0.21).collect();
        let dyt = Tensor::from_slice(&dims, &dy).unwrap();
        for axis in 0..3 {
            for (ex, rev) in [(false, false), (true, false), (false, true), (true, true)] {
                let a = ca(axis, ex, rev);
                let dx = cumsum_backward(&dyt, &a).unwrap().to_vec::<f64>().unwrap();
                let f = |v: &[f64]| -> f64 {
                    let y = cumsum(&Tensor::from_slice(&dims, v).unwrap(), &a).unwrap();
                    y.to_vec::<f64>().unwrap().iter().zip(&dy).map(|(y, d)| y * d).sum()
                };
                for j in 0..24 {
                    let h = 1e-3;
                    let (mut p, mut m) = (x.clone(), x.clone());
                    p[j] += h;
                    m[j] -= h;
                    let fd = (f(&p) - f(&m)) / (2.0 * h);
                    assert!((fd - dx[j]).abs() < 1e-9, "axis {axis} ex {ex} rev {rev} j {j}: {fd} vs {}", dx[j]);
                }
            }
        }
        let i = Tensor::from_slice(&[1], &[1i32]).unwrap();
        assert!(cumsum_backward(&i, &ca(0, false, false)).is_err());
        let f = Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
        assert_eq!(cumsum_backward(&f, &ca(0, false, false)).unwrap().dtype(), DType::F32);
    }
}
