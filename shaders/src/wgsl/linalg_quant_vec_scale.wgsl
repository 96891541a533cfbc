// Units of the scale-tensor formats for `linalg_quant_vec.wgsl`: `unit_bytes(n, rb, u)` and
// `unit_nibs(n, rb, u)` add elements 16u .. 16u + 15 of the row starting at byte rb of w (4 words
// of 8-bit codes, or 2 words of nibbles). The unit's scale (and zero point, global scale) are read once, `q_s` below, when all
// its elements share one scale block (`UNIFORM`: always for FP8 and Nvfp4, and for the integer
// formats when the block size is a multiple of 16, or the unit lies within one block); otherwise
// the unit is decoded element by element (`slow`). Codes are decoded from their bits, four per
// vector, exactly as the scalar decoders of `linalg_quant_decode.wgsl` do.

// The unit's scales as a vector (scale, zero point or global scale, unused, unused).
fn q_s(n: u32, k0: u32) -> vec4<f32> {
    return {{SCALE}};
}

// The weights of the codes q (one vector of four) from the unit's scales s.
fn q_w(q: vec4<f32>, s: vec4<f32>) -> vec4<f32> {
    return {{WEIGHT}};
}

// Elements 4 i .. 4 i + 3 of a unit of nibbles whose two words are v0, v1 (low nibble first).
fn nib4(v0: u32, v1: u32, i: u32) -> vec4<u32> {
    let v = select(v0, v1, i >= 2u) >> (16u * (i & 1u));
    return (vec4<u32>(v) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u);
}

// Four bytes as I8 / U8 values.
fn codes_i8(v: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(vec4<i32>(v << vec4<u32>(24u)) >> vec4<u32>(24u));
}

fn codes_u8(v: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(v);
}

// Four nibbles as 4-bit two's-complement values.
fn codes_i4(v: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(vec4<i32>(v << vec4<u32>(28u)) >> vec4<u32>(28u));
}

// Four E4M3FN bytes (NaN for S.1111.111, subnormals m · 2^-9).
fn codes_e4m3(v: vec4<u32>) -> vec4<f32> {
    let sign = (v & vec4<u32>(0x80u)) << vec4<u32>(24u);
    let e = (v >> vec4<u32>(3u)) & vec4<u32>(15u);
    let m = v & vec4<u32>(7u);
    let normal = sign | ((e + 120u) << vec4<u32>(23u)) | (m << vec4<u32>(20u));
    let sub = sign | bitcast<vec4<u32>>(vec4<f32>(m) * bitcast<f32>(0x3b000000u));
    let nan = sign | vec4<u32>(0x7fc00000u);
    let nanm = (e == vec4<u32>(15u)) & (m == vec4<u32>(7u));
    return bitcast<vec4<f32>>(select(select(normal, sub, e == vec4<u32>(0u)), nan, nanm));
}

// Four E5M2 bytes (infinity for exponent 31 and m = 0, NaN for m != 0, subnormals m · 2^-16).
fn codes_e5m2(v: vec4<u32>) -> vec4<f32> {
    let sign = (v & vec4<u32>(0x80u)) << vec4<u32>(24u);
    let e = (v >> vec4<u32>(2u)) & vec4<u32>(31u);
    let m = v & vec4<u32>(3u);
    let normal = sign | ((e + 112u) << vec4<u32>(23u)) | (m << vec4<u32>(21u));
    let sub = sign | bitcast<vec4<u32>>(vec4<f32>(m) * bitcast<f32>(0x37800000u));
    let special = sign | select(vec4<u32>(0x7fc00000u), vec4<u32>(0x7f800000u), m == vec4<u32>(0u));
    return bitcast<vec4<f32>>(select(select(normal, sub, e == vec4<u32>(0u)), special, e == vec4<u32>(31u)));
}

// Four E2M1 nibbles: magnitudes c / 2 for codes c < 4, (2 + m) · 2^(e - 1) / 2 above.
fn codes_e2m1(v: vec4<u32>) -> vec4<f32> {
    let c = v & vec4<u32>(7u);
    let big = (vec4<u32>(2u) + (c & vec4<u32>(1u))) << (((c >> vec4<u32>(1u)) & vec4<u32>(1u)) + 1u);
    let mag = 0.5 * vec4<f32>(select(c, big, c >= vec4<u32>(4u)));
    return select(mag, -mag, (v & vec4<u32>(8u)) != vec4<u32>(0u));
}

// The values of four codes (8-bit codes or nibbles).
fn q_code(v: vec4<u32>) -> vec4<f32> {
    return {{CODE}}(v);
}

// A unit of 8-bit codes: 4 words.
fn unit_bytes(n: u32, rb: u32, u: u32) {
    let k0 = u * 16u;
    if (!({{UNIFORM}})) {
        slow(n, k0, 16u);
        return;
    }
    let s = q_s(n, k0);
    for (var t = 0u; t < 4u; t = t + 1u) {
        acc4(k0 + 4u * t, q_w(q_code(bytes4(ww(rb + k0 + 4u * t))), s));
    }
}

// A unit of nibbles: 2 words.
fn unit_nibs(n: u32, rb: u32, u: u32) {
    let k0 = u * 16u;
    if (!({{UNIFORM}})) {
        slow(n, k0, 16u);
        return;
    }
    let s = q_s(n, k0);
    let v0 = ww(rb + k0 / 2u);
    let v1 = ww(rb + k0 / 2u + 4u);
    for (var t = 0u; t < 4u; t = t + 1u) {
        acc4(k0 + 4u * t, q_w(q_code(nib4(v0, v1, t)), s));
    }
}
