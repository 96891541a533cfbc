// f64 maths of the elementwise family (needs SHADER_F64 and SHADER_INT64). GLSL.std.450's
// exp/log/sin/pow/... exist only for 16/32-bit floats, so every transcendental function is
// written here: range reduction plus Taylor/atanh series long enough for ~1e-15 relative error
// (the tolerance classes only need 1e-6). Arithmetic, sqrt, floor/ceil/round and fma on f64 are
// native. Special values as in math.wgsl, decided by bit tests. Naming: <op>_f64.

const F64_LN2_HI: f64 = 0.6931471806019545lf;
const F64_LN2_LO: f64 = -4.2009150726810846e-11lf;
const F64_PI_2: f64 = 1.5707963267948966lf;
const F64_PI_4: f64 = 0.7853981633974483lf;

fn f64_is_nan(x: f64) -> bool {
    return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu;
}

fn f64_is_inf(x: f64) -> bool {
    return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu;
}

fn f64_is_zero(x: f64) -> bool {
    return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0lu;
}

fn f64_is_subnormal(x: f64) -> bool {
    let b = bitcast<u64>(x);
    return (b & 0x7ff0000000000000lu) == 0lu && (b & 0x000ffffffffffffflu) != 0lu;
}

fn f64_signbit(x: f64) -> bool {
    return (bitcast<u64>(x) >> 63u) != 0lu;
}

fn f64_nan() -> f64 {
    return bitcast<f64>(0x7ff8000000000000lu);
}

fn f64_inf(negative: bool) -> f64 {
    return bitcast<f64>(select(0x7ff0000000000000lu, 0xfff0000000000000lu, negative));
}

fn f64_copysign(x: f64, s: f64) -> f64 {
    return bitcast<f64>((bitcast<u64>(x) & 0x7ffffffffffffffflu) | (bitcast<u64>(s) & 0x8000000000000000lu));
}

// 2^k for k in [-1022, 1023], exactly.
fn f64_pow2(k: i32) -> f64 {
    return bitcast<f64>(u64(k + 1023) << 52u);
}

fn max_f64(a: f64, b: f64) -> f64 {
    if (f64_is_nan(a) || f64_is_nan(b)) {
        return f64_nan();
    }
    if (a == b) {
        return bitcast<f64>(bitcast<u64>(a) & bitcast<u64>(b));
    }
    return select(b, a, a > b);
}

fn min_f64(a: f64, b: f64) -> f64 {
    if (f64_is_nan(a) || f64_is_nan(b)) {
        return f64_nan();
    }
    if (a == b) {
        return bitcast<f64>(bitcast<u64>(a) | bitcast<u64>(b));
    }
    return select(b, a, a < b);
}

fn relu_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    return select(x, f64(0.0), f64_signbit(x));
}

fn neg_f64(x: f64) -> f64 {
    return bitcast<f64>(bitcast<u64>(x) ^ 0x8000000000000000lu);
}

fn abs_f64(x: f64) -> f64 {
    return bitcast<f64>(bitcast<u64>(x) & 0x7ffffffffffffffflu);
}

fn sign_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || f64_is_zero(x)) {
        return x;
    }
    return select(f64(1.0), f64(-1.0), f64_signbit(x));
}

// e^x: x = k ln2 + r, |r| <= ln2/2 (ln2 in two parts, k ln2_hi exact), e^r by Taylor to r^13
// (error < 1e-17), scaled by 2^k in two exact steps so that subnormal results work.
fn exp_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (x > 709.782712893384lf) {
        return f64_inf(false);
    }
    if (x < -745.2lf) {
        return f64(0.0);
    }
    let k = round(x * 1.4426950408889634lf);
    let r = (x - k * F64_LN2_HI) - k * F64_LN2_LO;
    let c = array<f64, 14>(
        1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
        0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05, 2.7557319223985893e-06,
        2.755731922398589e-07, 2.505210838544172e-08, 2.08767569878681e-09, 1.6059043836821613e-10
    );
    var s = c[13];
    for (var n = 12; n >= 0; n = n - 1) {
        s = s * r + c[n];
    }
    let ki = i32(k);
    let k1 = ki / 2;
    return s * f64_pow2(k1) * f64_pow2(ki - k1);
}

