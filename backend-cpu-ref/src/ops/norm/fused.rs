//! FusedResidualLayerNorm / FusedResidualRmsNorm (§2.7.8–2.7.9): `s = (x + residual) + bias`,
//! each `+` computed in f64 (exact for two values of a float dtype up to F32) and rounded to the
//! dtype of `x` as a `Binary Add` rounds it, then the plain norm of that `s`.

use super::{layer_norm, rms_norm};
use crate::layout::broadcast_map;
use crate::value::{floats, from_floats, round_float};
use backend_api::op::{FusedResidualNormAttrs, NormAttrs};
use backend_api::{bail, Result, Tensor};

/// Which plain norm follows the residual sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// `LayerNorm` (§2.7.4).
    Layer,
    /// `RmsNorm` (§2.7.5).
    Rms,
}

/// The outputs `y` and, with `emit_sum`, `s` of a fused residual norm on the node's inputs
/// `x, residual, [bias], gamma, [beta]`.
pub fn fused_residual_norm(ins: &[&Tensor], a: &FusedResidualNormAttrs, norm: Norm) -> Result<Vec<Tensor>> {
    let want = 3 + usize::from(a.has_bias) + usize::from(a.has_beta);
    if ins.len() != want {
        bail!(Arity, "fused residual {norm:?}Norm takes {want} inputs with these attributes, got {}", ins.len());
    }
    let (x, residual) = (ins[0], ins[1]);
    let bias = a.has_bias.then(|| ins[2]);
    let g = 2 + usize::from(a.has_bias);
    let (gamma, beta) = (ins[g], a.has_beta.then(|| ins[g + 1]));
    let s = residual_sum(x, residual, bias)?;
    let attrs = NormAttrs { axis: a.axis, eps: a.eps };
    let y = match norm {
        Norm::Layer => layer_norm(&s, gamma, beta, &attrs)?,
        Norm::Rms => rms_norm(&s, gamma, beta, &attrs)?,
    };
    Ok(if a.emit_sum { vec![y, s] } else { vec![y] })
}

