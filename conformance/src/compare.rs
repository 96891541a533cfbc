//! Elementwise comparison of a backend's output with the reference output (§1.11).
//!
//! An element passes when `|got − want| ≤ atol·M + rtol·|want|` after the equivalences every class
//! applies: NaN equals NaN (any payload), `+∞` only `+∞` and `−∞` only `−∞`, `+0` equals `−0`, and a
//! magnitude below the dtype's smallest normal equals 0. C64 is compared per component (as F32);
//! integers and Bool bytes exactly. The error of an element is the ratio `|got − want| / allowed`,
//! so that ≤ 1 passes; a required-exact mismatch has ratio ∞.

use crate::display;
use crate::values::min_normal;
use backend_api::spec::Tolerance;
use backend_api::{DType, Tensor};

/// The worst element of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Worst {
    /// Flat (row-major) index.
    pub index: usize,
    /// Coordinates of the element.
    pub coords: Vec<usize>,
    /// The backend's value, as text.
    pub got: String,
    /// The reference value, as text.
    pub want: String,
    /// `|got − want|` (∞ for a mismatch of special values or integers).
    pub diff: f64,
    /// The allowed error `atol·M + rtol·|want|`.
    pub allowed: f64,
    /// `diff / allowed` (0 when equal).
    pub ratio: f64,
}

/// The result of comparing one output tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Elements compared.
    pub numel: usize,
    /// Elements outside the tolerance.
    pub bad: usize,
    /// The element with the largest error ratio, if any element differs at all.
    pub worst: Option<Worst>,
}

impl Comparison {
    /// Whether every element is inside the tolerance.
    pub fn passed(&self) -> bool {
        self.bad == 0
    }

    /// The largest error ratio (0 when every element is equal).
    pub fn worst_ratio(&self) -> f64 {
        self.worst.as_ref().map_or(0.0, |w| w.ratio)
    }
}

/// Compares `got` with `want` under `tol`; `magnitude` holds `M` per element for magnitude-scaled
/// ops. Errs (with a description) when dtypes, shapes or the magnitude length do not match.
pub fn compare(got: &Tensor, want: &Tensor, tol: Tolerance, magnitude: Option<&[f64]>) -> Result<Comparison, String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!(
            "output is {}{:?} but the reference gives {}{:?}",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let dtype = want.dtype();
    let size = dtype.size();
    if got.bytes().len() != want.bytes().len() {
        return Err(format!("output has {} bytes, the reference {}", got.bytes().len(), want.bytes().len()));
    }
    if let Some(m) = magnitude {
        if m.len() != want.numel() {
            return Err(format!("magnitude has {} elements for an output of {}", m.len(), want.numel()));
        }
    }
    let (rtol, atol) = tol.rtol_atol(dtype);
    let mut cmp = Comparison { numel: want.numel(), bad: 0, worst: None };
    let pairs = got.bytes().chunks_exact(size).zip(want.bytes().chunks_exact(size));
    for (i, (g, w)) in pairs.enumerate() {
        let m = magnitude.and_then(|m| m.get(i).copied()).unwrap_or(1.0);
        let (diff, allowed, ratio) = element_error(dtype, g, w, rtol, atol, m);
        if ratio > 1.0 {
            cmp.bad += 1;
        }
        if ratio > 0.0 && cmp.worst.as_ref().is_none_or(|x| ratio > x.ratio) {
            cmp.worst = Some(Worst {
                index: i,
                coords: display::coords(want.shape(), i),
                got: display::element(dtype, g),
                want: display::element(dtype, w),
                diff,
                allowed,
                ratio,
            });
        }
    }
    Ok(cmp)
}

/// `(diff, allowed, ratio)` of one element given as little-endian bytes.
fn element_error(dtype: DType, g: &[u8], w: &[u8], rtol: f64, atol: f64, m: f64) -> (f64, f64, f64) {
    match dtype {
        DType::F32 | DType::F16 | DType::BF16 | DType::F64 => {
            let (g, w) = (backend_api::element_to_f64(dtype, g), backend_api::element_to_f64(dtype, w));
            float_error(dtype, g, w, rtol, atol, m)
        }
        DType::C64 => {
            let part = |b: &[u8], o: usize| -> f64 {
                b.get(o..o + 4).map_or(f64::NAN, |s| backend_api::element_to_f64(DType::F32, s))
            };
            let re = float_error(DType::F32, part(g, 0), part(w, 0), rtol, atol, m);
            let im = float_error(DType::F32, part(g, 4), part(w, 4), rtol, atol, m);
            if im.2 > re.2 {
                im
            } else {
                re
            }
        }
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool => {
            if g == w {
                (0.0, 0.0, 0.0)
            } else {
                (f64::INFINITY, 0.0, f64::INFINITY)
            }
        }
    }
}

