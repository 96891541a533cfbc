// ArgMax / ArgMin of one row per workgroup: every invocation folds its strided elements into a
// (value, index) candidate, then a workgroup tree reduction keeps the winner.

var<workgroup> wv: array<R, 256>;
var<workgroup> wi: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows) {
        return;
    }
    let base = (w / p.inner) * p.len * p.inner + w % p.inner;
    var bv = R(0);
    var bi = NONE;
    for (var i = lid; i < p.len; i = i + WG) {
        let v = ld_x(base + i * p.inner);
        if (beats(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    wv[lid] = bv;
    wi[lid] = bi;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s && beats(wv[lid + s], wi[lid + s], wv[lid], wi[lid])) {
            wv[lid] = wv[lid + s];
            wi[lid] = wi[lid + s];
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        st_out(w, {{IDX}}(wi[0]));
    }
}
