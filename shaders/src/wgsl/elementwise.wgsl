// Broadcasting elementwise map: out[e] = BODY(x0[i0], x1[i1], x2[i2]) where i_k is the output
// index e mapped into input k through its broadcast strides (0 on stretched axes). The lowering
// collapses mergeable axes first; when one axis is left, INDEX is the flat form (i_k = e * s_k),
// otherwise the per-axis decomposition loop. Invocation t maps element base + t: `base` is 0 except
// for the tail a four-wide kernel (`elementwise_vec4.wgsl`) leaves.

struct ElementwiseParams {
    n: u32,
    rank: u32,
    // Always 0, but the driver cannot know it: C64 Mul/Div OR intermediates with it so that Mesa's
    // algebraic rewrites cannot fold their error-compensation terms away (docs/LAVAPIPE.md).
    pad0: u32,
    base: u32,
    dims: array<vec4<u32>, 2>,
    s0: array<vec4<u32>, 2>,
    s1: array<vec4<u32>, 2>,
    s2: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: ElementwiseParams;
{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.n - p.base) {
        return;
    }
    let e = p.base + t;
    {{INDEX}}
    {{BODY}}
}
