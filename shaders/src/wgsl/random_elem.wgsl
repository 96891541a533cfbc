// RngBits, RngUniform, RngNormal (§2.12.1–2.12.3): one invocation per Philox block b, writing
// elements 4b .. 4b+3 (those below n). The key is read from the key tensor at run time, so a
// new key needs no recompilation. Stream position of element e is base + e (64-bit).

struct RandomElemParams {
    n: u32,
    nblocks: u32,
    seed_lo: u32,
    seed_hi: u32,
    // 64-bit block index of this dispatch's block 0
    base_lo: u32,
    base_hi: u32,
    // always 0, unknown to the driver (see uniform_f32)
    opaque_zero: u32,
    pad1: u32,
    // first and second float attribute: f32 bits in .x, or f64 bits (lo, hi)
    a: vec2<u32>,
    b: vec2<u32>,
}

@group(0) @binding(0) var<uniform> p: RandomElemParams;
{{TENSORS}}

fn attr_f32(v: vec2<u32>) -> f32 {
    return bitcast<f32>(v.x);
}

// Element j (0..3) of block w: {{WHAT}}.
fn rng_value(w: vec4<u32>, j: u32) -> {{R}} {
    return {{VALUE}};
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_id(gid, nwg);
    if (b >= p.nblocks) {
        return;
    }
    let key = vec2<u32>(ld_key(0u), ld_key(1u));
    let w = rng_block(key, vec2<u32>(p.seed_lo, p.seed_hi), rng_add64(vec2<u32>(p.base_lo, p.base_hi), b));
    for (var j = 0u; j < 4u; j = j + 1u) {
        let e = 4u * b + j;
        if (e < p.n) {
            st_out(e, rng_value(w, j));
        }
    }
}
