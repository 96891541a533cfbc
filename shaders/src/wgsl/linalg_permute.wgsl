// Strided copy used by DotGeneral to bring an operand into [batch, rows, cols] order:
// out[e] = x[Σ_d c_d · s_d], where (c_d) is the multi-index of e over the contiguous output dims
// and s_d the input stride of the axis placed at output position d.

struct DotPermuteParams {
    n: u32,
    rank: u32,
    pad0: u32,
    pad1: u32,
    dims: array<vec4<u32>, 2>,
    strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: DotPermuteParams;
{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    var rem = e;
    var i = 0u;
    for (var d = i32(p.rank) - 1; d >= 0; d = d - 1) {
        let q = u32(d) >> 2u;
        let r = u32(d) & 3u;
        let dim = p.dims[q][r];
        i = i + (rem % dim) * p.strides[q][r];
        rem = rem / dim;
    }
    st_out(e, ld_x(i));
}
