// Strided copy of raw element bits: Transpose, Narrow, Concat (one dispatch per input), Expand,
// Reverse and Pad. Invocation e walks an index space of `rank` dims (collapsed by the lowering).
// With c_k its coordinate on axis k, it writes destination element dbase + sum(c_k * ds_k) with
// source element sbase + sum(q_k * ss_k), where q_k = c_k - lo_k when that lies in [0, sdim_k),
// else the pad rule of `mode` (0: the element is the constant `fill`, 1: reflect, 2: edge).
// Strides and bases are two's-complement u32: a negative stride (Reverse) wraps, and the wrapped
// sum is the in-range index. Values are never converted, so NaN payloads and Bool bytes survive.

struct MovementParams {
    n: u32,
    rank: u32,
    mode: u32,
    sbase: u32,
    dbase: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    fill: vec4<u32>,
    dims: array<vec4<u32>, 2>,
    lo: array<vec4<u32>, 2>,
    sdim: array<vec4<u32>, 2>,
    ss: array<vec4<u32>, 2>,
    ds: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: MovementParams;
{{TENSORS}}

const FILL_COORD: u32 = 0xffffffffu;

// The source coordinate of output coordinate c on an axis padded by lo before a source of sd
// elements, or FILL_COORD where the constant goes. Validation keeps reflect pads below sd and edge
// pads off empty axes, so every mapped coordinate is in range.
fn source_coord(c: u32, lo: u32, sd: u32) -> u32 {
    if (c >= lo && c - lo < sd) {
        return c - lo;
    }
    if (p.mode == 1u) {
        if (c < lo) {
            return lo - c;
        }
        return 2u * (sd - 1u) - (c - lo);
    }
    if (p.mode == 2u) {
        return select(sd - 1u, 0u, c < lo);
    }
    return FILL_COORD;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    var rem = e;
    var src = p.sbase;
    var dst = p.dbase;
    var fill = false;
    for (var k = i32(p.rank) - 1; k >= 0; k = k - 1) {
        let q = u32(k) >> 2u;
        let r = u32(k) & 3u;
        let d = p.dims[q][r];
        let c = rem % d;
        rem = rem / d;
        dst = dst + c * p.ds[q][r];
        let s = source_coord(c, p.lo[q][r], p.sdim[q][r]);
        fill = fill || s == FILL_COORD;
        src = src + s * p.ss[q][r];
    }
    if (fill) {
        st_out(dst, {{FILL}});
    } else {
        st_out(dst, ld_x(src));
    }
}
