// Value conversions of Cast (§2.2.6) between 32-bit registers: integer -> float with one
// rounding (done with integer ops: the rounding of a driver's int -> float conversion is not
// specified, and int -> BF16 through f32 would round twice), float -> integer with NaN -> 0,
// truncation and saturation decided here (naga's conversion clamps to the largest float below
// the integer range, e.g. 2147483520 for i32), and float -> Bool by bits (a driver may flush
// subnormals to 0).

// m rounded to nearest (ties to even) to p significant bits, as an exact f32 (p <= 24).
fn u32_round_f32(m: u32, p: u32) -> f32 {
    let nbits = 32u - countLeadingZeros(m);
    if (nbits <= p) {
        return f32(m);
    }
    let drop = nbits - p;
    var q = m >> drop;
    let rem = m & ((1u << drop) - 1u);
    let half = 1u << (drop - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) {
        q = q + 1u;
    }
    return f32(q) * bitcast<f32>((127u + drop) << 23u);
}

fn i32_round_f32(a: i32, p: u32) -> f32 {
    let m = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0);
    let v = u32_round_f32(m, p);
    return select(v, -v, a < 0);
}

fn f32_to_i32_sat(x: f32) -> i32 {
    if (f32_is_nan(x)) {
        return 0;
    }
    if (x >= 2147483648.0) {
        return 2147483647;
    }
    if (x <= -2147483648.0) {
        return i32(-2147483648);
    }
    return i32(x);
}

fn f32_to_u32_sat(x: f32) -> u32 {
    if (!(x >= 1.0)) {
        return 0u;
    }
    if (x >= 4294967296.0) {
        return 4294967295u;
    }
    return u32(x);
}

// Saturated to [-128, 127] (the I8 store keeps the low byte).
fn f32_to_i8_sat(x: f32) -> i32 {
    if (f32_is_nan(x)) {
        return 0;
    }
    return i32(clamp(x, -128.0, 127.0));
}

fn f32_to_u8_sat(x: f32) -> u32 {
    if (!(x >= 1.0)) {
        return 0u;
    }
    return u32(min(x, 255.0));
}

// x != 0, NaN -> true, by bits.
fn f32_to_bool(x: f32) -> u32 {
    return select(0u, 1u, (bitcast<u32>(x) & 0x7fffffffu) != 0u);
}

fn c64_to_bool(a: vec2<f32>) -> u32 {
    return select(0u, 1u, ((bitcast<u32>(a.x) | bitcast<u32>(a.y)) & 0x7fffffffu) != 0u);
}