// e^x - 1: Taylor to x^14 for |x| < 0.35 (no cancellation), else exp - 1.
fn expm1_f64(x: f64) -> f64 {
    if (abs(x) < 0.35lf) {
        let c = array<f64, 14>(
            1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
            0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05, 2.7557319223985893e-06,
            2.755731922398589e-07, 2.505210838544172e-08, 2.08767569878681e-09, 1.6059043836821613e-10,
            1.1470745597729725e-11
        );
        var s = c[13];
        for (var n = 12; n >= 0; n = n - 1) {
            s = s * x + c[n];
        }
        return x * s;
    }
    return exp_f64(x) - f64(1.0);
}

// ln x: x = 2^e m, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(f), f = (m-1)/(m+1), |f| < 0.172, by
// its odd series to f^23 (error < 1e-19). Subnormals are normalised with integer ops.
fn log_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (f64_is_zero(x)) {
        return f64_inf(true);
    }
    if (f64_signbit(x)) {
        return f64_nan();
    }
    if (f64_is_inf(x)) {
        return x;
    }
    var b = bitcast<u64>(x);
    var e = i32(u32(b >> 52u)) - 1023;
    if (f64_is_subnormal(x)) {
        // x = b 2^-1074 with b < 2^52, exact as an f64 integer
        b = bitcast<u64>(f64(b));
        e = i32(u32(b >> 52u)) - 1023 - 1074;
    }
    var m = bitcast<f64>((b & 0x000ffffffffffffflu) | 0x3ff0000000000000lu);
    if (m > 1.4142135623730951lf) {
        m = m * 0.5lf;
        e = e + 1;
    }
    let f = (m - f64(1.0)) / (m + f64(1.0));
    let z = f * f;
    let c = array<f64, 12>(
        1.0, 0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111, 0.09090909090909091,
        0.07692307692307693, 0.06666666666666667, 0.058823529411764705, 0.05263157894736842,
        0.047619047619047616, 0.043478260869565216
    );
    var p = c[11];
    for (var n = 10; n >= 0; n = n - 1) {
        p = p * z + c[n];
    }
    let ef = f64(e);
    return ef * F64_LN2_HI + (2.0lf * f * p + ef * F64_LN2_LO);
}

// ln(1 + t) for t in [0, 1]: 2 atanh(s), s = t / (2 + t) <= 1/3, odd series to s^35 (< 1e-18).
fn log1p_unit_f64(t: f64) -> f64 {
    let s = t / (2.0lf + t);
    let z = s * s;
    let c = array<f64, 18>(
        1.0, 0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111, 0.09090909090909091,
        0.07692307692307693, 0.06666666666666667, 0.058823529411764705, 0.05263157894736842,
        0.047619047619047616, 0.043478260869565216, 0.04, 0.037037037037037035, 0.034482758620689655,
        0.03225806451612903, 0.030303030303030304, 0.02857142857142857
    );
    var p = c[17];
    for (var n = 16; n >= 0; n = n - 1) {
        p = p * z + c[n];
    }
    return 2.0lf * s * p;
}

fn sqrt_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || f64_is_zero(x)) {
        return x;
    }
    if (f64_signbit(x)) {
        return f64_nan();
    }
    if (f64_is_inf(x)) {
        return x;
    }
    if (f64_is_subnormal(x)) {
        // x = b 2^-1074, sqrt = sqrt(b) 2^-537
        return sqrt(f64(bitcast<u64>(x))) * f64_pow2(-537);
    }
    return sqrt(x);
}

fn rsqrt_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (f64_is_zero(x)) {
        return f64_inf(f64_signbit(x));
    }
    if (f64_signbit(x)) {
        return f64_nan();
    }
    if (f64_is_inf(x)) {
        return f64(0.0);
    }
    if (f64_is_subnormal(x)) {
        return (f64(1.0) / sqrt(f64(bitcast<u64>(x)))) * f64_pow2(537);
    }
    return f64(1.0) / sqrt(x);
}

fn reciprocal_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (f64_is_zero(x)) {
        return f64_inf(f64_signbit(x));
    }
    if (f64_is_inf(x)) {
        return f64_copysign(f64(0.0), x);
    }
    return f64(1.0) / x;
}

