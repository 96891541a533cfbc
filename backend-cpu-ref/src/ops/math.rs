//! Scalar float and integer functions with the special values of §2.2 and the integer rules of
//! §1.8. Everything here works on exact f64 / i128 values; rounding to the output dtype happens
//! once, when the result is encoded.

use crate::value::wrap;
use backend_api::DType;

/// `2/√π`.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// `erf(a)` for `0 <= a < 2.5` by the all-positive series
/// `erf a = (2/√π)·e^(−a²)·Σ 2ⁿ a^(2n+1) / (1·3·…·(2n+1))`, which has no cancellation.
fn erf_series(a: f64) -> f64 {
    let a2 = a * a;
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * a2 / (2.0 * n + 1.0);
        sum += term;
    }
    TWO_OVER_SQRT_PI * (-a2).exp() * sum
}

/// `erfc(a)` for `a >= 2.5` by the continued fraction
/// `erfc a = e^(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …))))`, evaluated backwards.
fn erfc_fraction(a: f64) -> f64 {
    if a > 30.0 {
        return 0.0; // below the smallest subnormal
    }
    let mut f = a;
    for k in (1..=200).rev() {
        f = a + (k as f64 * 0.5) / f;
    }
    (-a * a).exp() / (f * std::f64::consts::PI.sqrt())
}

/// The error function; `±∞ → ±1`, NaN → NaN.
pub fn erf(x: f64) -> f64 {
    let a = x.abs();
    let r = if a.is_nan() {
        return x;
    } else if a < 2.5 {
        erf_series(a)
    } else {
        1.0 - erfc_fraction(a)
    };
    r.copysign(x)
}

/// The complementary error function `1 − erf x`, accurate in relative terms for large `x`.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let c = if a < 2.5 { 1.0 - erf_series(a) } else { erfc_fraction(a) };
    if x < 0.0 {
        2.0 - c
    } else {
        c
    }
}

/// Logistic sigmoid in the form that never overflows: `e^x/(1 + e^x)` for negative `x`.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `x·σ(x)`; the limit at −∞ is 0 (a naive product would be `−∞·0 = NaN`).
pub fn silu(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    x * sigmoid(x)
}

/// Exact GELU `0.5·x·(1 + erf(x/√2))`, written as `0.5·x·erfc(−x/√2)` so that large negative `x`
/// keeps its relative accuracy; the limit at −∞ is 0.
pub fn gelu(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    0.5 * x * erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// Tanh GELU `0.5·x·(1 + tanh u)`, `u = √(2/π)·(x + 0.044715·x³)`, using the identity
/// `0.5·(1 + tanh u) = σ(2u)`, which does not cancel for large negative `x`; the limit at −∞ is 0.
pub fn gelu_tanh(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    let k = (2.0 / std::f64::consts::PI).sqrt();
    let u = k * (x + 0.044715 * x * x * x);
    x * sigmoid(2.0 * u)
}

/// `ln(1 + e^x)` in the stable form `max(x, 0) + ln(1 + e^(−|x|))`.
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// NaN-propagating maximum with `max(−0, +0) = +0` (§1.7).
pub fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b {
        a
    } else if b > a || a.is_sign_negative() {
        b
    } else {
        a
    }
}

/// NaN-propagating minimum with `min(−0, +0) = −0` (§1.7).
pub fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else if b < a || b.is_sign_negative() {
        b
    } else {
        a
    }
}

/// Floored modulo with the sign of `b` (§2.2.2): `fmod`, then `+ b` when the signs differ; a zero
/// result takes the sign of `b`.
pub fn floor_mod(a: f64, b: f64) -> f64 {
    let r = a % b; // Rust's float `%` is C `fmod`, exact
    if r.is_nan() {
        r
    } else if r == 0.0 {
        0.0f64.copysign(b)
    } else if (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    }
}

/// Whether `y` is an odd integer (every float above 2^53 is even).
fn is_odd_integer(y: f64) -> bool {
    y.is_finite() && y.fract() == 0.0 && (y * 0.5).fract() != 0.0
}

/// C99 Annex F `pow`, with every special case of §2.2.2 spelled out rather than trusted to libm.
pub fn pow(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0; // pow(x, ±0) = 1 and pow(+1, y) = 1, NaN included
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let odd = is_odd_integer(y);
    if x == 0.0 {
        return match (y < 0.0, odd) {
            (true, true) => f64::INFINITY.copysign(x),
            (true, false) => f64::INFINITY,
            (false, true) => x,
            (false, false) => 0.0,
        };
    }
    if y.is_infinite() {
        let a = x.abs();
        return if a == 1.0 {
            1.0
        } else if (a > 1.0) == (y > 0.0) {
            f64::INFINITY
        } else {
            0.0
        };
    }
    if x == f64::INFINITY {
        return if y < 0.0 { 0.0 } else { f64::INFINITY };
    }
    if x == f64::NEG_INFINITY {
        let mag = if y < 0.0 { 0.0 } else { f64::INFINITY };
        return if odd { -mag } else { mag };
    }
    if x < 0.0 {
        if y.fract() != 0.0 {
            return f64::NAN;
        }
        let m = (-x).powf(y);
        return if odd { -m } else { m };
    }
    x.powf(y)
}

