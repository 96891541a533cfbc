// GroupNorm, one workgroup per (n, g) group, single pass: the group (len <= K WG elements, element
// lid + k WG in register v<k>, straight-line code generated per k) is read once, shifted by its
// first element x0 (x - x0 is exact for x within a factor 2 of x0, so nearly constant groups keep
// their spread), then m = sum(x - x0) / len, var = sum((x - x0 - m)^2) / len on the registers
// (two passes, never E[x^2] - mu^2), y = (x - x0 - m) * inv * gamma[c] + beta[c].

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows) {
        return;
    }
    let base = w * p.len;
    // first channel of the group
    let c0 = (w % p.groups) * (p.len / p.spatial);
    let h = F(p.len);
    let x0 = ld_x(base);
    var s = F(0);
    {{LOAD}}
    let m = wg_sum2(lid, s) / h;
    var q = F(0);
    {{SUM}}
    let inv = inv_std(wg_sum2(lid, q) / h + F(p.eps));
    {{STORE}}
}
