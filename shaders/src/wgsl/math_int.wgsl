// 32-bit integer and complex helpers of the elementwise family (§1.8 integer rules). I8 and U8
// values are computed in i32 / u32 registers: every operation here wraps modulo 2^32, and the
// store keeps the low 8 bits, which is the same as wrapping modulo 2^8. WGSL's own integer
// division returns the dividend for a zero divisor, so the spec's x / 0 = 0 is decided here.

fn sign_i32(a: i32) -> i32 {
    return select(select(0, -1, a < 0), 1, a > 0);
}

fn abs_i32(a: i32) -> i32 {
    return select(a, 0 - a, a < 0);
}

// Truncating division; x / 0 = 0, MIN / -1 = MIN (the wrapped negation).
fn div_i32(a: i32, b: i32) -> i32 {
    if (b == 0) {
        return 0;
    }
    if (b == -1) {
        return 0 - a;
    }
    return a / b;
}

// Truncated remainder (sign of a); x % 0 = 0, MIN % -1 = 0.
fn rem_i32(a: i32, b: i32) -> i32 {
    if (b == 0 || b == -1) {
        return 0;
    }
    return a % b;
}

// Floored remainder (sign of b): rem, plus b when non-zero with the other sign.
fn mod_i32(a: i32, b: i32) -> i32 {
    let r = rem_i32(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) {
        return r + b;
    }
    return r;
}

// x^e: 1 for e = 0; for e < 0 only 1 and -1 survive; else square and multiply, wrapping.
fn pow_i32(x: i32, e: i32) -> i32 {
    if (e == 0) {
        return 1;
    }
    if (e < 0) {
        if (x == 1) {
            return 1;
        }
        if (x == -1) {
            return select(-1, 1, (e & 1) == 0);
        }
        return 0;
    }
    var result = 1;
    var base = x;
    var n = u32(e);
    while (n != 0u) {
        if ((n & 1u) == 1u) {
            result = result * base;
        }
        base = base * base;
        n = n >> 1u;
    }
    return result;
}

fn div_u32(a: u32, b: u32) -> u32 {
    return select(a / max(b, 1u), 0u, b == 0u);
}

fn rem_u32(a: u32, b: u32) -> u32 {
    return select(a % max(b, 1u), 0u, b == 0u);
}

// Unsigned floored modulo equals the remainder.
fn mod_u32(a: u32, b: u32) -> u32 {
    return rem_u32(a, b);
}

fn pow_u32(x: u32, e: u32) -> u32 {
    var result = 1u;
    var base = x;
    var n = e;
    while (n != 0u) {
        if ((n & 1u) == 1u) {
            result = result * base;
        }
        base = base * base;
        n = n >> 1u;
    }
    return result;
}

fn neg_c64(a: vec2<f32>) -> vec2<f32> {
    return bitcast<vec2<f32>>(bitcast<vec2<u32>>(a) ^ vec2<u32>(0x80000000u));
}

// Exact two-way split of an f32: the high part keeps 12 significant bits, so that products of
// parts are exact in f32 whatever the driver does with contraction (an exact product rounds the
// same fused or not).
fn c64_split(x: f32) -> vec2<f32> {
    let hi = bitcast<f32>(bitcast<u32>(x) & 0xfffff000u);
    return vec2<f32>(hi, x - hi);
}

// x unchanged, through an OR with z, which the caller passes as a uniform that is always 0. Mesa
// (and other drivers) rewrite float expressions algebraically unless they are marked exact, and
// WGSL cannot mark them: TwoSum's error term (a - ((a + b) - ((a + b) - a))) + ... folds to 0.
// A value the compiler cannot see through keeps every step as written.
fn f32_opaque(x: f32, z: u32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | z);
}

// The rounding error of s = a + b (Knuth's TwoSum, exact with round-to-nearest).
fn f32_two_sum_err(a: f32, b: f32, s: f32, z: u32) -> f32 {
    let bb = f32_opaque(s - a, z);
    let av = f32_opaque(s - bb, z);
    return (a - av) + (b - bb);
}

// p r + sgn q s, sgn = ±1, as accurately as if computed in twice the precision and then rounded:
// the eight exact partial products of the split operands are summed with their rounding errors
// carried along (Ogita, Rump and Oishi's Sum2), so a cancellation between p r and q s keeps the
// result's relative accuracy (the reference computes these sums exactly). z: an opaque 0.
fn c64_dot2(p: f32, r: f32, q: f32, s: f32, sgn: f32, z: u32) -> f32 {
    if (!(abs(p) < f32_inf(false) && abs(r) < f32_inf(false) && abs(q) < f32_inf(false) && abs(s) < f32_inf(false))) {
        // a non-finite component: the plain IEEE formula (the split would turn inf into NaN)
        return p * r + sgn * (q * s);
    }
    let ps = c64_split(p);
    let rs = c64_split(r);
    let qs = c64_split(q);
    let ss = c64_split(s);
    let t = array<f32, 8>(
        ps.x * rs.x, sgn * (qs.x * ss.x), ps.x * rs.y, ps.y * rs.x,
        sgn * (qs.x * ss.y), sgn * (qs.y * ss.x), ps.y * rs.y, sgn * (qs.y * ss.y),
    );
    var sum = t[0];
    var err = 0.0;
    for (var k = 1; k < 8; k = k + 1) {
        let n = f32_opaque(sum + t[k], z);
        err = err + f32_two_sum_err(sum, t[k], n, z);
        sum = n;
    }
    return sum + err;
}

// (p + qi)(r + si) = (pr - qs) + (ps + qr)i; z: an opaque 0 (see f32_opaque).
fn mul_c64(a: vec2<f32>, b: vec2<f32>, z: u32) -> vec2<f32> {
    return vec2<f32>(c64_dot2(a.x, b.x, a.y, b.y, -1.0, z), c64_dot2(a.x, b.y, a.y, b.x, 1.0, z));
}

// ((pr + qs) + (qr - ps)i) / (r^2 + s^2), as the spec writes it (IEEE results for 0 + 0i).
fn div_c64(a: vec2<f32>, b: vec2<f32>, z: u32) -> vec2<f32> {
    let d = b.x * b.x + b.y * b.y;
    let re = c64_dot2(a.x, b.x, a.y, b.y, 1.0, z);
    let im = c64_dot2(a.y, b.x, a.x, b.y, -1.0, z);
    return vec2<f32>(re / d, im / d);
}
