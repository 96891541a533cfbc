// Zeroes n words of a tensor range; runs before kernels that OR packed values into place.

struct ZeroParams {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: ZeroParams;
@group(0) @binding(1) var<storage, read_write> buf: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e < p.n) {
        buf[e] = 0u;
    }
}
