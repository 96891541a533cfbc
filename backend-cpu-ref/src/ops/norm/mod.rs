//! Softmax, LogSoftmax, LayerNorm, RmsNorm (§2.7), SoftmaxCrossEntropy in `cross_entropy`, the
//! fused residual norms in `fused`, GroupNorm and LayerNorm2d in `channel`. Computed in f64 (wider than the f32 the spec
//! asks for F16/BF16/F32) and rounded once; variance in two passes.
//!
//! Indexing is in range by construction: slice offsets are built from the checked shape.

use crate::layout::{count, split};
use crate::mem::try_filled;
use crate::ops::math;
use crate::value::{floats, from_floats};
use backend_api::op::NormAttrs;
use backend_api::{bail, Result, Tensor};

pub(crate) mod channel;
pub(crate) mod cross_entropy;
pub(crate) mod fused;

pub use channel::{group_norm, layer_norm_2d};
pub use cross_entropy::softmax_cross_entropy;

/// Softmax (`log = false`) or LogSoftmax (`log = true`) along `axis`, with the max subtracted.
pub fn softmax(x: &Tensor, axis: usize, log: bool) -> Result<Tensor> {
    let v = floats(x, "Softmax input")?;
    let (outer, len, inner) = split(x.shape(), axis, "Softmax")?;
    if v.is_empty() {
        // The outer and inner dims may be huge around an empty axis: no loop over them.
        return from_floats(x.dtype(), x.shape(), &v);
    }
    let mut y = try_filled(v.len(), 0.0)?;
    for o in 0..outer {
        for j in 0..inner {
            let at = |i: usize| (o * len + i) * inner + j;
            // NaN-propagating max: a NaN anywhere makes the whole slice NaN.
            let m = (0..len).fold(f64::NEG_INFINITY, |m, i| math::max(m, v[at(i)]));
            let s: f64 = (0..len).map(|i| (v[at(i)] - m).exp()).sum();
            for i in 0..len {
                let d = v[at(i)] - m;
                y[at(i)] = if log { d - s.ln() } else { d.exp() / s };
            }
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

/// `x`, `gamma` and the optional `beta` as f64, with the leading count and the normalised size `H`.
fn norm_operands(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, axis: usize) -> Result<NormData> {
    let d = x.shape();
    if axis >= d.len() {
        bail!(Axis, "norm axis {axis} out of range for {d:?}");
    }
    let h = count(&d[axis..])?;
    for (name, t) in [("gamma", Some(gamma)), ("beta", beta)] {
        if let Some(t) = t {
            if t.dtype() != x.dtype() || t.shape() != &d[axis..] {
                bail!(Shape, "{name} {}{:?} must be {}{:?}", t.dtype(), t.shape(), x.dtype(), &d[axis..]);
            }
        }
    }
    Ok(NormData {
        x: floats(x, "norm input x")?,
        gamma: floats(gamma, "gamma")?,
        beta: match beta {
            Some(b) => floats(b, "beta")?,
            None => try_filled(h, 0.0)?,
        },
        h,
    })
}

struct NormData {
    x: Vec<f64>,
    gamma: Vec<f64>,
    beta: Vec<f64>,
    h: usize,
}

/// `(x − μ)/√(σ² + eps)·γ + β` over the axes `axis..` (§2.7.4).
pub fn layer_norm(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, a: &NormAttrs) -> Result<Tensor> {
    let n = norm_operands(x, gamma, beta, a.axis)?;
    let eps = a.eps as f64;
    let mut y = try_filled(n.x.len(), 0.0)?;
    for (row, out) in n.x.chunks_exact(n.h.max(1)).zip(y.chunks_exact_mut(n.h.max(1))) {
        let h = n.h as f64;
        let mu = row.iter().sum::<f64>() / h;
        let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / h;
        let inv = 1.0 / (var + eps).sqrt();
        for (t, o) in out.iter_mut().enumerate() {
            *o = (row[t] - mu) * inv * n.gamma[t] + n.beta[t];
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

/// `x·(mean(x²) + eps)^(−1/2)·γ + β` over the axes `axis..` (§2.7.5).
pub fn rms_norm(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, a: &NormAttrs) -> Result<Tensor> {
    let n = norm_operands(x, gamma, beta, a.axis)?;
    let eps = a.eps as f64;
    let mut y = try_filled(n.x.len(), 0.0)?;
    for (row, out) in n.x.chunks_exact(n.h.max(1)).zip(y.chunks_exact_mut(n.h.max(1))) {
        let ms = row.iter().map(|v| v * v).sum::<f64>() / n.h as f64;
        let rho = 1.0 / (ms + eps).sqrt();
        for (t, o) in out.iter_mut().enumerate() {
            *o = row[t] * rho * n.gamma[t] + n.beta[t];
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn na(axis: usize, eps: f32) -> NormAttrs {
        NormAttrs { axis, eps }
    }

    #[test]
    fn softmax_rows_sum_to_one_on_any_axis() {
        let x = t(&[2, 3], &[1., 2., 3., -1., 0., 1000.]);
        let y = softmax(&x, 1, false).unwrap().to_vec::<f32>().unwrap();
        let e: Vec<f64> = [1f64, 2., 3.].iter().map(|v| (v - 3.0).exp()).collect();
        let s: f64 = e.iter().sum();
        for i in 0..3 {
            assert!((y[i] as f64 - e[i] / s).abs() < 1e-7);
        }
        assert_eq!(&y[3..], [0.0, 0.0, 1.0]);
        let y0 = softmax(&x, 0, false).unwrap().to_vec::<f32>().unwrap();
        for j in 0..3 {
            assert!((y0[j] + y0[3 + j] - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn softmax_special_values() {
        let inf = f32::INFINITY;
        let y = softmax(&t(&[2], &[-inf, -inf]), 0, false).unwrap().to_vec::<f32>().unwrap();
        assert!(y.iter().all(|v| v.is_nan()));
        let y = softmax(&t(&[3], &[1., f32::NAN, 2.]), 0, false).unwrap().to_vec::<f32>().unwrap();
        assert!(y.iter().all(|v| v.is_nan()));
        let y = softmax(&t(&[2], &[inf, 1.]), 0, false).unwrap().to_vec::<f32>().unwrap();
        assert!(y[0].is_nan());
        let y = softmax(&t(&[3], &[-inf, 0., 0.]), 0, false).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(y, [0.0, 0.5, 0.5]);
        let y = softmax(&t(&[3], &[-inf, 0., 0.]), 0, true).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(y[0], -inf);
        assert!((y[1] + std::f32::consts::LN_2).abs() < 1e-7);
        assert_eq!(softmax(&t(&[2, 0], &[]), 1, false).unwrap().shape(), &[2, 0]);
    }

    #[test]
    fn log_softmax_is_log_of_softmax() {
        let x = t(&[4], &[0.5, -1.25, 3.0, 2.0]);
        let a = softmax(&x, 0, true).unwrap().to_vec::<f32>().unwrap();
        let b = softmax(&x, 0, false).unwrap().to_vec::<f32>().unwrap();
        for (l, p) in a.iter().zip(&b) {
            assert!((l.exp() - p).abs() < 1e-6);
        }
    }

    #[test]
    fn layer_norm_of_constant_plus_eps() {
        // A constant row has μ = c and σ² = 0: the output is β (γ·0 + β).
        let x = t(&[2, 3], &[5., 5., 5., 1., 2., 3.]);
        let g = t(&[3], &[2., 2., 2.]);
        let b = t(&[3], &[0.5, -0.5, 1.]);
        let y = layer_norm(&x, &g, Some(&b), &na(1, 1e-5)).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(&y[..3], [0.5, -0.5, 1.0]);
        // Row [1, 2, 3]: μ = 2, σ² = 2/3.
        let s = (2.0f64 / 3.0 + 1e-5f32 as f64).sqrt();
        let want = [-1.0 / s * 2.0 + 0.5, 0.0 - 0.5, 1.0 / s * 2.0 + 1.0];
        for i in 0..3 {
            assert!((y[3 + i] as f64 - want[i]).abs() < 1e-6, "{} vs {}", y[3 + i], want[i]);
        }
        let z = layer_norm(&t(&[3], &[4., 4., 4.]), &t(&[3], &[1., 1., 1.]), None, &na(0, 0.0)).unwrap();
        assert!(z.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
    }

    #[test]
    fn layer_norm_over_several_axes_uses_two_passes() {
        // Large offset: mean(x²) − μ² would lose everything in f32; two passes keep it.
        let x = t(&[1, 2, 2], &[10000.0, 10001.0, 10002.0, 10003.0]);
        let g = t(&[2, 2], &[1., 1., 1., 1.]);
        let y = layer_norm(&x, &g, None, &na(1, 0.0)).unwrap().to_vec::<f32>().unwrap();
        let s = 1.25f64.sqrt();
        for (i, v) in y.iter().enumerate() {
            assert!((*v as f64 - (i as f64 - 1.5) / s).abs() < 1e-6);
        }
    }

    #[test]
    fn rms_norm_by_hand() {
        let x = t(&[2, 2], &[3., 4., 0., 0.]);
        let g = t(&[2], &[1., 2.]);
        let y = rms_norm(&x, &g, None, &na(1, 0.0)).unwrap().to_vec::<f32>().unwrap();
        let r = (12.5f64).sqrt();
        assert!((y[0] as f64 - 3.0 / r).abs() < 1e-7 && (y[1] as f64 - 8.0 / r).abs() < 1e-6);
        assert!(y[2].is_nan() && y[3].is_nan());
        let b = t(&[2], &[1., 1.]);
        let y = rms_norm(&x, &g, Some(&b), &na(1, 1e-6)).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(&y[2..], [1.0, 1.0]);
    }

    #[test]
    fn half_dtypes_round_once() {
        let x = Tensor::from_slice(&[2], &[f16::from_f32(0.0), f16::from_f32(1.0)]).unwrap();
        let y = softmax(&x, 0, false).unwrap().to_vec::<f16>().unwrap();
        let e = 1.0f64.exp();
        let want = |v: f64| f16::from_f64(crate::value::round_float(v, backend_api::DType::F16));
        assert_eq!(y, [want(1.0 / (1.0 + e)), want(e / (1.0 + e))]);
        let xb = Tensor::from_slice(&[2], &[bf16::from_f32(1.0), bf16::from_f32(3.0)]).unwrap();
        let gb = Tensor::from_slice(&[2], &[bf16::ONE, bf16::ONE]).unwrap();
        let y = layer_norm(&xb, &gb, None, &na(0, 0.0)).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!(y, [bf16::from_f32(-1.0), bf16::from_f32(1.0)]);
    }
}
