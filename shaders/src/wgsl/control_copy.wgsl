// Control family: copies `n` words from word `src` of one range to word `dst` of another. A
// repeated body (a Scan's step) moves its slice in and out with it: the offsets are params, one
// block per iteration, so every iteration binds the same ranges.

struct ControlCopyParams {
    n: u32,
    src: u32,
    dst: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: ControlCopyParams;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e < p.n) {
        dst[p.dst + e] = src[p.src + e];
    }
}
