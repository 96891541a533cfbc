// Rope / RopeBackward on F32, four-wide: one invocation per four rotated pairs or four passed-through
// elements, every access a 16-byte vector (R/2 and D multiples of 4, windows 16-byte aligned).

@group(0) @binding(1) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> cos_t: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> sin_t: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;

struct RopePair {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

// NeoX: lane k of a (offset u) pairs with lane k of b (offset u + R/2), table lane k.
fn neox(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, sn: vec4<f32>) -> RopePair {
    return RopePair(a * c - b * sn, b * c + a * sn);
}

// GptJ: a holds pairs (4j', 4j'+1) in lanes xy and zw with table lanes x, y; b the next two pairs
// with table lanes z, w. `alt` flips the sine of the even lanes (an exact sign change).
fn gptj(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, sn: vec4<f32>) -> RopePair {
    let alt = vec4<f32>(-1.0, 1.0, -1.0, 1.0);
    return RopePair(a * c.xxyy + a.yxwz * (sn.xxyy * alt), b * c.zzww + b.yxwz * (sn.zzww * alt));
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.units) {
        return;
    }
    let q = rope_unit(t);
    if (q.j >= p.r) {
        let e = q.base + q.j + p.r;
        out[e] = x[e];
        return;
    }
    let c = cos_t[q.tab + q.j];
    let sn = sin_t[q.tab + q.j] * p.sign;
    let lo = q.base + q.j * p.step;
    let hi = lo + p.gap;
    let y = {{ROTATE}}(x[lo], x[hi], c, sn);
    out[lo] = y.lo;
    out[hi] = y.hi;
}
