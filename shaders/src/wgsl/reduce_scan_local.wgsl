// Cumsum pass 1: one workgroup per (row, block of WG logical positions): the block's inclusive
// scan into `loc` (row-major [rows, len] in A) and the block total into `bs` ([rows, nb]).

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= p.rows * p.nb) {
        return;
    }
    let r = wg / p.nb;
    let q = (wg % p.nb) * WG + lid;
    var v = A(0);
    if (q < p.len) {
        if (p.exclusive == 0u) {
            v = ld_x(addr(r, q));
        } else if (q > 0u) {
            v = ld_x(addr(r, q - 1u));
        }
    }
    let s = wg_scan(lid, v);
    if (q < p.len) {
        st_loc(r * p.len + q, s);
    }
    if (lid == WG - 1u) {
        st_bs(wg, s);
    }
}
