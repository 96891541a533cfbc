// f32 sin, cos, tan (with an exact Payne–Hanek style reduction for large arguments) and atan,
// split from math.wgsl and always included with it (`shaders::MATH` is both files).

// Taylor polynomials of sin and cos on |r| <= pi/4 (errors below 2e-9).
fn sin_poly_f32(r: f32) -> f32 {
    let z = r * r;
    var p = 1.0;
    for (var n = 5; n >= 1; n = n - 1) {
        p = 1.0 - z * p / f32((2 * n) * (2 * n + 1));
    }
    return r * p;
}

fn cos_poly_f32(r: f32) -> f32 {
    let z = r * r;
    var p = 1.0;
    for (var n = 6; n >= 1; n = n - 1) {
        p = 1.0 - z * p / f32((2 * n - 1) * (2 * n));
    }
    return p;
}

// 2/pi as a binary fraction, 32 bits per word, most significant first: 1152 bits, enough for a
// 128-bit window after the largest f64 exponent (Payne-Hanek reduction below).
var<private> TWO_OVER_PI: array<u32, 36> = array<u32, 36>(
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
    0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu,
    0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u,
    0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
    0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du,
    0x7527bac7u, 0xebe5f17bu, 0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u,
);

fn two_over_pi_word(j: i32) -> u32 {
    if (j < 0 || j >= 36) {
        return 0u;
    }
    return TWO_OVER_PI[j];
}

// 32 bits of 2/pi from fraction bit `start` on (bit 1 is the first; positions <= 0 are the zero
// integer part).
fn two_over_pi_bits(start: i32) -> u32 {
    let p = start - 1;
    if (p <= -32) {
        return 0u;
    }
    if (p < 0) {
        return two_over_pi_word(0) >> u32(-p);
    }
    let w = p >> 5u;
    let o = u32(p & 31);
    if (o == 0u) {
        return two_over_pi_word(w);
    }
    return (two_over_pi_word(w) << o) | (two_over_pi_word(w + 1) >> (32u - o));
}

// The 64-bit product a b as (low word, high word), from 16-bit halves.
fn mul_u32_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

// Adds v at word k of a little-endian 128-bit accumulator, carrying upwards (mod 2^128).
fn add_at_u128(acc: ptr<function, array<u32, 4>>, k: i32, v: u32) {
    var carry = v;
    for (var t = k; t < 4 && carry != 0u; t = t + 1) {
        let s = (*acc)[t] + carry;
        carry = select(0u, 1u, s < carry);
        (*acc)[t] = s;
    }
}

// x (2/pi) = k + f with f in [-1/2, 1/2]: q = k mod 4, and |f| = (w.x 2^96 + w.y 2^64 + w.z 2^32
// + w.w) 2^-126 (w.x < 2^30), negative when neg.
struct PiO2Reduced {
    q: u32,
    neg: bool,
    w: vec4<u32>,
}

// Payne-Hanek reduction of x = (mh 2^32 + ml) 2^e, exact in integer arithmetic: the bits of 2/pi
// whose products with the integer significand are multiples of 4 are skipped, the next 128 bits
// are multiplied in (mod 2^128). Valid for any finite f32 or f64 (significand below 2^64).
fn pio2_reduce(mh: u32, ml: u32, e: i32) -> PiO2Reduced {
    let s = e - 1;
    let c = array<u32, 4>(two_over_pi_bits(s + 96), two_over_pi_bits(s + 64), two_over_pi_bits(s + 32), two_over_pi_bits(s));
    let m = array<u32, 2>(ml, mh);
    var acc = array<u32, 4>(0u, 0u, 0u, 0u);
    for (var i = 0; i < 2; i = i + 1) {
        for (var j = 0; i + j < 4; j = j + 1) {
            let p = mul_u32_wide(m[i], c[j]);
            add_at_u128(&acc, i + j, p.x);
            if (i + j < 3) {
                add_at_u128(&acc, i + j + 1, p.y);
            }
        }
    }
    var r: PiO2Reduced;
    r.q = acc[3] >> 30u;
    r.neg = ((acc[3] >> 29u) & 1u) == 1u;
    var w = vec4<u32>(acc[3] & 0x3fffffffu, acc[2], acc[1], acc[0]);
    if (r.neg) {
        // |f| = 1 - fraction: the two's complement of the 126 fraction bits
        w = ~w;
        w.w = w.w + 1u;
        let c1 = select(0u, 1u, w.w == 0u);
        w.z = w.z + c1;
        let c2 = select(0u, 1u, c1 == 1u && w.z == 0u);
        w.y = w.y + c2;
        let c3 = select(0u, 1u, c2 == 1u && w.y == 0u);
        w.x = (w.x + c3) & 0x3fffffffu;
        r.q = (r.q + 1u) & 3u;
    }
    r.w = w;
    return r;
}

