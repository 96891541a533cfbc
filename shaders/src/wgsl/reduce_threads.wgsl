// Reduce, one invocation per output row: for short rows only (a serial fold of at most a few
// dozen elements), where a workgroup per row would leave most invocations idle. Adjacent
// invocations read adjacent kept positions, so strided (non-trailing) reductions stay coalesced.
// Also handles empty rows (red = 0): every output is the identity (NaN for Mean).

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let row = linear_id(gid, nwg);
    if (row >= p.rows) {
        return;
    }
    let base = kept_offset(row);
    var acc = identity();
    for (var e = 0u; e < p.red; e = e + 1u) {
        acc = combine(acc, ld_x(base + red_offset(e)));
    }
    st_out(row, finish(acc));
}
