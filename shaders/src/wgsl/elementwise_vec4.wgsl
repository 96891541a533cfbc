// Contiguous elementwise map, four elements per invocation: out4[v] = BODY(x0 4-vector v, ...) for
// 4-byte dtypes whose windows start 16-byte aligned (one 128-bit load per operand and one store,
// a quarter of the invocations of the scalar form). Broadcast scalars are read once. The last
// n mod 4 elements are left to the scalar flat kernel (`elementwise.wgsl` with `base`).

struct ElementwiseParams {
    n: u32,
    rank: u32,
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
    let v = linear_id(gid, nwg);
    if (v >= p.n / 4u) {
        return;
    }
    {{BODY}}
}
