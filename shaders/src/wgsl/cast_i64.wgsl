// Cast helpers with I64 sources or targets (SHADER_INT64; no f64 needed). naga converts u32 to
// i64 with a sign extension, so the zero extension goes through u64 here.

// Number of significant bits of m (0 for 0).
fn u64_nbits(m: u64) -> u32 {
    let hi = u32(m >> 32u);
    if (hi != 0u) {
        return 64u - countLeadingZeros(hi);
    }
    return 32u - countLeadingZeros(u32(m));
}

// m rounded to nearest (ties to even) to p significant bits, as an exact f32 (p <= 24).
fn u64_round_f32(m: u64, p: u32) -> f32 {
    let nbits = u64_nbits(m);
    if (nbits <= p) {
        return f32(u32(m));
    }
    let drop = nbits - p;
    var q = u32(m >> drop);
    let rem = m & ((1lu << drop) - 1lu);
    let half = 1lu << (drop - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) {
        q = q + 1u;
    }
    return f32(q) * bitcast<f32>((127u + drop) << 23u);
}

fn i64_round_f32(a: i64, p: u32) -> f32 {
    let m = select(bitcast<u64>(a), 0lu - bitcast<u64>(a), a < 0li);
    let v = u64_round_f32(m, p);
    return select(v, -v, a < 0li);
}

fn u32_to_i64(a: u32) -> i64 {
    return bitcast<i64>(u64(a));
}

fn f32_to_i64_sat(x: f32) -> i64 {
    if (f32_is_nan(x)) {
        return 0li;
    }
    if (x >= 9223372036854775808.0) {
        return 9223372036854775807li;
    }
    if (x <= -9223372036854775808.0) {
        return bitcast<i64>(0x8000000000000000lu);
    }
    return i64(x);
}