fn div_f64(a: f64, b: f64) -> f64 {
    if (f64_is_nan(a) || f64_is_nan(b)) {
        return f64_nan();
    }
    let neg = f64_signbit(a) != f64_signbit(b);
    if (f64_is_zero(b)) {
        return select(f64_inf(neg), f64_nan(), f64_is_zero(a));
    }
    if (f64_is_inf(b)) {
        return select(bitcast<f64>(select(0lu, 0x8000000000000000lu, neg)), f64_nan(), f64_is_inf(a));
    }
    if (f64_is_inf(a)) {
        return f64_inf(neg);
    }
    return a / b;
}

fn sigmoid_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (x >= f64(0.0)) {
        return f64(1.0) / (f64(1.0) + exp_f64(-x));
    }
    let e = exp_f64(x);
    return e / (f64(1.0) + e);
}

fn silu_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    if (x >= f64(0.0)) {
        return x / (f64(1.0) + exp_f64(-x));
    }
    let e = exp_f64(x);
    return select(x * e / (f64(1.0) + e), f64(0.0), f64_is_inf(x));
}

fn tanh_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    let ax = abs(x);
    if (ax > 22.0lf) {
        return f64_copysign(f64(1.0), x);
    }
    let t = expm1_f64(-2.0lf * ax);
    return f64_copysign(-t / (2.0lf + t), x);
}

fn softplus_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    return max(x, f64(0.0)) + log1p_unit_f64(exp_f64(-abs(x)));
}

// erf(a), 0 <= a < 2.5, by the positive series (see erf_series_f32).
fn erf_series_f64(a: f64) -> f64 {
    let a2 = a * a;
    var term = a;
    var sum = a;
    for (var n = 1; n < 80; n = n + 1) {
        term = term * 2.0lf * a2 / f64(2 * n + 1);
        sum = sum + term;
        if (term < sum * 1e-17lf) {
            break;
        }
    }
    return 1.1283791670955126lf * exp_f64(-a2) * sum;
}

// erfc(a), a >= 1.5, by `levels` levels of the continued fraction (see erfc_cf_f32; 40 levels
// give a relative error < 1e-16 from a = 2.5, 100 levels from a = 1.5).
fn erfc_cf_f64(a: f64, levels: i32) -> f64 {
    if (a > 27.5lf) {
        return f64(0.0);
    }
    var f = a;
    for (var k = levels; k >= 1; k = k - 1) {
        f = a + (0.5lf * f64(k)) / f;
    }
    return exp_f64(-a * a) / (f * 1.7724538509055159lf);
}

fn erf_pos_f64(a: f64) -> f64 {
    if (a < 2.5lf) {
        return erf_series_f64(a);
    }
    return f64(1.0) - erfc_cf_f64(a, 40);
}

fn erfc_pos_f64(a: f64) -> f64 {
    if (a < 1.5lf) {
        return f64(1.0) - erf_series_f64(a);
    }
    return erfc_cf_f64(a, 100);
}

fn erf_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    return f64_copysign(erf_pos_f64(abs(x)), x);
}

fn gelu_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || x == f64_inf(false)) {
        return x;
    }
    if (x == f64_inf(true)) {
        return f64(0.0);
    }
    let u = x * 0.7071067811865476lf;
    if (x >= f64(0.0)) {
        return 0.5lf * x * (f64(1.0) + erf_pos_f64(u));
    }
    return 0.5lf * x * erfc_pos_f64(-u);
}

fn gelu_approx_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || x == f64_inf(false)) {
        return x;
    }
    if (x == f64_inf(true)) {
        return f64(0.0);
    }
    let u = 0.7978845608028654lf * (x + 0.044715lf * x * x * x);
    return x * sigmoid_f64(2.0lf * u);
}

// Round half to even from floor, not the `round` built-in: lavapipe's f64 RoundEven (Mesa 22.3.6
// deb12u2) rounds 1.5 to 1. For |x| < 2^52 both `x - f` and the parity test are exact.
fn round_f64(x: f64) -> f64 {
    if (!(abs(x) < 4503599627370496.0lf)) {
        return x;
    }
    let f = floor(x);
    let d = x - f;
    let odd = f - 2.0lf * floor(0.5lf * f) == 1.0lf;
    let up = d > 0.5lf || (d == 0.5lf && odd);
    return f64_copysign(select(f, f + 1.0lf, up), x);
}

