// Scalar f32 maths with the special values the spec demands where WGSL built-ins leave results
// undefined (log(0), sqrt(-x), inverseSqrt(0), NaN in max/min, tanh overflow, pow of a negative
// base, ...). Special values are decided with bit tests, so that a driver that flushes subnormals
// or optimises comparisons cannot change them. Built-ins are used only where Vulkan's precision
// is enough for the op's tolerance class (exp, log, sqrt, division on a reduced range); tanh, sin,
// cos, tan, atan and erf are written here because driver versions are either too inaccurate or
// undefined outside a small range. Every function works for F16/BF16 too (computed in f32 and
// rounded on store). Naming: <op>_f32.

const F32_PI_2: f32 = 1.5707963267948966;
const F32_PI_4: f32 = 0.7853981633974483;

fn f32_copysign(x: f32, s: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}

// True for -0 and every negative value (and NaNs with the sign bit).
fn f32_signbit(x: f32) -> bool {
    return (bitcast<u32>(x) >> 31u) != 0u;
}

// +0 or -0 (by bits: a flushed subnormal is not zero here).
fn f32_is_zero(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0u;
}

fn f32_is_subnormal(x: f32) -> bool {
    let b = bitcast<u32>(x);
    return (b & 0x7f800000u) == 0u && (b & 0x7fffffu) != 0u;
}

// NaN-propagating maximum with max(-0, +0) = +0 (numpy maximum).
fn max_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b)) {
        return f32_nan();
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
    }
    return select(b, a, a > b);
}

// NaN-propagating minimum with min(-0, +0) = -0.
fn min_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b)) {
        return f32_nan();
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
    }
    return select(b, a, a < b);
}

// x if x > 0, else +0; NaN stays NaN. By bits, so subnormals keep their value.
fn relu_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    return select(x, 0.0, f32_signbit(x));
}

fn neg_f32(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ 0x80000000u);
}

fn abs_f32(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu);
}

// +1 / -1, keeping ±0 and NaN.
fn sign_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || f32_is_zero(x)) {
        return x;
    }
    return select(1.0, -1.0, f32_signbit(x));
}

// e^x; overflow to +inf and underflow to 0 decided here, not by the driver.
fn exp_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    if (x > 88.72284) {
        return f32_inf(false);
    }
    if (x < -104.0) {
        return 0.0;
    }
    return exp(x);
}

// e^x - 1 without cancellation near 0: x (1 + x/2! + ... + x^6/7!) for |x| < 0.35 (error < 2e-8),
// Horner with constant coefficients and a select rather than a loop of divisions and a branch.
fn expm1_f32(x: f32) -> f32 {
    var s = 1.0 / 5040.0;
    s = s * x + 1.0 / 720.0;
    s = s * x + 1.0 / 120.0;
    s = s * x + 1.0 / 24.0;
    s = s * x + 1.0 / 6.0;
    s = s * x + 0.5;
    s = s * x + 1.0;
    return select(exp_f32(x) - 1.0, x * s, abs(x) < 0.35);
}

// ln x; subnormal inputs are rescaled by integer ops (a driver may flush them to 0).
fn log_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    if (f32_is_zero(x)) {
        return f32_inf(true);
    }
    if (f32_signbit(x)) {
        return f32_nan();
    }
    if (f32_is_inf(x)) {
        return x;
    }
    if (f32_is_subnormal(x)) {
        // x = m * 2^-149 with m an integer below 2^23
        return log(f32(bitcast<u32>(x))) - 103.27892990343185;
    }
    return log(x);
}

// ln(1 + t) for t in [0, 1]: 2 atanh(s), s = t / (2 + t) <= 1/3, odd series to s^15 (< 2e-9).
fn log1p_unit_f32(t: f32) -> f32 {
    let s = t / (2.0 + t);
    let z = s * s;
    var p = 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    p = p * z + 1.0;
    return 2.0 * s * p;
}