/// `(x + residual) + bias`, rounded to the dtype of `x` after each add; no bias term without one.
pub fn residual_sum(x: &Tensor, residual: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let d = x.dtype();
    for (what, t) in [("residual", Some(residual)), ("bias", bias)] {
        if let Some(t) = t {
            if t.dtype() != d {
                bail!(DType, "fused residual norm: {what} is {} but x is {d}", t.dtype());
            }
        }
    }
    if residual.shape() != x.shape() {
        bail!(Shape, "fused residual norm: residual {:?} must have the shape of x {:?}", residual.shape(), x.shape());
    }
    let (xv, rv) = (floats(x, "x")?, floats(residual, "residual")?);
    let mut s: Vec<f64> = xv.iter().zip(&rv).map(|(a, b)| round_float(a + b, d)).collect();
    if let Some(b) = bias {
        let bv = floats(b, "bias")?;
        let map = broadcast_map(b.shape(), x.shape())?;
        for (v, &i) in s.iter_mut().zip(&map) {
            let Some(&bi) = bv.get(i) else {
                bail!(Shape, "bias {:?} does not broadcast to {:?}", b.shape(), x.shape())
            };
            *v = round_float(*v + bi, d);
        }
    }
    from_floats(d, x.shape(), &s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn attrs(has_bias: bool, has_beta: bool, emit_sum: bool) -> FusedResidualNormAttrs {
        FusedResidualNormAttrs { axis: 1, eps: 0.0, has_bias, has_beta, emit_sum }
    }

    #[test]
    fn rms_of_the_biased_sum_by_hand() {
        // s = [1, 2] + [2, 2] + [0, 0] = [3, 4]; rho = 1 / sqrt(12.5)
        let (x, r, bias, g) = (t(&[1, 2], &[1., 2.]), t(&[1, 2], &[2., 2.]), t(&[2], &[0., 0.]), t(&[2], &[1., 2.]));
        let out = fused_residual_norm(&[&x, &r, &bias, &g], &attrs(true, false, true), Norm::Rms).unwrap();
        let y = out[0].to_vec::<f32>().unwrap();
        let r = 12.5f64.sqrt();
        assert!((y[0] as f64 - 3.0 / r).abs() < 1e-7 && (y[1] as f64 - 8.0 / r).abs() < 1e-6);
        assert_eq!(out[1].to_vec::<f32>().unwrap(), [3.0, 4.0]);
    }

    #[test]
    fn layer_norm_with_a_broadcast_bias_and_beta() {
        // rows [0, 0] + [1, 3] + bias [1, -1] = [2, 2] (constant: y = beta) and [4, 0] + .. = [6, 2]
        let x = t(&[2, 2], &[0., 0., 4., 0.]);
        let r = t(&[2, 2], &[1., 3., 1., 3.]);
        let bias = t(&[1, 2], &[1., -1.]);
        let (g, b) = (t(&[2], &[1., 1.]), t(&[2], &[0.5, -0.5]));
        let mut a = attrs(true, true, false);
        a.eps = 1e-5;
        let out = fused_residual_norm(&[&x, &r, &bias, &g, &b], &a, Norm::Layer).unwrap();
        assert_eq!(out.len(), 1);
        let y = out[0].to_vec::<f32>().unwrap();
        assert_eq!(&y[..2], [0.5, -0.5]);
        // [6, 2]: mu 4, var 4: (±2) / sqrt(4 + 1e-5)
        let v = 2.0 / (4.0 + 1e-5f32 as f64).sqrt();
        assert!((y[2] as f64 - (v + 0.5)).abs() < 1e-6 && (y[3] as f64 - (-v - 0.5)).abs() < 1e-6);
    }

    #[test]
    fn the_sum_rounds_after_each_add() {
        // in f16, 2048 + 1 = 2048 (tie to even) and then + 1 again = 2048: the bias add sees the
        // rounded first sum, not 2050
        let h = |v: f32| f16::from_f32(v);
        let x = Tensor::from_slice(&[1, 1], &[h(2048.0)]).unwrap();
        let r = Tensor::from_slice(&[1, 1], &[h(1.0)]).unwrap();
        let bias = Tensor::from_slice(&[1], &[h(1.0)]).unwrap();
        let s = residual_sum(&x, &r, Some(&bias)).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(s, [h(2048.0)]);
        // no bias: no "+ 0" term, so -0 + -0 stays -0
        let z = t(&[1], &[-0.0]);
        let s = residual_sum(&z, &z, None).unwrap().to_vec::<f32>().unwrap();
        assert!(s[0] == 0.0 && s[0].is_sign_negative());
    }

    #[test]
    fn the_sum_is_emitted_where_y_is_nan() {
        // eps = 0 on an all-zero sum: y is NaN, s is still the sum
        let (x, r, g) = (t(&[1, 2], &[1., -2.]), t(&[1, 2], &[-1., 2.]), t(&[2], &[1., 1.]));
        let out = fused_residual_norm(&[&x, &r, &g], &attrs(false, false, true), Norm::Rms).unwrap();
        assert!(out[0].to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
        assert_eq!(out[1].to_vec::<f32>().unwrap(), [0.0, 0.0]);
    }

    #[test]
    fn bad_operands_are_errors() {
        let (x, g) = (t(&[1, 2], &[1., 2.]), t(&[2], &[1., 1.]));
        let short = t(&[1, 3], &[1., 2., 3.]);
        assert!(fused_residual_norm(&[&x, &short, &g], &attrs(false, false, false), Norm::Rms).is_err());
        assert!(fused_residual_norm(&[&x, &x], &attrs(false, false, false), Norm::Rms).is_err());
        let wide = t(&[3], &[1., 2., 3.]);
        assert!(fused_residual_norm(&[&x, &x, &wide, &g], &attrs(true, false, false), Norm::Layer).is_err());
    }
}
