// Contiguous elementwise map, four-wide: out4[v] = BODY(x0 4-vector v, ...) for 4-byte dtypes whose
// windows start 16-byte aligned (one 128-bit load per operand and one store per vector).
// Broadcast scalars are read once. The last n mod 4 elements are left to the scalar flat kernel
// (`elementwise.wgsl` with `base`).
//
// Each workgroup maps UNROLL * WG consecutive vectors, invocation lid the vectors
// g UNROLL WG + lid + j WG for j < UNROLL (coalesced per j): UNROLL loads per operand are in flight
// per invocation before the first store. A workgroup whose vectors are all in range takes the
// unguarded straight-line form; the last one guards each vector.
//
// Trusted (when `shaders::elementwise::trusted_map` allows the expression): every vector index is
// compared with q = n / 4 before it is used, and a contiguous operand's window holds n elements of
// 4 bytes (the lowering binds windows of exactly the operand's bytes, n = the output's element
// count, n < 2^32), so its array has floor(n / 4) = q vectors; a broadcast scalar is read at element
// 0 of a window of one element (n > 0 is a lowering precondition). Index arithmetic cannot wrap:
// q < 2^30, and g < the dispatched workgroup count, which the grid of `Grid::Threads` keeps below
// twice ceil(q / (UNROLL WG)) (x y < wg + x with x <= wg), so g UNROLL WG + UNROLL WG < 2^32.
// No loops, no arrays (the expression's helpers: see `trusted_map`).

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
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let q = p.n / 4u;
    let first = (wid.x + wid.y * nwg.x) * ({{UNROLL}}u * WG) + lid;
    if (first + ({{UNROLL}}u - 1u) * WG < q) {
        {{FULL}}
    } else {
        {{TAIL}}
    }
}
