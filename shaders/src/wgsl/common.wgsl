// Helpers shared by every kernel: invocation ids over 2-D grids, float bit tests and the exact
// f16/bf16 <-> f32 conversions (written with integer ops so that every driver agrees bit for bit).

const WG: u32 = 256u;

// Linear invocation index for a grid of up to 65535 x 65535 workgroups of WG threads.
fn linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

fn f32_is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn f32_is_inf(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

fn f32_nan() -> f32 {
    return bitcast<f32>(0x7fc00000u);
}

fn f32_inf(negative: bool) -> f32 {
    return bitcast<f32>(select(0x7f800000u, 0xff800000u, negative));
}

// IEEE binary16 bits (low 16 bits of h) to f32, exactly (subnormals, inf, NaN included).
fn f16_bits_to_f32(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) {
        return bitcast<f32>(sign | 0x7f800000u | (m << 13u));
    }
    if (e == 0u) {
        // subnormal or zero: m * 2^-24, exact in f32
        let mag = f32(m) * bitcast<f32>(0x33800000u);
        return select(mag, -mag, sign != 0u);
    }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

// f32 to binary16 bits, round to nearest even, overflow to inf, NaN kept quiet.
fn f32_to_f16_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let sign = (b >> 16u) & 0x8000u;
    let e = i32((b >> 23u) & 0xffu);
    let m = b & 0x7fffffu;
    if (e == 255) {
        return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u);
    }
    let he = e - 112;
    if (he >= 31) {
        return sign | 0x7c00u;
    }
    if (he <= 0) {
        // subnormal half (or zero): shift the full significand
        if (he < -10) {
            return sign;
        }
        let full = m | 0x800000u;
        let shift = u32(14 - he);
        let q = full >> shift;
        let rem = full & ((1u << shift) - 1u);
        let halfway = 1u << (shift - 1u);
        let up = rem > halfway || (rem == halfway && (q & 1u) == 1u);
        return sign | (q + select(0u, 1u, up));
    }
    let q = (u32(he) << 10u) | (m >> 13u);
    let rem = m & 0x1fffu;
    let up = rem > 0x1000u || (rem == 0x1000u && (q & 1u) == 1u);
    // a carry out of the mantissa correctly bumps the exponent (up to inf)
    return sign | (q + select(0u, 1u, up));
}

fn bf16_bits_to_f32(h: u32) -> f32 {
    return bitcast<f32>((h & 0xffffu) << 16u);
}

// f32 to bfloat16 bits, round to nearest even, NaN kept quiet.
fn f32_to_bf16_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16u) | 0x40u;
    }
    let lsb = (b >> 16u) & 1u;
    return (b + 0x7fffu + lsb) >> 16u;
}