// x = k pi/2 + r, |r| <= pi/4: returns (r, k mod 4). For |x| < 1e5, pi/2 is split in four parts,
// the first three of 8 bits, so that k * part is exact (|k| < 2^16; absolute error ~|x| 2^-40);
// larger |x| use the exact Payne-Hanek reduction (driver sin/cos are not usable there).
fn trig_reduce_f32(x: f32) -> vec2<f32> {
    if (abs(x) < 100000.0) {
        let k = round(x * 0.6366197723675814);
        let r = (((x - k * 1.5703125) - k * 0.000484466552734375) - k * -6.407499313354492e-07) - k * 9.92093629470503e-10;
        return vec2<f32>(r, f32(i32(k) & 3));
    }
    let b = bitcast<u32>(x) & 0x7fffffffu;
    let red = pio2_reduce(0u, (b & 0x7fffffu) | 0x800000u, i32(b >> 23u) - 150);
    // |f| from its words, smallest first (positive terms: ~1 ulp whatever the magnitude)
    let f = ((f32(red.w.w) * bitcast<f32>(0x00800000u) + f32(red.w.z) * bitcast<f32>(0x10800000u))
        + f32(red.w.y) * bitcast<f32>(0x20800000u)) + f32(red.w.x) * bitcast<f32>(0x30800000u);
    var r = select(f, -f, red.neg) * F32_PI_2;
    var q = red.q;
    if (x < 0.0) {
        r = -r;
        q = (4u - q) & 3u;
    }
    return vec2<f32>(r, f32(q));
}

fn sin_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || f32_is_inf(x)) {
        return f32_nan();
    }
    let rq = trig_reduce_f32(x);
    let q = u32(rq.y);
    let v = select(sin_poly_f32(rq.x), cos_poly_f32(rq.x), (q & 1u) == 1u);
    return select(v, -v, q >= 2u);
}

fn cos_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || f32_is_inf(x)) {
        return f32_nan();
    }
    let rq = trig_reduce_f32(x);
    let q = u32(rq.y);
    let v = select(cos_poly_f32(rq.x), sin_poly_f32(rq.x), (q & 1u) == 1u);
    return select(v, -v, q == 1u || q == 2u);
}

fn tan_f32(x: f32) -> f32 {
    if (f32_is_nan(x) || f32_is_inf(x)) {
        return f32_nan();
    }
    let rq = trig_reduce_f32(x);
    let s = sin_poly_f32(rq.x);
    let c = cos_poly_f32(rq.x);
    return select(s / c, -c / s, (u32(rq.y) & 1u) == 1u);
}

// atan on |u| <= tan(pi/8) by its Taylor series to u^19 (error < 1e-8).
fn atan_poly_f32(u: f32) -> f32 {
    let z = u * u;
    var p = 1.0 / 19.0;
    for (var n = 8; n >= 0; n = n - 1) {
        p = 1.0 / f32(2 * n + 1) - z * p;
    }
    return u * p;
}

// atan: |x| > 1 uses pi/2 - atan(1/|x|); then t > tan(pi/8) uses pi/4 + atan((t-1)/(t+1)).
fn atan_f32(x: f32) -> f32 {
    if (f32_is_nan(x)) {
        return x;
    }
    let ax = abs(x);
    let inv = ax > 1.0;
    let t = select(ax, 1.0 / ax, inv);
    var r: f32;
    if (t > 0.41421356237309503) {
        r = F32_PI_4 + atan_poly_f32((t - 1.0) / (t + 1.0));
    } else {
        r = atan_poly_f32(t);
    }
    r = select(r, F32_PI_2 - r, inv);
    return f32_copysign(r, x);
}