fn floor_f64(x: f64) -> f64 {
    if (!(abs(x) < 4503599627370496.0lf)) {
        return x;
    }
    return f64_copysign(floor(x), x);
}

fn ceil_f64(x: f64) -> f64 {
    if (!(abs(x) < 4503599627370496.0lf)) {
        return x;
    }
    return f64_copysign(ceil(x), x);
}

// sin and cos on |r| <= 0.786 by Taylor to r^17 / r^18 (errors < 1e-19).
fn sin_poly_f64(r: f64) -> f64 {
    let z = r * r;
    let c = array<f64, 9>(
        1.0, -0.16666666666666666, 0.008333333333333333, -0.0001984126984126984,
        2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10, -7.647163731819816e-13,
        2.8114572543455206e-15
    );
    var p = c[8];
    for (var n = 7; n >= 0; n = n - 1) {
        p = p * z + c[n];
    }
    return r * p;
}

fn cos_poly_f64(r: f64) -> f64 {
    let z = r * r;
    let c = array<f64, 10>(
        1.0, -0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05,
        -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11, 4.779477332387385e-14,
        -1.5619206968586225e-16
    );
    var p = c[9];
    for (var n = 8; n >= 0; n = n - 1) {
        p = p * z + c[n];
    }
    return p;
}

// x = k pi/2 + r, |r| <= pi/4: returns r and k mod 4 (as f64). For |x| < 1e6, pi/2 is split in
// three parts, the first two of 33 bits, so that k * part is exact (|k| < 2^20); larger |x| use
// the exact Payne-Hanek reduction of math.wgsl (pio2_reduce) with the 53-bit significand.
fn trig_reduce_f64(x: f64) -> vec2<f64> {
    if (abs(x) < 1000000.0lf) {
        let k = round(x * 0.6366197723675814lf);
        let r = ((x - k * 1.5707963267341256lf) - k * 6.077100506303966e-11lf) - k * 2.0222662487959506e-21lf;
        return vec2<f64>(r, k - 4.0lf * floor(k * 0.25lf));
    }
    let b = bitcast<u64>(x) & 0x7ffffffffffffffflu;
    let m = (b & 0x000ffffffffffffflu) | 0x0010000000000000lu;
    let red = pio2_reduce(u32(m >> 32u), u32(m), i32(u32(b >> 52u)) - 1075);
    // |f| from its words, smallest first (exact terms, positive: ~1 ulp)
    let f = ((f64(red.w.w) * f64_pow2(-126) + f64(red.w.z) * f64_pow2(-94)) + f64(red.w.y) * f64_pow2(-62))
        + f64(red.w.x) * f64_pow2(-30);
    var r = select(f, -f, red.neg) * F64_PI_2;
    var q = red.q;
    if (x < f64(0.0)) {
        r = -r;
        q = (4u - q) & 3u;
    }
    return vec2<f64>(r, f64(q));
}

fn sin_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || f64_is_inf(x)) {
        return f64_nan();
    }
    let rq = trig_reduce_f64(x);
    let q = u32(rq.y);
    let v = select(sin_poly_f64(rq.x), cos_poly_f64(rq.x), (q & 1u) == 1u);
    return select(v, -v, q >= 2u);
}

fn cos_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || f64_is_inf(x)) {
        return f64_nan();
    }
    let rq = trig_reduce_f64(x);
    let q = u32(rq.y);
    let v = select(cos_poly_f64(rq.x), sin_poly_f64(rq.x), (q & 1u) == 1u);
    return select(v, -v, q == 1u || q == 2u);
}

fn tan_f64(x: f64) -> f64 {
    if (f64_is_nan(x) || f64_is_inf(x)) {
        return f64_nan();
    }
    let rq = trig_reduce_f64(x);
    let s = sin_poly_f64(rq.x);
    let c = cos_poly_f64(rq.x);
    return select(s / c, -c / s, (u32(rq.y) & 1u) == 1u);
}

