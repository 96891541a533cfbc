// RmsNorm of one row per workgroup, single pass: the row (K elements per invocation, element
// lid + k WG in register v<k>, straight-line code generated per k) is read once from memory; then
// as norm_rms.wgsl, rho = 1 / sqrt(sum(x^2) / H + eps) (+inf when that is 0) and
// y = x * rho * gamma + beta.

fn row_beta(i: u32) -> F {
    return {{BETA}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: RowIds) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var s = F(0);
    {{LOAD}}
    let den = sqrt(row_sum(ids, lid, s) / F(p.len) + F(p.eps));
    let rho = select(F(1) / den, finf(), den == F(0));
    {{STORE}}
}
