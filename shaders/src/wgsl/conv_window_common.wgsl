// Sliding-window addressing shared by the Pool and Im2Col kernels (§2.9.3, §2.9.4). The lowering
// pads every problem to three spatial dims (leading dims of size 1, kernel 1, stride 1, no
// padding), so the kernels have fixed loops and no rank loop. Coordinates are u32 that wrap: a
// point in the leading padding wraps past in_dims and fails the `< in_dims` test, and the lowering
// keeps every padded extent below 2^31 so that no point of a window wraps back inside.

struct WindowParams {
    n: u32,
    count_include_pad: u32,
    pad0: u32,
    pad1: u32,
    in_dims: vec4<u32>,
    out_dims: vec4<u32>,
    kernel: vec4<u32>,
    stride: vec4<u32>,
    dilation: vec4<u32>,
    pads_begin: vec4<u32>,
    pads_end: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: WindowParams;

// The first point (wrapped) of output position o's window on each spatial axis.
fn window_start(o: vec3<u32>) -> vec3<u32> {
    return o * p.stride.xyz - p.pads_begin.xyz;
}

// Output position (od, oh, ow) and (n, c) plane of output element e of an [N·C, OD, OH, OW] grid.
fn out_position(e: u32) -> vec4<u32> {
    let ow = e % p.out_dims.z;
    let t = e / p.out_dims.z;
    let oh = t % p.out_dims.y;
    let u = t / p.out_dims.y;
    return vec4<u32>(u % p.out_dims.x, oh, ow, u / p.out_dims.x);
}