/// `a·b + c` for float32-family operands with one rounding to f32 (§2.2.5). The product is exact in
/// f64; the sum is formed with round-to-odd (TwoSum, then nudging an even result towards the lost
/// part), and a 53-bit round-to-odd value rounds to 24 bits exactly as the exact value would.
pub fn fma_f32(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return s as f32 as f64;
    }
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    let odd = s.to_bits() & 1 == 1;
    let s = if err == 0.0 || odd {
        s
    } else if err > 0.0 {
        s.next_up()
    } else {
        s.next_down()
    };
    s as f32 as f64
}

/// Integer `x^e` by §1.8: `x^0 = 1`; a wrapped product for `e > 0`; for `e < 0` only ±1 survive.
pub fn int_pow(x: i128, e: i128, dtype: DType) -> i128 {
    if e == 0 {
        return 1;
    }
    if e < 0 {
        return match x {
            1 => 1,
            -1 => {
                if e % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    // Square and multiply, wrapping after each product: the same low bits as `e` multiplications.
    let (mut result, mut base, mut e) = (1i128, wrap(x, dtype), e);
    while e > 0 {
        if e & 1 == 1 {
            result = wrap(result.wrapping_mul(base), dtype);
        }
        base = wrap(base.wrapping_mul(base), dtype);
        e >>= 1;
    }
    result
}

/// Integer division truncating toward zero, `x / 0 = 0` (§1.8); `MIN / −1` is `−MIN`, which wraps
/// back to `MIN` when encoded.
pub fn int_div(x: i128, y: i128) -> i128 {
    x.checked_div(y).unwrap_or(0)
}

/// Truncated remainder, `x % 0 = 0`, sign of the dividend (§1.8).
pub fn int_rem(x: i128, y: i128) -> i128 {
    x.checked_rem(y).unwrap_or(0)
}

/// Floored remainder, sign of the divisor, `x mod 0 = 0` (§1.8).
pub fn int_mod(x: i128, y: i128) -> i128 {
    let r = int_rem(x, y);
    if r != 0 && (r < 0) != (y < 0) {
        r + y
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const INF: f64 = f64::INFINITY;
    const NAN: f64 = f64::NAN;

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
    }

    #[test]
    fn erf_matches_known_values() {
        let cases = [
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (2.0, 0.9953222650189527),
            (2.5, 0.999593047982555),
            (3.0, 0.9999779095030014),
        ];
        for (x, want) in cases {
            assert!((erf(x) - want).abs() < 1e-15, "erf({x}) = {} want {want}", erf(x));
            assert!((erf(-x) + want).abs() < 1e-15);
        }
        let tails = [
            (2.5, 4.06952017444959e-4),
            (3.0, 2.209049699858544e-5),
            (5.0, 1.537459794428035e-12),
            (10.0, 2.088487583762545e-45),
            (1.0, 0.1572992070502851),
        ];
        for (x, want) in tails {
            assert!(((erfc(x) - want) / want).abs() < 1e-13, "erfc({x}) = {} want {want}", erfc(x));
        }
        assert_eq!(erf(INF), 1.0);
        assert_eq!(erf(-INF), -1.0);
        assert!(same(erf(-0.0), -0.0));
        assert!(erf(NAN).is_nan());
        assert_eq!(erfc(-INF), 2.0);
    }

    #[test]
    fn activation_limits_have_no_nan() {
        for f in [silu, gelu, gelu_tanh] {
            assert_eq!(f(INF), INF);
            assert_eq!(f(-INF), 0.0);
            assert!(f(-1e300).abs() < 1e-300);
        }
        assert_eq!(softplus(INF), INF);
        assert!(same(softplus(-INF), 0.0));
        assert!((softplus(0.0) - std::f64::consts::LN_2).abs() < 1e-16);
        assert_eq!(sigmoid(INF), 1.0);
        assert_eq!(sigmoid(-INF), 0.0);
        assert!((gelu(1.0) - 0.8413447460685429).abs() < 1e-15);
        assert!((gelu_tanh(1.0) - 0.8411919906082768).abs() < 1e-15);
    }

    #[test]
    fn max_min_propagate_nan_and_order_zeros() {
        assert!(max(NAN, 1.0).is_nan() && max(1.0, NAN).is_nan());
        assert!(min(NAN, 1.0).is_nan() && min(1.0, NAN).is_nan());
        assert!(same(max(-0.0, 0.0), 0.0) && same(max(0.0, -0.0), 0.0));
        assert!(same(min(-0.0, 0.0), -0.0) && same(min(0.0, -0.0), -0.0));
        assert_eq!(max(-INF, 3.0), 3.0);
    }

    #[test]
    fn pow_follows_annex_f() {
        let cases = [
            (NAN, 0.0, 1.0),
            (NAN, -0.0, 1.0),
            (1.0, NAN, 1.0),
            (1.0, INF, 1.0),
            (-2.0, 0.5, NAN),
            (-2.0, 3.0, -8.0),
            (-2.0, 2.0, 4.0),
            (-2.0, -1.0, -0.5),
            (0.0, -3.0, INF),
            (-0.0, -3.0, -INF),
            (-0.0, -2.0, INF),
            (-0.0, -0.5, INF),
            (0.0, 3.0, 0.0),
            (-0.0, 3.0, -0.0),
            (-0.0, 2.0, 0.0),
            (-0.0, 0.5, 0.0),
            (-1.0, INF, 1.0),
            (-1.0, -INF, 1.0),
            (0.5, INF, 0.0),
            (2.0, INF, INF),
            (0.5, -INF, INF),
            (-2.0, -INF, 0.0),
            (INF, -1.0, 0.0),
            (INF, 0.5, INF),
            (-INF, 3.0, -INF),
            (-INF, 2.0, INF),
            (-INF, 0.5, INF),
            (-INF, -3.0, -0.0),
            (-INF, -2.0, 0.0),
            (-INF, -0.5, 0.0),
            (NAN, 1.0, NAN),
            (2.0, NAN, NAN),
            (2.0, 10.0, 1024.0),
            (-1.0, 1e300, 1.0),
            (-3.0, 1e300, INF),
        ];
        for (x, y, want) in cases {
            assert!(same(pow(x, y), want), "pow({x}, {y}) = {} want {want}", pow(x, y));
        }
    }

    #[test]
    fn rem_and_mod_follow_fmod() {
        assert!(same(5.5 % 2.0, 1.5));
        assert!(same(-5.5 % 2.0, -1.5));
        assert!((1.0f64 % 0.0).is_nan() && (INF % 2.0).is_nan());
        assert!(same(3.0 % INF, 3.0));
        assert!(same(floor_mod(-5.5, 2.0), 0.5));
        assert!(same(floor_mod(5.5, -2.0), -0.5));
        assert!(same(floor_mod(-4.0, 2.0), 0.0));
        assert!(same(floor_mod(4.0, -2.0), -0.0));
        assert!(floor_mod(1.0, 0.0).is_nan() && floor_mod(-INF, 2.0).is_nan());
        assert!(same(floor_mod(3.0, INF), 3.0));
        assert!(same(floor_mod(-3.0, INF), INF));
        assert!(same(floor_mod(3.0, -INF), -INF));
        assert!(same(floor_mod(-3.0, -INF), -3.0));
    }

    #[test]
    fn fma_rounds_once() {
        let (a, b, c) = (8.0 + 2f64.powi(-20), 8.0 - 2f64.powi(-20), 2f64.powi(30) + 128.0);
        // Exact: 2^30 + 192 − 2^-40, just below the f32 tie at 2^30 + 192 (ulp 128). Rounding to
        // f64 first lands on the tie, which then goes to the even 2^30 + 256.
        assert_eq!((a * b + c) as f32 as f64, 2f64.powi(30) + 256.0);
        assert_eq!(fma_f32(a, b, c), 2f64.powi(30) + 128.0);
        assert_eq!(fma_f32(a, a, c), 2f64.powi(30) + 256.0);
        assert!(fma_f32(0.0, INF, 1.0).is_nan());
        assert_eq!(fma_f32(3.0e38, 10.0, 0.0), INF);
        assert_eq!(fma_f32(2.0, 3.0, 1.0), 7.0);
    }

    #[test]
    fn integer_rules() {
        assert_eq!(int_div(7, -2), -3);
        assert_eq!(int_div(-7, 2), -3);
        assert_eq!(int_div(5, 0), 0);
        assert_eq!(wrap(int_div(i32::MIN as i128, -1), DType::I32), i32::MIN as i128);
        assert_eq!(int_rem(-7, 2), -1);
        assert_eq!(int_rem(7, -2), 1);
        assert_eq!(int_rem(5, 0), 0);
        assert_eq!(int_rem(i8::MIN as i128, -1), 0);
        assert_eq!(int_mod(-7, 2), 1);
        assert_eq!(int_mod(7, -2), -1);
        assert_eq!(int_mod(-6, 3), 0);
        assert_eq!(int_mod(5, 0), 0);
        assert_eq!(int_pow(0, 0, DType::I32), 1);
        assert_eq!(int_pow(3, 4, DType::I32), 81);
        assert_eq!(int_pow(2, 8, DType::U8), 0);
        assert_eq!(int_pow(3, 5, DType::I8), wrap(243, DType::I8));
        assert_eq!(int_pow(2, 1 << 40, DType::I64), 0);
        assert_eq!(int_pow(-1, (1i128 << 62) + 1, DType::I64), -1);
        assert_eq!(int_pow(1, -5, DType::I32), 1);
        assert_eq!(int_pow(-1, -5, DType::I32), -1);
        assert_eq!(int_pow(-1, -4, DType::I32), 1);
        assert_eq!(int_pow(0, -1, DType::I32), 0);
        assert_eq!(int_pow(2, -1, DType::I32), 0);
    }
}
