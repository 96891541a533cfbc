// Cumsum of short rows: one invocation per row scans it serially (in A) and stores directly.

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = linear_id(gid, nwg);
    if (r >= p.rows) {
        return;
    }
    var s = A(0);
    for (var q = 0u; q < p.len; q = q + 1u) {
        let e = addr(r, q);
        let v = ld_x(e);
        if (p.exclusive != 0u) {
            st_out(e, s);
            s = s + v;
        } else {
            s = s + v;
            st_out(e, s);
        }
    }
}
