//! SoftmaxCrossEntropy (§2.7.3), computed in f64 and rounded once into the logits' dtype. Its
//! backward op (`ops::backward`) shares the operand checks and the slice statistics.
//!
//! Slice offsets are built from the checked shapes, so indexing is in range by construction.

use crate::mem::try_vec;
use crate::ops::indexing::around;
use crate::ops::math;
use crate::value::{floats, from_floats};
use backend_api::{bail, Result, Tensor};

/// The logits and targets as f64 after the shared checks, with `(outer, classes, inner)`.
pub(crate) struct Operands {
    pub(crate) x: Vec<f64>,
    pub(crate) t: Vec<f64>,
    pub(crate) outer: usize,
    pub(crate) c: usize,
    pub(crate) inner: usize,
}

pub(crate) fn operands(logits: &Tensor, targets: &Tensor, axis: usize, op: &str) -> Result<Operands> {
    if targets.dtype() != logits.dtype() || targets.shape() != logits.shape() {
        bail!(
            Shape,
            "{op} targets {}{:?} must match logits {}{:?}",
            targets.dtype(),
            targets.shape(),
            logits.dtype(),
            logits.shape()
        );
    }
    let (outer, c, inner) = around(logits.shape(), axis, op)?;
    if c == 0 {
        bail!(Shape, "{op} class axis {axis} of logits {:?} is empty", logits.shape());
    }
    Ok(Operands {
        x: floats(logits, &format!("{op} logits"))?,
        t: floats(targets, &format!("{op} targets"))?,
        outer,
        c,
        inner,
    })
}

/// `(m, s)` of one slice: the NaN-propagating max and `Σ_c e^(x_c − m)`.
pub(crate) fn max_and_sum(x: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let m = x.clone().fold(f64::NEG_INFINITY, math::max);
    (m, x.map(|v| (v - m).exp()).sum())
}

/// The logits' shape without `axis`.
pub(crate) fn without(dims: &[usize], axis: usize) -> Vec<usize> {
    let mut d = dims.to_vec();
    d.remove(axis);
    d
}

/// Per slice along `axis`: `lse − Σ_{c : t_c ≠ 0} t_c · x_c` with `lse = m + ln Σ e^(x_c − m)`.
/// Terms with a zero target are skipped, so a masked (−∞) logit with target 0 stays finite.
pub fn softmax_cross_entropy(logits: &Tensor, targets: &Tensor, axis: usize) -> Result<Tensor> {
    let p = operands(logits, targets, axis, "SoftmaxCrossEntropy")?;
    if p.x.is_empty() {
        // Empty outer or inner dims (the class axis is not empty): no slice, an empty loss.
        return from_floats(logits.dtype(), &without(logits.shape(), axis), &[]);
    }
    let mut loss = try_vec(p.outer * p.inner)?;
    for o in 0..p.outer {
        for j in 0..p.inner {
            let at = move |c: usize| (o * p.c + c) * p.inner + j;
            let (m, s) = max_and_sum((0..p.c).map(|c| p.x[at(c)]));
            let lse = m + s.ln();
            let dot: f64 = (0..p.c).filter(|&c| p.t[at(c)] != 0.0).map(|c| p.t[at(c)] * p.x[at(c)]).sum();
            loss.push(lse - dot);
        }
    }
    from_floats(logits.dtype(), &without(logits.shape(), axis), &loss)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(shape: &[usize], v: &[f64]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }

    fn sce(x: &[f64], t: &[f64], shape: &[usize], axis: usize) -> Vec<f64> {
        softmax_cross_entropy(&f64s(shape, x), &f64s(shape, t), axis).unwrap().to_vec::<f64>().unwrap()
    }

    #[test]
    fn by_hand_and_as_negative_log_softmax() {
        let x = [1.0, 2.0, 3.0];
        let lse = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln();
        let y = sce(&x, &[0.0, 0.0, 1.0], &[3], 0);
        assert!((y[0] - (lse - 3.0)).abs() < 1e-15);
        let y = sce(&x, &[0.25, 0.25, 0.5], &[3], 0);
        let want = -(0.25 * (1.0 - lse) + 0.25 * (2.0 - lse) + 0.5 * (3.0 - lse));
        assert!((y[0] - want).abs() < 1e-14);
        // Unnormalised targets: the formula is still the definition.
        let y = sce(&x, &[0.0, 2.0, 0.0], &[3], 0);
        assert!((y[0] - (lse - 4.0)).abs() < 1e-14);
    }

    #[test]
    fn masked_logits_and_special_slices() {
        let inf = f64::INFINITY;
        let y = sce(&[-inf, 0.0, 0.0], &[0.0, 1.0, 0.0], &[3], 0);
        assert!((y[0] - std::f64::consts::LN_2).abs() < 1e-15);
        let y = sce(&[-inf, -inf], &[0.0, 1.0], &[2], 0);
        assert!(y[0].is_nan());
        let y = sce(&[f64::NAN, 0.0], &[0.0, 1.0], &[2], 0);
        assert!(y[0].is_nan());
        // Class axis 0 of a [2, 2] tensor: columns are the slices.
        let y = sce(&[0.0, 5.0, 0.0, 5.0], &[1.0, 0.0, 0.0, 1.0], &[2, 2], 0);
        assert!((y[0] - std::f64::consts::LN_2).abs() < 1e-15 && (y[1] - std::f64::consts::LN_2).abs() < 1e-15);
        let e = f64s(&[2, 0], &[]);
        assert!(softmax_cross_entropy(&e, &e, 1).is_err());
    }

    #[test]
    fn f32_and_bf16_round_once() {
        use half::bf16;
        let x = Tensor::from_slice(&[2], &[bf16::from_f32(0.0), bf16::from_f32(0.0)]).unwrap();
        let t = Tensor::from_slice(&[2], &[bf16::from_f32(1.0), bf16::from_f32(0.0)]).unwrap();
        let y = softmax_cross_entropy(&x, &t, 0).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!(y, [bf16::from_f64(crate::value::round_float(std::f64::consts::LN_2, backend_api::DType::BF16))]);
        let x = Tensor::from_slice(&[2], &[0.0f32, 0.0]).unwrap();
        let t = Tensor::from_slice(&[2], &[1.0f32, 0.0]).unwrap();
        let y = softmax_cross_entropy(&x, &t, 0).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(y, [std::f64::consts::LN_2 as f32]);
    }
}
