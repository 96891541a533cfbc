// Cast helpers with F64 sources or targets (SHADER_F64 + SHADER_INT64; uses math64.wgsl and
// cast_i64.wgsl). F64 -> F32/F16/BF16 rounds once from the f64 value with integer ops (F64 -> F16
// through f32 would round twice), I64 -> F64 likewise; F32 -> F64 is exact for subnormals too.

// x rounded to nearest (ties to even) into the binary format with fb fraction bits and eb
// exponent bits: returns that format's bits (overflow -> inf, NaN stays a quiet NaN).
fn f64_to_fmt_bits(x: f64, fb: u32, eb: u32) -> u32 {
    let b = bitcast<u64>(x);
    let sign = u32(b >> 63u) << (fb + eb);
    let e = i32(u32(b >> 52u) & 0x7ffu);
    let m = b & 0x000ffffffffffffflu;
    let emax = (1u << eb) - 1u;
    if (e == 0x7ff) {
        if (m != 0lu) {
            return sign | (emax << fb) | (1u << (fb - 1u)) | u32(m >> (52u - fb));
        }
        return sign | (emax << fb);
    }
    if (e == 0) {
        // an f64 subnormal is below half the smallest subnormal of every narrower format
        return sign;
    }
    var te = e - 1023 + i32(emax >> 1u);
    if (te >= i32(emax)) {
        return sign | (emax << fb);
    }
    var drop = 52u - fb;
    if (te <= 0) {
        drop = drop + u32(1 - te);
        if (drop > 60u) {
            return sign;
        }
        te = 0;
    }
    let sig = m | 0x0010000000000000lu;
    var q = u32(sig >> drop);
    let rem = sig & ((1lu << drop) - 1lu);
    let half = 1lu << (drop - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) {
        q = q + 1u;
    }
    if (te == 0) {
        // subnormal (a carry to 2^fb is exactly the smallest normal)
        return sign | q;
    }
    // q holds the implicit bit: a carry out of the fraction bumps the exponent, up to inf
    return sign | ((u32(te - 1) << fb) + q);
}

fn f64_to_f32(x: f64) -> f32 {
    return bitcast<f32>(f64_to_fmt_bits(x, 23u, 8u));
}

// The F16 value nearest to x, held exactly in f32 (the F16 store then rounds nothing).
fn f64_to_f16r(x: f64) -> f32 {
    return f16_bits_to_f32(f64_to_fmt_bits(x, 10u, 5u));
}

fn f64_to_bf16r(x: f64) -> f32 {
    return bitcast<f32>(f64_to_fmt_bits(x, 7u, 8u) << 16u);
}

// Exact, subnormal inputs included (rebuilt from their integer significand).
fn f32_to_f64(x: f32) -> f64 {
    if (f32_is_subnormal(x)) {
        let mag = f64(bitcast<u32>(x) & 0x7fffffu) * f64_pow2(-149);
        return select(mag, -mag, f32_signbit(x));
    }
    return f64(x);
}

fn u64_to_f64(m: u64) -> f64 {
    let nbits = u64_nbits(m);
    if (nbits <= 53u) {
        return f64(m);
    }
    let drop = nbits - 53u;
    var q = m >> drop;
    let rem = m & ((1lu << drop) - 1lu);
    let half = 1lu << (drop - 1u);
    if (rem > half || (rem == half && (q & 1lu) == 1lu)) {
        q = q + 1lu;
    }
    return f64(q) * f64_pow2(i32(drop));
}

fn i64_to_f64(a: i64) -> f64 {
    let m = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
    let v = u64_to_f64(m);
    return select(v, -v, a < 0li);
}

fn f64_to_i32_sat(x: f64) -> i32 {
    if (f64_is_nan(x)) {
        return 0;
    }
    if (x >= 2147483648.0lf) {
        return 2147483647;
    }
    if (x <= -2147483648.0lf) {
        return i32(-2147483648);
    }
    return i32(x);
}

fn f64_to_u32_sat(x: f64) -> u32 {
    if (!(x >= 1.0lf)) {
        return 0u;
    }
    if (x >= 4294967296.0lf) {
        return 4294967295u;
    }
    return u32(x);
}

fn f64_to_i8_sat(x: f64) -> i32 {
    if (f64_is_nan(x)) {
        return 0;
    }
    return i32(clamp(x, -128.0lf, 127.0lf));
}

fn f64_to_u8_sat(x: f64) -> u32 {
    if (!(x >= 1.0lf)) {
        return 0u;
    }
    return u32(min(x, 255.0lf));
}

fn f64_to_i64_sat(x: f64) -> i64 {
    if (f64_is_nan(x)) {
        return 0li;
    }
    if (x >= 9223372036854775808.0lf) {
        return 9223372036854775807li;
    }
    if (x <= -9223372036854775808.0lf) {
        return bitcast<i64>(0x8000000000000000lu);
    }
    return i64(x);
}

fn f64_to_bool(x: f64) -> u32 {
    return select(0u, 1u, (bitcast<u64>(x) & 0x7ffffffffffffffflu) != 0lu);
}