fn sqrt_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || f32_is_zero(x)) {
        return x;
    }
    if (f32_signbit(x)) {
        return f32_nan();
    }
    if (f32_is_inf(x)) {
        return x;
    }
    if (f32_is_subnormal(x)) {
        // x = (2m) 2^-150, sqrt = sqrt(2m) 2^-75
        return sqrt(f32(bitcast<u32>(x) * 2u)) * bitcast<f32>(0x1a000000u);
    }
    return sqrt(x);
}

// 1/sqrt(x) as a correctly rounded sqrt and a division (inverseSqrt may be a rough estimate).
fn rsqrt_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    if (f32_is_zero(x)) {
        return f32_inf(f32_signbit(x));
    }
    if (f32_signbit(x)) {
        return f32_nan();
    }
    if (f32_is_inf(x)) {
        return 0.0;
    }
    if (f32_is_subnormal(x)) {
        return (1.0 / sqrt(f32(bitcast<u32>(x) * 2u))) * bitcast<f32>(0x65000000u);
    }
    return 1.0 / sqrt(x);
}

fn reciprocal_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    if (f32_is_zero(x)) {
        return f32_inf(f32_signbit(x));
    }
    if (f32_is_inf(x)) {
        return f32_copysign(0.0, x);
    }
    return 1.0 / x;
}

// IEEE a / b with the special cases decided explicitly (some drivers divide as a * (1/b)).
fn div_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b)) {
        return f32_nan();
    }
    let neg = f32_signbit(a) != f32_signbit(b);
    if (f32_is_zero(b)) {
        return select(f32_inf(neg), f32_nan(), f32_is_zero(a));
    }
    if (f32_is_inf(b)) {
        return select(bitcast<f32>(select(0u, 0x80000000u, neg)), f32_nan(), f32_is_inf(a));
    }
    if (f32_is_inf(a)) {
        return f32_inf(neg);
    }
    return a / b;
}

// BF16 a * b and a / b, computed in f32. The f32 product of two BF16 values is exact and an f32
// quotient rounds BF16 correctly (24 >= 2*8 + 2 bits), except where the f32 result is subnormal:
// drivers that flush f32 subnormals (NVIDIA) return 0 there, yet BF16's single rounding of the
// exact result is BF16's smallest normal 2^-126 from 2^-126 - 2^-134 up. Such results are redone
// with the dividend / smaller factor scaled by 2^24 (built from the opaque zero so the compiler
// cannot fold the scale away; the scaled operand cannot overflow when the result is this small).
fn mul_bf16(a: f32, b: f32, opaque: u32) -> f32 {
    let p = a * b;
    if (!(abs(p) < 0x1p-126f)) {
        return p;
    }
    let scale = bitcast<f32>(0x4b800000u | opaque);
    let a_small = abs(a) < abs(b);
    return tiny_bf16((select(b, a, a_small) * scale) * select(a, b, a_small));
}

fn div_bf16(a: f32, b: f32, opaque: u32) -> f32 {
    let q = div_f32(a, b);
    if (!(abs(q) < 0x1p-126f)) {
        return q;
    }
    return tiny_bf16(div_f32(a * bitcast<f32>(0x4b800000u | opaque), b));
}

// The BF16 value of q * 2^-24 for |q * 2^-24| < 2^-126: +-2^-126 when it rounds up to BF16's smallest
// normal, otherwise a BF16 subnormal, flushed to a zero of q's sign (allowed by the spec, §1.7).
fn tiny_bf16(q: f32) -> f32 {
    return select(f32_copysign(0.0, q), f32_copysign(0x1p-126f, q), abs(q) >= 0x1.fep-103f);
}

// 1 / (1 + e^-x), in the form that never overflows: with e = e^-|x| and r = 1 / (1 + e), r for
// x >= 0 and e r for x < 0 (one exp and one division, no branch on the sign).
fn sigmoid_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    let e = exp_f32(-abs(x));
    let r = 1.0 / (1.0 + e);
    return select(e * r, r, x >= 0.0);
}

