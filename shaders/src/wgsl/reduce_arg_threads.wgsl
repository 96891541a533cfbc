// ArgMax / ArgMin of short rows: one invocation per row folds the row serially.

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = linear_id(gid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = (w / p.inner) * p.len * p.inner + w % p.inner;
    var bv = R(0);
    var bi = NONE;
    for (var i = 0u; i < p.len; i = i + 1u) {
        let v = ld_x(base + i * p.inner);
        if (beats(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    st_out(w, {{IDX}}(bi));
}
