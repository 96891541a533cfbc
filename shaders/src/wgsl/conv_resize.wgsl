// ResizeNearest (§2.9.5): one invocation per element of the [N·C, OD, OH, OW] output (spatial dims
// padded to three with factor 1), copying raw element bits from x[nc, o div scales].

struct ResizeParams {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    in_dims: vec4<u32>,
    out_dims: vec4<u32>,
    scales: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: ResizeParams;
{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    let ow = e % p.out_dims.z;
    let t = e / p.out_dims.z;
    let oh = t % p.out_dims.y;
    let u = t / p.out_dims.y;
    let od = u % p.out_dims.x;
    let nc = u / p.out_dims.x;
    let i = vec3<u32>(od, oh, ow) / p.scales.xyz;
    st_out(e, ld_x(nc * p.in_dims.w + (i.x * p.in_dims.y + i.y) * p.in_dims.z + i.z));
}
