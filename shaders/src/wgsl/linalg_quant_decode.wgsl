// Quantised matmul helpers: bytes of the weight input `w` (bound as packed U8, `ld_w`) and the
// exact scalar decoders of §2.6.7 (E4M3, E5M2, E2M1, two's-complement nibbles and bytes). Every
// decoder builds its f32 from the code's bits or from exact small products, so it agrees with
// the reference bit for bit.

// Byte o of w.
fn wb(o: u32) -> u32 {
    return ld_w(o);
}

// The little-endian f16 at byte o of w, converted exactly.
fn wf16(o: u32) -> f32 {
    return f16_bits_to_f32(wb(o) | (wb(o + 1u) << 8u));
}

// The little-endian u32 at byte o of w.
fn wu32(o: u32) -> u32 {
    return wb(o) | (wb(o + 1u) << 8u) | (wb(o + 2u) << 16u) | (wb(o + 3u) << 24u);
}

// The little-endian f32 at byte o of w.
fn wf32(o: u32) -> f32 {
    return bitcast<f32>(wu32(o));
}

// The value of a byte read as I8.
fn sx8(b: u32) -> f32 {
    return f32(bitcast<i32>(b << 24u) >> 24u);
}

// The 4-bit two's-complement value of a nibble (-8..7).
fn sx4(nib: u32) -> f32 {
    return f32(bitcast<i32>(nib << 28u) >> 28u);
}

// A quiet NaN carrying `sign` (built at run time: constant NaNs are not valid WGSL).
fn qnan(sign: u32) -> f32 {
    return bitcast<f32>(sign | 0x7fc00000u);
}

// OCP E4M3FN: no infinities, S.1111.111 is NaN, subnormals m * 2^-9.
fn e4m3(b: u32) -> f32 {
    let sign = (b & 0x80u) << 24u;
    let e = (b >> 3u) & 15u;
    let m = b & 7u;
    if (e == 15u && m == 7u) {
        return qnan(sign);
    }
    if (e == 0u) {
        return bitcast<f32>(sign | bitcast<u32>(f32(m) * bitcast<f32>(0x3b000000u)));
    }
    return bitcast<f32>(sign | ((e + 120u) << 23u) | (m << 20u));
}

// OCP E5M2: exponent 31 is infinity (m = 0) or NaN, subnormals m * 2^-16.
fn e5m2(b: u32) -> f32 {
    let sign = (b & 0x80u) << 24u;
    let e = (b >> 2u) & 31u;
    let m = b & 3u;
    if (e == 31u) {
        if (m == 0u) {
            return bitcast<f32>(sign | 0x7f800000u);
        }
        return qnan(sign);
    }
    if (e == 0u) {
        return bitcast<f32>(sign | bitcast<u32>(f32(m) * bitcast<f32>(0x37800000u)));
    }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 21u));
}

// E2M1 (a 4-bit float): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
fn e2m1(nib: u32) -> f32 {
    let e = (nib >> 1u) & 3u;
    let m = nib & 1u;
    var mag = f32(m) * 0.5;
    if (e != 0u) {
        mag = f32(1u << (e - 1u)) * (1.0 + f32(m) * 0.5);
    }
    return select(mag, -mag, (nib & 8u) != 0u);
}

// Nibble k of a row of packed nibbles starting at byte o: low nibble for even k.
fn nib_at(o: u32, k: u32) -> u32 {
    return (wb(o + k / 2u) >> (4u * (k & 1u))) & 15u;
}
