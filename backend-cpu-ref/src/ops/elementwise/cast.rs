//! Cast (§2.2.6): a value conversion by the table of §2.2.6, which [`crate::value::encode`]
//! implements for every (from, to) pair.

use crate::value::{from_scalars, scalars};
use backend_api::{DType, Result, Tensor};

/// `x` converted to `to`. The same dtype is the identity on the bits (NaN payloads included).
pub fn cast(x: &Tensor, to: DType) -> Result<Tensor> {
    if x.dtype() == to {
        return Ok(x.clone());
    }
    from_scalars(to, x.shape(), &scalars(x)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::Complex32;
    use half::{bf16, f16};

    fn c<T: backend_api::Element>(vals: &[T], to: DType) -> Tensor {
        cast(&Tensor::from_slice(&[vals.len()], vals).unwrap(), to).unwrap()
    }

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        let x = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 2.9, -2.9, 1e10, -1e10];
        assert_eq!(c(&x, DType::I32).to_vec::<i32>().unwrap(), [0, i32::MAX, i32::MIN, 0, 2, -2, i32::MAX, i32::MIN]);
        assert_eq!(c(&x, DType::U8).to_vec::<u8>().unwrap(), [0, 255, 0, 0, 2, 0, 255, 0]);
        assert_eq!(c(&x, DType::I8).to_vec::<i8>().unwrap(), [0, 127, -128, 0, 2, -2, 127, -128]);
        assert_eq!(c(&x, DType::U32).to_vec::<u32>().unwrap(), [0, u32::MAX, 0, 0, 2, 0, u32::MAX, 0]);
        assert_eq!(c(&x, DType::Bool).to_vec::<bool>().unwrap(), [true, true, true, false, true, true, true, true]);
        let big = [f64::MAX, 2f64.powi(63), -9.3e18];
        assert_eq!(c(&big, DType::I64).to_vec::<i64>().unwrap(), [i64::MAX, i64::MAX, i64::MIN]);
    }

    #[test]
    fn int_to_int_wraps_and_int_to_float_rounds_once() {
        assert_eq!(c(&[-1i32, 256, 255], DType::U8).to_vec::<u8>().unwrap(), [255, 0, 255]);
        assert_eq!(c(&[u32::MAX, 128], DType::I8).to_vec::<i8>().unwrap(), [-1, -128]);
        assert_eq!(c(&[-1i8], DType::U32).to_vec::<u32>().unwrap(), [u32::MAX]);
        assert_eq!(c(&[-1i8], DType::I64).to_vec::<i64>().unwrap(), [-1]);
        assert_eq!(c(&[255u8], DType::I64).to_vec::<i64>().unwrap(), [255]);
        let h = c(&[70000i32, -70000, 2049, 2051], DType::F16).to_vec::<f16>().unwrap();
        assert_eq!(
            h.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            [f64::INFINITY, f64::NEG_INFINITY, 2048.0, 2052.0]
        );
        assert_eq!(c(&[16777217i32], DType::F32).to_vec::<f32>().unwrap(), [16777216.0]);
        assert_eq!(c(&[i64::MAX], DType::F64).to_vec::<f64>().unwrap(), [9223372036854775808.0]);
    }

    #[test]
    fn float_narrowing_is_one_rounding() {
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(c(&[x], DType::F16).to_vec::<f16>().unwrap()[0].to_bits(), 0x3c01);
        assert_eq!(c(&[1e6f64], DType::F16).to_vec::<f16>().unwrap()[0], f16::INFINITY);
        assert_eq!(c(&[1e300f64], DType::F32).to_vec::<f32>().unwrap()[0], f32::INFINITY);
        // F16 → BF16: 1 + 2^-8 + 2^-10 is above the bf16 tie, so up.
        let h = f16::from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-10));
        assert_eq!(c(&[h], DType::BF16).to_vec::<bf16>().unwrap()[0].to_bits(), 0x3f81);
        assert!(c(&[f32::NAN], DType::BF16).to_vec::<bf16>().unwrap()[0].is_nan());
        assert_eq!(c(&[bf16::from_f32(3.0e38)], DType::F16).to_vec::<f16>().unwrap()[0], f16::INFINITY);
    }

    #[test]
    fn bool_and_complex() {
        assert_eq!(c(&[true, false], DType::F32).to_vec::<f32>().unwrap(), [1.0, 0.0]);
        assert_eq!(c(&[true], DType::I8).to_vec::<i8>().unwrap(), [1]);
        assert_eq!(c(&[0i32, -5], DType::Bool).to_vec::<bool>().unwrap(), [false, true]);
        let z = [Complex32 { re: -2.5, im: 7.0 }, Complex32 { re: 0.0, im: 1.0 }, Complex32 { re: 0.0, im: -0.0 }];
        assert_eq!(c(&z, DType::I32).to_vec::<i32>().unwrap(), [-2, 0, 0]);
        assert_eq!(c(&z, DType::Bool).to_vec::<bool>().unwrap(), [true, true, false]);
        assert_eq!(c(&z, DType::F64).to_vec::<f64>().unwrap(), [-2.5, 0.0, 0.0]);
        let r = c(&[3i64, -1], DType::C64).to_vec::<Complex32>().unwrap();
        assert_eq!(r, [Complex32 { re: 3.0, im: 0.0 }, Complex32 { re: -1.0, im: 0.0 }]);
        assert_eq!(c(&[true], DType::C64).to_vec::<Complex32>().unwrap(), [Complex32 { re: 1.0, im: 0.0 }]);
    }

    #[test]
    fn same_dtype_keeps_bits() {
        let nan = f32::from_bits(0x7fc0_1234);
        let t = c(&[nan], DType::F32);
        assert_eq!(t.to_vec::<f32>().unwrap()[0].to_bits(), 0x7fc0_1234);
    }
}
