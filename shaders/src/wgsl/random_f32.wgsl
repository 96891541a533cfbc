// f32 value helpers of RngUniform / RngNormal for F32, F16 and BF16 outputs (§1.9, §2.12): every
// operation rounded to f32 as the reference does (bounds converted to f32 first).

// low + (high − low) · uniform, three separate f32 operations. `opaque_zero` is 0 at run time but
// unknown to the driver: OR-ing the product with it stops the driver from contracting the multiply
// and add into one fma (NVIDIA does), which would change the last bit against the reference.
fn uniform_f32(w: u32, low: f32, high: f32, opaque_zero: u32) -> f32 {
    let span = high - low;
    let scaled = bitcast<f32>(bitcast<u32>(span * rng_unit_f32(w)) | opaque_zero);
    return low + scaled;
}

// Box–Muller from the word pair (w0, w1): r·cos θ (even element) or r·sin θ (odd element).
fn box_muller_f32(pair: vec2<u32>, odd: bool) -> f32 {
    let u1 = f32((pair.x >> 8u) + 1u) * RNG_STEP;
    let u2 = f32(pair.y >> 8u) * RNG_STEP;
    let r = sqrt_f32(-2.0 * log_f32(u1));
    let theta = 6.283185307179586 * u2;
    return r * select(cos_f32(theta), sin_f32(theta), odd);
}

// mean + std · z(e) for element j of block w.
fn normal_f32(w: vec4<u32>, j: u32, mean: f32, sd: f32) -> f32 {
    let pair = select(w.xy, w.zw, j >= 2u);
    return mean + sd * box_muller_f32(pair, (j & 1u) == 1u);
}
