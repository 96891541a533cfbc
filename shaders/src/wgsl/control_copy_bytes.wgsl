// Control family: copies `n` bytes from byte `src` of one range to byte `dst` of another, for
// offsets or lengths that are not whole words (a Scan step of a 1- or 2-byte dtype). One
// invocation owns one destination word and keeps the bytes of it outside the copied range, so
// rows of a stacked output written by different iterations never clobber each other.

struct ControlCopyBytesParams {
    n: u32,
    src: u32,
    dst: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: ControlCopyBytesParams;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

// Byte `b` of the source range's buffer.
fn src_byte(b: u32) -> u32 {
    return (src[b >> 2u] >> ((b & 3u) * 8u)) & 0xffu;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let first = p.dst >> 2u;
    let words = ((p.dst + p.n + 3u) >> 2u) - first;
    let e = linear_id(gid, nwg);
    if (e >= words) {
        return;
    }
    let w = first + e;
    var v = dst[w];
    for (var k = 0u; k < 4u; k = k + 1u) {
        let b = 4u * w + k;
        if (b >= p.dst && b < p.dst + p.n) {
            let shift = k * 8u;
            v = (v & ~(0xffu << shift)) | (src_byte(p.src + (b - p.dst)) << shift);
        }
    }
    dst[w] = v;
}
