// LayerNorm of one row per workgroup, single pass: the row shifted by its first element x0 (K
// elements per invocation, element lid + k WG in register v<k>, straight-line code generated per
// k) is read once from memory, then the same pivot-shifted two-moment computation as
// norm_layer.wgsl runs on the registers: m = sum(x - x0) / H, var = sum((x - x0 - m)^2) / H,
// y = (x - x0 - m) * inv * gamma + beta.

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
    let h = F(p.len);
    let x0 = ld_x(base);
    var s = F(0);
    {{LOAD}}
    let m = row_sum(ids, lid, s) / h;
    var q = F(0);
    {{SUM}}
    let den = sqrt(row_sum(ids, lid, q) / h + F(p.eps));
    let inv = select(F(1) / den, finf(), den == F(0));
    {{STORE}}
}
