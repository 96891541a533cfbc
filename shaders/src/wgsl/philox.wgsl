// Philox4x32-10 (SPEC-ops §1.9) with 32-bit integer operations only, and the stream helpers every
// random kernel shares: 64-bit block indices as (lo, hi) pairs and the 24-bit uniform.

const PHILOX_M0: u32 = 0xD2511F53u;
const PHILOX_M1: u32 = 0xCD9E8D57u;
const PHILOX_W0: u32 = 0x9E3779B9u;
const PHILOX_W1: u32 = 0xBB67AE85u;

// 2^-24: one step of a 24-bit uniform (exact in every float type).
const RNG_STEP: f32 = 5.9604644775390625e-8;

// (hi, lo) of the 64-bit product a·b from 16-bit halves (WGSL has no 64-bit integers without
// SHADER_INT64, and no mulhi built-in).
fn philox_mulhilo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    // bits 16..47 of the product before the carry: at most 3·(2^16 − 1) + 2^16, no overflow
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

// Ten rounds; the key is bumped before rounds 2..10.
fn philox4x32_10(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = key;
    for (var r = 0u; r < 10u; r = r + 1u) {
        if (r > 0u) {
            k = k + vec2<u32>(PHILOX_W0, PHILOX_W1);
        }
        let m0 = philox_mulhilo(PHILOX_M0, c.x);
        let m1 = philox_mulhilo(PHILOX_M1, c.z);
        c = vec4<u32>(m1.x ^ c.y ^ k.x, m1.y, m0.x ^ c.w ^ k.y, m0.y);
    }
    return c;
}

// (lo, hi) + x as a 64-bit sum (block indices past 2^32 carry into hi).
fn rng_add64(a: vec2<u32>, x: u32) -> vec2<u32> {
    let lo = a.x + x;
    return vec2<u32>(lo, a.y + select(0u, 1u, lo < x));
}

// Words 4b .. 4b+3 of the stream of (key, seed) for the 64-bit block index b = (lo, hi).
fn rng_block(key: vec2<u32>, seed: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    return philox4x32_10(vec4<u32>(b.x, b.y, seed.x, seed.y), key);
}

// Word j (0..3) of a block.
fn rng_word(w: vec4<u32>, j: u32) -> u32 {
    return select(select(w.x, w.y, j == 1u), select(w.z, w.w, j == 3u), j >= 2u);
}

// (word >> 8) · 2^-24 in [0, 1), exact.
fn rng_unit_f32(w: u32) -> f32 {
    return f32(w >> 8u) * RNG_STEP;
}