// atan on |u| <= tan(pi/8) by Taylor to u^41 (error < 1e-18).
fn atan_poly_f64(u: f64) -> f64 {
    let z = u * u;
    let c = array<f64, 21>(
        1.0, -0.3333333333333333, 0.2, -0.14285714285714285, 0.1111111111111111, -0.09090909090909091,
        0.07692307692307693, -0.06666666666666667, 0.058823529411764705, -0.05263157894736842,
        0.047619047619047616, -0.043478260869565216, 0.04, -0.037037037037037035, 0.034482758620689655,
        -0.03225806451612903, 0.030303030303030304, -0.02857142857142857, 0.02702702702702703,
        -0.02564102564102564, 0.024390243902439025
    );
    var p = c[20];
    for (var n = 19; n >= 0; n = n - 1) {
        p = p * z + c[n];
    }
    return u * p;
}

fn atan_f64(x: f64) -> f64 {
    if (f64_is_nan(x)) {
        return x;
    }
    let ax = abs(x);
    let inv = ax > f64(1.0);
    let t = select(ax, f64(1.0) / ax, inv);
    var r: f64;
    if (t > 0.41421356237309503lf) {
        r = F64_PI_4 + atan_poly_f64((t - f64(1.0)) / (t + f64(1.0)));
    } else {
        r = atan_poly_f64(t);
    }
    r = select(r, F64_PI_2 - r, inv);
    return f64_copysign(r, x);
}

// fmod by exact scaled subtraction (see rem_f32); at most ~2100 steps for the widest gap.
fn rem_f64(a: f64, b: f64) -> f64 {
    if (f64_is_nan(a) || f64_is_nan(b) || f64_is_inf(a) || f64_is_zero(b)) {
        return f64_nan();
    }
    if (f64_is_inf(b)) {
        return a;
    }
    var r = abs(a);
    let y = abs(b);
    if (f64_is_subnormal(y)) {
        return f64_copysign(r - trunc(r / y) * y, a);
    }
    let ym = bitcast<u64>(y) & 0x000ffffffffffffflu;
    for (var it = 0; it < 2200 && r >= y; it = it + 1) {
        let re = bitcast<u64>(r) >> 52u;
        var t = bitcast<f64>((re << 52u) | ym);
        if (t > r) {
            t = bitcast<f64>(((re - 1lu) << 52u) | ym);
        }
        r = r - t;
    }
    return f64_copysign(r, a);
}

fn mod_f64(a: f64, b: f64) -> f64 {
    let r = rem_f64(a, b);
    if (f64_is_nan(r)) {
        return r;
    }
    if (f64_is_zero(r)) {
        return f64_copysign(f64(0.0), b);
    }
    if (f64_signbit(r) != f64_signbit(b)) {
        return r + b;
    }
    return r;
}

fn f64_is_odd_int(y: f64) -> bool {
    return abs(y) < 9007199254740992.0lf && floor(y) == y && (i64(y) & 1li) != 0li;
}

// C99 Annex F pow; the general case is exp(y ln |x|) in f64.
fn pow_f64(x: f64, y: f64) -> f64 {
    if (f64_is_zero(y) || x == f64(1.0)) {
        return f64(1.0);
    }
    if (f64_is_nan(x) || f64_is_nan(y)) {
        return f64_nan();
    }
    let odd = f64_is_odd_int(y);
    if (f64_is_zero(x)) {
        if (y < f64(0.0)) {
            return select(f64_inf(false), f64_copysign(f64_inf(false), x), odd);
        }
        return select(f64(0.0), x, odd);
    }
    if (f64_is_inf(y)) {
        let ax = abs(x);
        if (ax == f64(1.0)) {
            return f64(1.0);
        }
        return select(f64(0.0), f64_inf(false), (ax > f64(1.0)) == (y > f64(0.0)));
    }
    if (f64_is_inf(x)) {
        let mag = select(f64_inf(false), f64(0.0), y < f64(0.0));
        return select(mag, -mag, f64_signbit(x) && odd);
    }
    if (x < f64(0.0)) {
        if (floor(y) != y) {
            return f64_nan();
        }
        let m = exp_f64(y * log_f64(-x));
        return select(m, -m, odd);
    }
    return exp_f64(y * log_f64(x));
}