// x * sigmoid(x); the limit at -inf is 0 (not -inf * 0).
fn silu_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    let e = exp_f32(-abs(x));
    let r = x / (1.0 + e);
    return select(select(e * r, 0.0, f32_is_inf(x)), r, x >= 0.0);
}

// tanh |x| = -t / (2 + t), t = e^(-2|x|) - 1: no overflow, no cancellation near 0.
fn tanh_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    let ax = abs(x);
    if (ax > 9.5) {
        return f32_copysign(1.0, x);
    }
    let t = expm1_f32(-2.0 * ax);
    return f32_copysign(-t / (2.0 + t), x);
}

// max(x, 0) + ln(1 + e^-|x|).
fn softplus_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    return max(x, 0.0) + log1p_unit_f32(exp_f32(-abs(x)));
}

// erf(a) for |a| < 0.5 by its Taylor series to a^15 (relative error < 1e-8): accurate near 0,
// where 1 - erfc would cancel.
fn erf_small_f32(a: f32) -> f32 {
    let z = a * a;
    var q = -1.0 / 75600.0;
    q = q * z + 1.0 / 9360.0;
    q = q * z - 1.0 / 1320.0;
    q = q * z + 1.0 / 216.0;
    q = q * z - 1.0 / 42.0;
    q = q * z + 1.0 / 10.0;
    q = q * z - 1.0 / 3.0;
    q = q * z + 1.0;
    return 1.1283791670955126 * a * q;
}

// erfc(a) for a >= 0 (not NaN), relatively accurate in the tail: t e^(P(s) - a^2), t = 1 / (1 + a/2),
// where P, of degree 9 in s = (t - t0) / (1 - t0) * 2 - 1 (t0 = 1 / 6.25, t at a = 10.5), was fitted
// by least squares to ln(erfc(a) / t) + a^2 on [0, 10.5]: relative error < 2e-7 before the f32
// rounding of a^2 and exp (< 1e-5 at a = 10). Beyond 10.5 erfc < 1e-49, which is 0 in f32. One
// division and one exp, no loop: Gelu and Erf stay memory-bound.
fn erfc_pos_f32(a: f32) -> f32 {
    let b = min(a, 10.5);
    let t = 1.0 / (1.0 + 0.5 * b);
    let s = t * 2.3809523582458496 - 1.3809523582458496;
    var q = 6.050904266885482e-05;
    q = q * s + 7.246741733979434e-05;
    q = q * s - 0.0005728472024202347;
    q = q * s - 0.00020406411204021424;
    q = q * s + 0.0038706993218511343;
    q = q * s - 0.0012519247829914093;
    q = q * s - 0.030146481469273567;
    q = q * s + 0.016718611121177673;
    q = q * s + 0.5746099352836609;
    q = q * s - 0.5631568431854248;
    let r = t * exp(max(q - b * b, -104.0));
    return select(r, 0.0, a > 10.5);
}

fn erf_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    let a = abs(x);
    return f32_copysign(select(1.0 - erfc_pos_f32(a), erf_small_f32(a), a < 0.5), x);
}

// 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2): x - 0.5 x erfc(u) for x >= 0 and the
// tail form 0.5 x erfc(|u|) for x < 0 (relative accuracy for large negative x); the limits at
// ±inf are exact.
fn gelu_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || x == f32_inf(false)) {
        return x;
    }
    if (x == f32_inf(true)) {
        return 0.0;
    }
    let h = 0.5 * x * erfc_pos_f32(abs(x) * 0.7071067811865476);
    return select(h, x - h, x >= 0.0);
}

// 0.5 x (1 + tanh u) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): no cancellation for
// large negative x; an overflowing u gives sigmoid 0 or 1, never NaN.
fn gelu_approx_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || x == f32_inf(false)) {
        return x;
    }
    if (x == f32_inf(true)) {
        return 0.0;
    }
    let u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return x * sigmoid_f32(2.0 * u);
}

