//! The training backward ops that have no section of their forward op's (§2.16) and that cpu-ref
//! implements: SoftmaxCrossEntropyBackward (§2.16.3), in f64, rounded once into the logits' dtype.

use crate::mem::try_filled;
use crate::ops::norm::cross_entropy::{max_and_sum, operands, without};
use crate::value::{floats, from_floats};
use backend_api::{bail, Result, Tensor};

/// `d_logits = (softmax(logits) − targets) · d_loss`, `d_loss` broadcast along `axis`.
pub fn softmax_cross_entropy_backward(
    logits: &Tensor,
    targets: &Tensor,
    d_loss: &Tensor,
    axis: usize,
) -> Result<Tensor> {
    let op = "SoftmaxCrossEntropyBackward";
    let p = operands(logits, targets, axis, op)?;
    let want = without(logits.shape(), axis);
    if d_loss.dtype() != logits.dtype() || d_loss.shape() != want.as_slice() {
        bail!(Shape, "{op} d_loss {}{:?} must be {}{want:?}", d_loss.dtype(), d_loss.shape(), logits.dtype());
    }
    let dl = floats(d_loss, &format!("{op} d_loss"))?;
    if p.x.is_empty() {
        return from_floats(logits.dtype(), logits.shape(), &[]);
    }
    let mut dx = try_filled(p.x.len(), 0.0)?;
    for o in 0..p.outer {
        for j in 0..p.inner {
            let at = move |c: usize| (o * p.c + c) * p.inner + j;
            let (m, s) = max_and_sum((0..p.c).map(|c| p.x[at(c)]));
            let g = dl[o * p.inner + j];
            for c in 0..p.c {
                let e = at(c);
                dx[e] = ((p.x[e] - m).exp() / s - p.t[e]) * g;
            }
        }
    }
    from_floats(logits.dtype(), logits.shape(), &dx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::norm::softmax_cross_entropy;

    fn f64s(shape: &[usize], v: &[f64]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    /// d_logits equals the central finite difference of Σ d_loss · loss(logits), per logit.
    #[test]
    fn backward_matches_finite_differences() {
        let dims = [2usize, 3, 4];
        let x: Vec<f64> = (0..24).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.41).collect();
        let mut t: Vec<f64> = (0..24).map(|i| ((i * 3 % 5) as f64) * 0.2).collect();
        t[5] = 0.0;
        for axis in 0..3 {
            let out = without(&dims, axis);
            let n: usize = out.iter().product();
            let dl: Vec<f64> = (0..n).map(|i| 0.5 + 0.3 * i as f64 - 0.07 * (i * i) as f64).collect();
            let (xt, tt, dlt) = (f64s(&dims, &x), f64s(&dims, &t), f64s(&out, &dl));
            let dx = softmax_cross_entropy_backward(&xt, &tt, &dlt, axis).unwrap().to_vec::<f64>().unwrap();
            let f = |v: &[f64]| -> f64 {
                let y = softmax_cross_entropy(&f64s(&dims, v), &tt, axis).unwrap();
                y.to_vec::<f64>().unwrap().iter().zip(&dl).map(|(y, d)| y * d).sum()
            };
            for j in 0..24 {
                let h = 1e-5;
                let (mut p, mut m) = (x.clone(), x.clone());
                p[j] += h;
                m[j] -= h;
                let fd = (f(&p) - f(&m)) / (2.0 * h);
                assert!((fd - dx[j]).abs() < 1e-8, "axis {axis} j {j}: {fd} vs {}", dx[j]);
            }
        }
    }

    #[test]
    fn backward_masked_and_shape_errors() {
        let inf = f64::INFINITY;
        let x = f64s(&[3], &[-inf, 0.0, 0.0]);
        let t = f64s(&[3], &[0.0, 1.0, 0.0]);
        let dx = softmax_cross_entropy_backward(&x, &t, &f64s(&[], &[2.0]), 0).unwrap().to_vec::<f64>().unwrap();
        assert_eq!(dx, [0.0, -1.0, 1.0]);
        assert!(softmax_cross_entropy_backward(&x, &t, &f64s(&[1], &[2.0]), 0).is_err());
        let x = f64s(&[2], &[-inf, -inf]);
        let dx = softmax_cross_entropy_backward(&x, &f64s(&[2], &[0.0, 1.0]), &f64s(&[], &[1.0]), 0).unwrap();
        assert!(dx.to_vec::<f64>().unwrap().iter().all(|v| v.is_nan()));
    }
}
