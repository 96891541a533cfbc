// Items of the scale-tensor formats for `linalg_quant_vec.wgsl`: unit u of a row is its elements
// 8u .. 8u + 7 (one item, XG = 2 groups of 4): `item_bytes` reads them as 2 words of 8-bit codes,
// `item_nibs` as 1 word of nibbles (low nibble first), from the row starting at byte rb of w.
// Codes are decoded from their bits four at a time, exactly as the scalar decoders of
// `linalg_quant_decode.wgsl` do; `q_s(n, k)` (and `q_z` for a zero point) gives the scales of
// elements k .. k + 3 of row n: one load where the lowering knows that the four share a scale
// block (block size a multiple of 4, FP8, Nvfp4), else one per element. Where all 8 elements of
// an item share one block (SAME8: block size a multiple of 8, FP8, Nvfp4) they are read once.

const SAME8: bool = {{SAME8}};

// The scales, and the zero points, of elements k .. k + 3 of row n.
fn q_s(n: u32, k: u32) -> vec4<f32> {
    return {{SCALE}};
}

fn q_z(n: u32, k: u32) -> vec4<f32> {
    return {{ZERO}};
}

// The weights of four elements from their code values q, scales s and zero points z.
fn q_w(q: vec4<f32>, s: vec4<f32>, z: vec4<f32>) -> vec4<f32> {
    return {{WEIGHT}};
}

// The scales and zero points of elements k .. k + 3 (.0, .1) and k + 4 .. k + 7 (.2, .3).
fn q_sz(n: u32, k: u32) -> array<vec4<f32>, 4> {
    let s0 = q_s(n, k);
    let z0 = q_z(n, k);
    if (SAME8) {
        return array<vec4<f32>, 4>(s0, z0, s0, z0);
    }
    return array<vec4<f32>, 4>(s0, z0, q_s(n, k + 4u), q_z(n, k + 4u));
}

// The values of four codes (8-bit codes or nibbles).
fn q_code(v: vec4<u32>) -> vec4<f32> {
    return {{CODE}}(v);
}

// Four bytes as I8 (the byte plus 128, minus 128) or U8 values.
fn codes_i8(v: vec4<u32>) -> vec4<f32> {
    return f4_off(v ^ vec4<u32>(0x80u), 128.0);
}

fn codes_u8(v: vec4<u32>) -> vec4<f32> {
    return f4(v);
}

// Four nibbles as 4-bit two's-complement values (the nibble plus 8, minus 8).
fn codes_i4(v: vec4<u32>) -> vec4<f32> {
    return f4_off(v ^ vec4<u32>(8u), 8.0);
}

// Four E4M3FN bytes (NaN for S.1111.111, subnormals m · 2^-9).
fn codes_e4m3(v: vec4<u32>) -> vec4<f32> {
    let sign = (v & vec4<u32>(0x80u)) << vec4<u32>(24u);
    let e = (v >> vec4<u32>(3u)) & vec4<u32>(15u);
    let m = v & vec4<u32>(7u);
    let normal = sign | ((e + 120u) << vec4<u32>(23u)) | (m << vec4<u32>(20u));
    let sub = sign | bitcast<vec4<u32>>(f4(m) * bitcast<f32>(0x3b000000u));
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
    let sub = sign | bitcast<vec4<u32>>(f4(m) * bitcast<f32>(0x37800000u));
    let special = sign | select(vec4<u32>(0x7fc00000u), vec4<u32>(0x7f800000u), m == vec4<u32>(0u));
    return bitcast<vec4<f32>>(select(select(normal, sub, e == vec4<u32>(0u)), special, e == vec4<u32>(31u)));
}

// Four E2M1 nibbles: magnitudes c / 2 for codes c < 4, (2 + m) · 2^(e - 1) / 2 above.
fn codes_e2m1(v: vec4<u32>) -> vec4<f32> {
    let c = v & vec4<u32>(7u);
    let big = (vec4<u32>(2u) + (c & vec4<u32>(1u))) << (((c >> vec4<u32>(1u)) & vec4<u32>(1u)) + 1u);
    let mag = 0.5 * f4(select(c, big, c >= vec4<u32>(4u)));
    return select(mag, -mag, (v & vec4<u32>(8u)) != vec4<u32>(0u));
}

// Nibbles s / 4 .. s / 4 + 3 of word v (s = 0 or 16).
fn nib4(v: u32, s: u32) -> vec4<u32> {
    return (vec4<u32>(v >> s) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u);
}

fn k_scale8(u: u32, i: u32, j: u32) -> u32 {
    return 8u * u + 4u * j;
}

fn item_bytes(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let k = 8u * u;
    let sz = q_sz(n, k);
    let a = q_w(q_code(bytes4(ww(rb + k))), sz[0], sz[1]);
    let b = q_w(q_code(bytes4(ww(rb + k + 4u))), sz[2], sz[3]);
    return array<vec4<f32>, 2>(a, b);
}

fn item_nibs(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let k = 8u * u;
    let sz = q_sz(n, k);
    let v = ww(rb + k / 2u);
    return array<vec4<f32>, 2>(q_w(q_code(nib4(v, 0u)), sz[0], sz[1]), q_w(q_code(nib4(v, 16u)), sz[2], sz[3]));
}