// Round half to even, floor, ceil: identity for |x| >= 2^23, NaN and inf; the sign of the input
// is kept on the result (round(-0.4) = -0, ceil(-0.5) = -0) whatever the driver does with zeros.
fn round_f32(x: f32) -> f32 {
    if (!(abs(x) < 8388608.0)) {
        return x;
    }
    return f32_copysign(round(x), x);
}

fn floor_f32(x: f32) -> f32 {
    if (!(abs(x) < 8388608.0)) {
        return x;
    }
    return f32_copysign(floor(x), x);
}

fn ceil_f32(x: f32) -> f32 {
    if (!(abs(x) < 8388608.0)) {
        return x;
    }
    return f32_copysign(ceil(x), x);
}

// fmod: the exact a - trunc(a/b) b, by subtracting b scaled to the remainder's binade (each step is
// exact by Sterbenz's lemma; at most ~280 steps for the widest exponent gap). Sign of a.
fn rem_f32(a: f32, b: f32) -> f32 {
    if (f32_is_nan(a) || f32_is_nan(b) || f32_is_inf(a) || f32_is_zero(b)) {
        return f32_nan();
    }
    if (f32_is_inf(b)) {
        return a;
    }
    var r = abs(a);
    let y = abs(b);
    if (f32_is_subnormal(y)) {
        // a divisor below the normal range: one rounded step (subnormals may be flushed anyway)
        return f32_copysign(r - trunc(r / y) * y, a);
    }
    let ym = bitcast<u32>(y) & 0x7fffffu;
    for (var it = 0; it < 300 && r >= y; it = it + 1) {
        let re = bitcast<u32>(r) >> 23u;
        var t = bitcast<f32>((re << 23u) | ym);
        if (t > r) {
            t = bitcast<f32>(((re - 1u) << 23u) | ym);
        }
        r = r - t;
    }
    return f32_copysign(r, a);
}

// Floored modulo with the sign of b: fmod, plus b when the signs differ; a zero takes b's sign.
fn mod_f32(a: f32, b: f32) -> f32 {
    let r = rem_f32(a, b);
    if (f32_is_nan(r)) {
        return r;
    }
    if (f32_is_zero(r)) {
        return f32_copysign(0.0, b);
    }
    if (f32_signbit(r) != f32_signbit(b)) {
        return r + b;
    }
    return r;
}

// Whether y is an odd integer (every |y| >= 2^24 is even).
fn f32_is_odd_int(y: f32) -> bool {
    return abs(y) < 16777216.0 && floor(y) == y && (i32(y) & 1) != 0;
}

// x^y for finite x > 0 and finite y, through exp2/log2 with the range decided here.
fn pow_pos_f32(x: f32, y: f32) -> f32 {
    let t = y * log2(x);
    if (t >= 128.0) {
        return f32_inf(false);
    }
    if (t < -150.0) {
        return 0.0;
    }
    return exp2(t);
}

// C99 Annex F pow.
fn pow_f32(x: f32, y: f32) -> f32 {
    if (f32_is_zero(y) || x == 1.0) {
        return 1.0;
    }
    if (f32_is_nan(x) || f32_is_nan(y)) {
        return f32_nan();
    }
    let odd = f32_is_odd_int(y);
    if (f32_is_zero(x)) {
        if (y < 0.0) {
            return select(f32_inf(false), f32_copysign(f32_inf(false), x), odd);
        }
        return select(0.0, x, odd);
    }
    if (f32_is_inf(y)) {
        let ax = abs(x);
        if (ax == 1.0) {
            return 1.0;
        }
        return select(0.0, f32_inf(false), (ax > 1.0) == (y > 0.0));
    }
    if (f32_is_inf(x)) {
        let mag = select(f32_inf(false), 0.0, y < 0.0);
        return select(mag, -mag, f32_signbit(x) && odd);
    }
    if (x < 0.0) {
        if (floor(y) != y) {
            return f32_nan();
        }
        let m = pow_pos_f32(-x, y);
        return select(m, -m, odd);
    }
    return pow_pos_f32(x, y);
}
