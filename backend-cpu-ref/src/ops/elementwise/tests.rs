//! Tests of the elementwise family: special-value tables and the integer rules, per dtype.

use super::*;
use backend_api::{Complex32, Element};
use half::{bf16, f16};

const INF: f32 = f32::INFINITY;
const NAN: f32 = f32::NAN;

fn t<T: Element>(v: &[T]) -> Tensor {
    Tensor::from_slice(&[v.len()], v).unwrap()
}
fn un<T: Element>(op: UnaryOp, v: &[T]) -> Vec<T> {
    unary(op, &t(v)).unwrap().to_vec::<T>().unwrap()
}
fn bin<T: Element>(op: BinaryOp, a: &[T], b: &[T]) -> Vec<T> {
    binary(op, &t(a), &t(b)).unwrap().to_vec::<T>().unwrap()
}
/// Bitwise float comparison that treats every NaN alike and tells −0 from +0.
fn same(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

#[test]
fn float_unary_special_values() {
    let cases: &[(UnaryOp, &[f32], &[f32])] = &[
        (UnaryOp::Relu, &[-0.0, -2.0, 3.0, NAN, -INF], &[0.0, 0.0, 3.0, NAN, 0.0]),
        (UnaryOp::Sigmoid, &[INF, -INF, 0.0], &[1.0, 0.0, 0.5]),
        (UnaryOp::Tanh, &[INF, -INF, -0.0], &[1.0, -1.0, -0.0]),
        (UnaryOp::Exp, &[-INF, INF, 100.0, 0.0], &[0.0, INF, INF, 1.0]),
        (UnaryOp::Log, &[0.0, -0.0, -1.0, INF, 1.0], &[-INF, -INF, NAN, INF, 0.0]),
        (UnaryOp::Sqrt, &[-0.0, -1.0, INF, 4.0], &[-0.0, NAN, INF, 2.0]),
        (UnaryOp::Rsqrt, &[0.0, -0.0, -1.0, INF, 4.0], &[INF, -INF, NAN, 0.0, 0.5]),
        (UnaryOp::Neg, &[0.0, -INF, 1.5], &[-0.0, INF, -1.5]),
        (UnaryOp::Abs, &[-0.0, -INF, -1.5], &[0.0, INF, 1.5]),
        (UnaryOp::Gelu, &[INF, -INF, 0.0], &[INF, 0.0, 0.0]),
        (UnaryOp::GeluApprox, &[INF, -INF, 0.0], &[INF, 0.0, 0.0]),
        (UnaryOp::Silu, &[INF, -INF, 0.0], &[INF, 0.0, 0.0]),
        (UnaryOp::Round, &[0.5, 1.5, 2.5, -0.5, -0.4, -2.5, -0.0, INF], &[0.0, 2.0, 2.0, -0.0, -0.0, -2.0, -0.0, INF]),
        (UnaryOp::Floor, &[-0.5, -0.0, 1.7, -INF], &[-1.0, -0.0, 1.0, -INF]),
        (UnaryOp::Ceil, &[-0.5, -0.0, 1.2, INF], &[-0.0, -0.0, 2.0, INF]),
        (UnaryOp::Sign, &[-0.0, 0.0, -3.0, 2.0, NAN, -INF], &[-0.0, 0.0, -1.0, 1.0, NAN, -1.0]),
        (UnaryOp::Reciprocal, &[0.0, -0.0, INF, -INF, 4.0], &[INF, -INF, 0.0, -0.0, 0.25]),
        (UnaryOp::Sin, &[INF, -INF, 0.0], &[NAN, NAN, 0.0]),
        (UnaryOp::Cos, &[INF, 0.0], &[NAN, 1.0]),
        (UnaryOp::Tan, &[-INF, -0.0], &[NAN, -0.0]),
        (UnaryOp::Atan, &[INF, -INF], &[std::f32::consts::FRAC_PI_2, -std::f32::consts::FRAC_PI_2]),
        (UnaryOp::Erf, &[INF, -INF, -0.0], &[1.0, -1.0, -0.0]),
        (UnaryOp::Softplus, &[INF, -INF, 0.0], &[INF, 0.0, std::f32::consts::LN_2]),
    ];
    for (op, x, want) in cases {
        let got = un(*op, x);
        assert!(same(&got, want), "{op:?}({x:?}) = {got:?}, want {want:?}");
        // Every float op maps NaN to NaN.
        assert!(un(*op, &[NAN])[0].is_nan(), "{op:?}(NaN)");
    }
}

#[test]
fn unary_values_round_once_in_every_float_dtype() {
    let e16 = un(UnaryOp::Exp, &[f16::ONE])[0];
    assert_eq!(e16, f16::from_f64(crate::value::round_float(std::f64::consts::E, DType::F16)));
    let s = un(UnaryOp::Sqrt, &[bf16::from_f32(2.0)])[0];
    assert_eq!(s.to_bits(), 0x3fb5); // √2 = 1.01101010000…₂ → 1.0110101
    assert_eq!(un(UnaryOp::Exp, &[f16::from_f32(12.0)])[0], f16::INFINITY);
    assert_eq!(un(UnaryOp::Sqrt, &[2.0f64])[0], std::f64::consts::SQRT_2);
    assert!((un(UnaryOp::Gelu, &[-3.0f64])[0] - (-0.0040496940948903)).abs() < 1e-15);
}

#[test]
fn integer_unary_wraps() {
    assert_eq!(un(UnaryOp::Neg, &[i8::MIN, 5, 0]), [i8::MIN, -5, 0]);
    assert_eq!(un(UnaryOp::Abs, &[i32::MIN, -7]), [i32::MIN, 7]);
    assert_eq!(un(UnaryOp::Neg, &[1u8, 0]), [255, 0]);
    assert_eq!(un(UnaryOp::Abs, &[200u8]), [200]);
    assert_eq!(un(UnaryOp::Relu, &[-3i64, 4]), [0, 4]);
    assert_eq!(un(UnaryOp::Relu, &[u32::MAX]), [u32::MAX]);
    assert_eq!(un(UnaryOp::Sign, &[-9i32, 0, 7]), [-1, 0, 1]);
    assert_eq!(un(UnaryOp::Sign, &[0u8, 9]), [0, 1]);
    assert_eq!(un(UnaryOp::Not, &[0u8, 0xf0]), [0xff, 0x0f]);
    assert_eq!(un(UnaryOp::Not, &[0i32, -1]), [-1, 0]);
    assert_eq!(un(UnaryOp::Not, &[true, false]), [false, true]);
    let z = un(UnaryOp::Neg, &[Complex32 { re: 1.0, im: -0.0 }]);
    assert_eq!((z[0].re, z[0].im.to_bits()), (-1.0, 0.0f32.to_bits()));
    assert!(unary(UnaryOp::Exp, &t(&[1i32])).is_err());
    assert!(unary(UnaryOp::Not, &t(&[1.0f32])).is_err());
}

#[test]
fn float_binary_special_values() {
    assert!(same(&bin(BinaryOp::Max, &[NAN, 1.0, -0.0, 0.0], &[1.0, NAN, 0.0, -0.0]), &[NAN, NAN, 0.0, 0.0]));
    assert!(same(&bin(BinaryOp::Min, &[NAN, 1.0, -0.0, 0.0], &[1.0, NAN, 0.0, -0.0]), &[NAN, NAN, -0.0, -0.0]));
    assert!(same(
        &bin(BinaryOp::Rem, &[5.5, -5.5, 1.0, INF, 3.0], &[2.0, 2.0, 0.0, 1.0, INF]),
        &[1.5, -1.5, NAN, NAN, 3.0]
    ));
    assert!(same(
        &bin(BinaryOp::Mod, &[5.5, -5.5, -4.0, 1.0, -3.0], &[-2.0, 2.0, 2.0, 0.0, INF]),
        &[-0.5, 0.5, 0.0, NAN, INF]
    ));
    assert!(same(
        &bin(BinaryOp::Pow, &[NAN, 1.0, -8.0, -2.0, -0.0], &[0.0, NAN, 1.0 / 3.0, 3.0, -1.0]),
        &[1.0, 1.0, NAN, -8.0, -INF]
    ));
    assert!(same(&bin(BinaryOp::Div, &[1.0, -1.0, 0.0], &[0.0, 0.0, 0.0]), &[INF, -INF, NAN]));
    assert_eq!(bin(BinaryOp::Add, &[f16::from_f32(65504.0)], &[f16::from_f32(32.0)]), [f16::INFINITY]);
    assert_eq!(bin(BinaryOp::Mul, &[1e200f64], &[1e200]), [f64::INFINITY]);
}

#[test]
fn integer_binary_rules() {
    assert_eq!(bin(BinaryOp::Add, &[i8::MAX, 100u8 as i8], &[1, 100]), [i8::MIN, -56]);
    assert_eq!(bin(BinaryOp::Sub, &[0u32], &[1]), [u32::MAX]);
    assert_eq!(bin(BinaryOp::Mul, &[i64::MAX], &[2]), [-2]);
    assert_eq!(bin(BinaryOp::Div, &[7i32, -7, 7, i32::MIN, 5], &[2, 2, 0, -1, -5]), [3, -3, 0, i32::MIN, -1]);
    assert_eq!(bin(BinaryOp::Rem, &[7i32, -7, 7, i32::MIN], &[-2, 2, 0, -1]), [1, -1, 0, 0]);
    assert_eq!(bin(BinaryOp::Mod, &[7i32, -7, 7, -6, i32::MIN], &[-2, 2, 0, 3, -1]), [-1, 1, 0, 0, 0]);
    assert_eq!(bin(BinaryOp::Mod, &[7u8, 7], &[3, 0]), [1, 0]);
    assert_eq!(
        bin(BinaryOp::Pow, &[0i32, 2, -1, -1, 2, 1, 3], &[0, 10, -3, -4, -1, -9, 40]),
        [1, 1024, -1, 1, 0, 1, 3i32.wrapping_pow(40)]
    );
    assert_eq!(bin(BinaryOp::Pow, &[2u8, 3], &[9, 5]), [0, 243]);
    assert_eq!(bin(BinaryOp::Max, &[-1i8], &[1]), [1]);
    assert_eq!(bin(BinaryOp::Min, &[u32::MAX], &[1]), [1]);
    assert_eq!(bin(BinaryOp::And, &[0b1100u8], &[0b1010]), [0b1000]);
    assert_eq!(bin(BinaryOp::Or, &[-8i32], &[3]), [-5]);
    assert_eq!(bin(BinaryOp::Xor, &[-1i64], &[5]), [-6]);
    assert_eq!(bin(BinaryOp::Xor, &[true, true], &[true, false]), [false, true]);
    assert_eq!(bin(BinaryOp::And, &[true, true], &[true, false]), [true, false]);
    assert_eq!(bin(BinaryOp::Or, &[false, false], &[true, false]), [true, false]);
}

#[test]
fn complex_arithmetic() {
    let c = |re, im| Complex32 { re, im };
    let a = [c(1.0, 2.0), c(1.0, 1.0)];
    let b = [c(3.0, -1.0), c(0.0, 0.0)];
    assert_eq!(bin(BinaryOp::Add, &a, &b)[0], c(4.0, 1.0));
    assert_eq!(bin(BinaryOp::Sub, &a, &b)[0], c(-2.0, 3.0));
    assert_eq!(bin(BinaryOp::Mul, &a, &b)[0], c(5.0, 5.0));
    let q = bin(BinaryOp::Div, &a, &b);
    assert_eq!(q[0], c(0.1, 0.7));
    // (1 + i)/(0 + 0i): (1·0 + 1·0)/0 and (1·0 − 1·0)/0 are both 0/0.
    assert!(q[1].re.is_nan() && q[1].im.is_nan());
    let q = bin(BinaryOp::Div, &[c(1.0, 0.0)], &[c(2.0, 0.0)]);
    assert_eq!(q[0], c(0.5, 0.0));
}

#[test]
fn broadcasting_and_empty() {
    let a = Tensor::from_slice(&[2, 1], &[1i32, 2]).unwrap();
    let b = Tensor::from_slice(&[3], &[10i32, 20, 30]).unwrap();
    let y = binary(BinaryOp::Add, &a, &b).unwrap();
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(y.to_vec::<i32>().unwrap(), [11, 21, 31, 12, 22, 32]);
    let e = Tensor::from_slice::<i32>(&[0, 1], &[]).unwrap();
    assert_eq!(binary(BinaryOp::Add, &e, &b).unwrap().shape(), &[0, 3]);
    let s = Tensor::scalar(5i32);
    assert_eq!(binary(BinaryOp::Sub, &s, &b).unwrap().to_vec::<i32>().unwrap(), [-5, -15, -25]);
    assert!(binary(BinaryOp::Add, &t(&[1i32, 2]), &b).is_err());
    assert!(binary(BinaryOp::Add, &t(&[1i32]), &t(&[1u32])).is_err());
}

#[test]
fn compare_follows_ieee() {
    let cmp = |op, a: &[f32], b: &[f32]| compare(op, &t(a), &t(b)).unwrap().to_vec::<bool>().unwrap();
    let (a, b) = ([NAN, -0.0, 1.0, 2.0], [NAN, 0.0, 2.0, 1.0]);
    assert_eq!(cmp(CompareOp::Eq, &a, &b), [false, true, false, false]);
    assert_eq!(cmp(CompareOp::Ne, &a, &b), [true, false, true, true]);
    assert_eq!(cmp(CompareOp::Lt, &a, &b), [false, false, true, false]);
    assert_eq!(cmp(CompareOp::Le, &a, &b), [false, true, true, false]);
    assert_eq!(cmp(CompareOp::Gt, &a, &b), [false, false, false, true]);
    assert_eq!(cmp(CompareOp::Ge, &a, &b), [false, true, false, true]);
    let ci = compare(CompareOp::Lt, &t(&[u32::MAX, 0]), &t(&[0u32, 1])).unwrap();
    assert_eq!(ci.to_vec::<bool>().unwrap(), [false, true]);
    let cb = compare(CompareOp::Ne, &t(&[true, false]), &t(&[true, true])).unwrap();
    assert_eq!(cb.to_vec::<bool>().unwrap(), [false, true]);
    assert!(compare(CompareOp::Lt, &t(&[true]), &t(&[false])).is_err());
    let z = |re, im| Complex32 { re, im };
    let cz = compare(
        CompareOp::Eq,
        &t(&[z(1.0, 2.0), z(1.0, 2.0), z(NAN, 0.0)]),
        &t(&[z(1.0, 2.0), z(1.0, 3.0), z(NAN, 0.0)]),
    )
    .unwrap();
    assert_eq!(cz.to_vec::<bool>().unwrap(), [true, false, false]);
}

#[test]
fn where_selects_without_propagating() {
    let cond = Tensor::from_slice(&[2, 1], &[true, false]).unwrap();
    let x = t(&[NAN, 1.0]);
    let y = Tensor::scalar(-1.0f32);
    let out = where_(&cond, &x, &y).unwrap();
    assert_eq!(out.shape(), &[2, 2]);
    assert!(same(&out.to_vec::<f32>().unwrap(), &[NAN, 1.0, -1.0, -1.0]));
    let all = where_(&Tensor::scalar(true), &t(&[1u8, 2]), &t(&[9u8, 9])).unwrap();
    assert_eq!(all.to_vec::<u8>().unwrap(), [1, 2]);
}

#[test]
fn fma_single_rounding_and_specials() {
    let (a, b, c) = (8.0f32 + 2f32.powi(-20), 8.0f32 - 2f32.powi(-20), 2f32.powi(30) + 128.0);
    let y = fma(&t(&[a, 0.0, 2.0]), &t(&[b, INF, 3.0]), &t(&[c, 1.0, 1.0])).unwrap().to_vec::<f32>().unwrap();
    assert!(same(&y, &[2f32.powi(30) + 128.0, NAN, 7.0]));
    // The product 1e600 is not rounded (to +∞) before the add: the fused result is −∞, not NaN.
    let z = fma(&t(&[1e300f64]), &t(&[1e300f64]), &Tensor::scalar(-INF as f64)).unwrap();
    assert_eq!(z.to_vec::<f64>().unwrap(), [f64::NEG_INFINITY]);
    let h = fma(&t(&[f16::from_f32(3.0)]), &t(&[f16::from_f32(0.5)]), &t(&[f16::ONE])).unwrap();
    assert_eq!(h.to_vec::<f16>().unwrap(), [f16::from_f32(2.5)]);
}
