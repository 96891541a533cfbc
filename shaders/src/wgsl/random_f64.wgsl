// f64 value helpers of RngUniform / RngNormal for F64 outputs (§1.9, §2.12), with the f64 maths
// of math64.wgsl (GLSL.std.450 has no f64 log/sin/cos). Uniforms still carry 24 random bits.

fn attr_f64(v: vec2<u32>) -> f64 {
    return bitcast<f64>((u64(v.y) << 32u) | u64(v.x));
}

// `opaque_zero`: as in uniform_f32, keeps the multiply and add from being fused into one fma.
fn uniform_f64(w: u32, low: f64, high: f64, opaque_zero: u32) -> f64 {
    let u = f64(w >> 8u) * 5.9604644775390625e-8lf;
    let scaled = bitcast<f64>(bitcast<u64>((high - low) * u) | u64(opaque_zero));
    return low + scaled;
}

fn box_muller_f64(pair: vec2<u32>, odd: bool) -> f64 {
    let u1 = f64((pair.x >> 8u) + 1u) * 5.9604644775390625e-8lf;
    let u2 = f64(pair.y >> 8u) * 5.9604644775390625e-8lf;
    let r = sqrt_f64(-2.0lf * log_f64(u1));
    let theta = 6.283185307179586lf * u2;
    return r * select(cos_f64(theta), sin_f64(theta), odd);
}

fn normal_f64(w: vec4<u32>, j: u32, mean: f64, sd: f64) -> f64 {
    let pair = select(w.xy, w.zw, j >= 2u);
    return mean + sd * box_muller_f64(pair, (j & 1u) == 1u);
}
