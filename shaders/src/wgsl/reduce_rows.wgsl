// Reduce, one workgroup per (row, chunk): each invocation folds a strided slice of the chunk
// serially (a few elements), then the workgroup combines the 256 partials as a binary tree, so a
// long float sum is (almost) pairwise. With several chunks per row the results are partials in
// the accumulator type, combined by a second pass of this kernel.

var<workgroup> wacc: array<ACC, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // 2-D workgroup grid: more than 65535 rows x chunks are laid out over y.
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows * p.chunks) {
        return;
    }
    let row = w / p.chunks;
    let start = (w % p.chunks) * p.chunk_len;
    let end = min(start + p.chunk_len, p.red);
    let base = kept_offset(row);
    var acc = identity();
    for (var e = start + lid; e < end; e = e + WG) {
        acc = combine(acc, ld_x(base + red_offset(e)));
    }
    wacc[lid] = acc;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s) {
            wacc[lid] = combine(wacc[lid], wacc[lid + s]);
        }
    }
    if (lid == 0u) {
        st_out(w, finish(wacc[0]));
    }
}
