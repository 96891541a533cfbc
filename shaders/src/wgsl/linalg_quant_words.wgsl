// Word-level helpers of the quantised kernels that read whole words of the weight input `w`
// (`linalg_quant_vec.wgsl`, `linalg_quant_gemm*.wgsl`) and of their item decoders
// (`linalg_quant_vec_ggml.wgsl`, `linalg_quant_vec_scale.wgsl`): unaligned words, f16 fields,
// and integer codes turned into exact f32 values.

// The u32 at byte o of w, any alignment: a funnel shift of the two words it straddles, without
// a branch (the second shift is split so that neither reaches 32).
fn ww(o: u32) -> u32 {
    let i = o >> 2u;
    let sh = (o & 3u) * 8u;
    return (w[i] >> sh) | ((w[i + 1u] << 1u) << (31u - sh));
}

// The f16 at an even byte o of w, converted exactly.
fn wh(o: u32) -> f32 {
    return h2f(w[o >> 2u] >> ((o & 2u) * 8u));
}

// Integers below 2^23 as exact f32: the bits of 2^23 + v, minus 2^23.
fn f4(v: vec4<u32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(v | vec4<u32>(0x4b000000u)) - 8388608.0;
}

// v - off, exactly (v < 2^23, off a small integer).
fn f4_off(v: vec4<u32>, off: f32) -> vec4<f32> {
    return bitcast<vec4<f32>>(v | vec4<u32>(0x4b000000u)) - (8388608.0 + off);
}

// The low 16 bits of h as an IEEE binary16, converted exactly without branches.
fn h2f(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    let normal = sign | ((e + 112u) << 23u) | (m << 13u);
    let sub = sign | bitcast<u32>((bitcast<f32>(m | 0x4b000000u) - 8388608.0) * bitcast<f32>(0x33800000u));
    let special = sign | 0x7f800000u | (m << 13u);
    return bitcast<f32>(select(select(normal, sub, e == 0u), special, e == 0x1fu));
}

// The four bytes of word v, as a vector (byte 0 first).
fn bytes4(v: u32) -> vec4<u32> {
    return (vec4<u32>(v) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u);
}

// The four bytes of word v read as I8, as f32 (the byte plus 128, minus 128).
fn sbytes4(v: u32) -> vec4<f32> {
    return f4_off(bytes4(v ^ 0x80808080u), 128.0);
}