/// `(diff, allowed, ratio)` of one float value of `dtype` under the equivalences of §1.11.
pub fn float_error(dtype: DType, got: f64, want: f64, rtol: f64, atol: f64, m: f64) -> (f64, f64, f64) {
    let flush = |v: f64| if v.abs() < min_normal(dtype) { 0.0 } else { v };
    let (g, w) = (flush(got), flush(want));
    let mismatch = (f64::INFINITY, 0.0, f64::INFINITY);
    if w.is_nan() || g.is_nan() {
        return if w.is_nan() && g.is_nan() { (0.0, 0.0, 0.0) } else { mismatch };
    }
    if w.is_infinite() || g.is_infinite() {
        return if w == g { (0.0, 0.0, 0.0) } else { mismatch };
    }
    let diff = (g - w).abs();
    if diff == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    // A non-finite M only arises from ∞·0 in the magnitude graph, where the reference itself is
    // NaN or ∞ and was handled above; treat it as "anything goes" rather than failing.
    let m = if m.is_finite() { m } else { f64::INFINITY };
    let allowed = atol * m + rtol * w.abs();
    let ratio = if allowed > 0.0 { diff / allowed } else { f64::INFINITY };
    (diff, allowed, if ratio.is_nan() { 0.0 } else { ratio })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(tol: Tolerance, g: &[f32], w: &[f32]) -> Comparison {
        let g = Tensor::from_slice(&[g.len()], g).unwrap();
        let w = Tensor::from_slice(&[w.len()], w).unwrap();
        compare(&g, &w, tol, None).unwrap()
    }

    #[test]
    fn equivalences_hold_in_exact() {
        let sub = f32::MIN_POSITIVE / 4.0;
        let c = cmp(
            Tolerance::Exact,
            &[f32::NAN, -0.0, sub, f32::INFINITY, 1.5],
            &[-f32::NAN, 0.0, 0.0, f32::INFINITY, 1.5],
        );
        assert!(c.passed(), "{c:?}");
        assert_eq!(c.worst_ratio(), 0.0);
    }

    #[test]
    fn mismatches_are_found() {
        assert!(!cmp(Tolerance::Exact, &[1.0], &[1.0000001]).passed());
        assert!(!cmp(Tolerance::Loose, &[f32::INFINITY], &[f32::MAX]).passed());
        assert!(!cmp(Tolerance::Loose, &[f32::NEG_INFINITY], &[f32::INFINITY]).passed());
        assert!(!cmp(Tolerance::Loose, &[0.0], &[f32::NAN]).passed());
        let c = cmp(Tolerance::Approx, &[1.0, 2.0, 3.0], &[1.0, 2.0, 3.01]);
        assert_eq!((c.bad, c.worst.as_ref().unwrap().index), (1, 2));
    }

    #[test]
    fn tolerance_scales_with_magnitude() {
        let g = Tensor::from_slice(&[1], &[0.01f32]).unwrap();
        let w = Tensor::from_slice(&[1], &[0.0f32]).unwrap();
        assert!(!compare(&g, &w, Tolerance::Approx, Some(&[1.0])).unwrap().passed());
        assert!(compare(&g, &w, Tolerance::Approx, Some(&[1000.0])).unwrap().passed());
    }

    #[test]
    fn ints_and_c64_compare_exactly_or_per_component() {
        let g = Tensor::from_slice(&[2], &[1i8, -128]).unwrap();
        let w = Tensor::from_slice(&[2], &[1i8, 127]).unwrap();
        assert_eq!(compare(&g, &w, Tolerance::Exact, None).unwrap().bad, 1);
        use backend_api::Complex32;
        let g = Tensor::from_slice(&[1], &[Complex32 { re: f32::NAN, im: -0.0 }]).unwrap();
        let w = Tensor::from_slice(&[1], &[Complex32 { re: f32::NAN, im: 0.0 }]).unwrap();
        assert!(compare(&g, &w, Tolerance::Exact, None).unwrap().passed());
        let bad = Tensor::from_slice(&[2], &[1i8, 2]).unwrap();
        assert!(compare(&bad, &w, Tolerance::Exact, None).is_err());
    }
}
