// Broadcasting elementwise map: out[e] = BODY(x0[i0], x1[i1], x2[i2]) where i_k is the output
// index e mapped into input k through its broadcast strides (0 on stretched axes). The lowering
// collapses mergeable axes first, so the common same-shape case runs with rank 1.

struct Params {
    n: u32,
    rank: u32,
    // Always 0, but the driver cannot know it: C64 Mul/Div OR intermediates with it so that Mesa's
    // algebraic rewrites cannot fold their error-compensation terms away (docs/LAVAPIPE.md).
    pad0: u32,
    pad1: u32,
    dims: array<vec4<u32>, 2>,
    s0: array<vec4<u32>, 2>,
    s1: array<vec4<u32>, 2>,
    s2: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    var rem = e;
    var i0 = 0u;
    var i1 = 0u;
    var i2 = 0u;
    for (var k = i32(p.rank) - 1; k >= 0; k = k - 1) {
        let q = u32(k) >> 2u;
        let r = u32(k) & 3u;
        let d = p.dims[q][r];
        let c = rem % d;
        rem = rem / d;
        i0 = i0 + c * p.s0[q][r];
        i1 = i1 + c * p.s1[q][r];
        i2 = i2 + c * p.s2[q][r];
    }
    {{BODY}}
}
