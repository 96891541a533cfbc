// RmsNorm of one row (H = len trailing elements) per workgroup: rho = 1 / sqrt(sum(x^2) / H + eps)
// (+inf when that is 0, so an all-zero row with eps = 0 gives 0 * inf = NaN), then
// y = x * rho * gamma[t] + beta[t]. The first pass reads through ld_x1 (the fused residual norms
// write their sum there).

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var s = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        let v = ld_x1(base + i);
        s = s + v * v;
    }
    let den = sqrt(wg_sum(lid, s) / F(p.len) + F(p.eps));
    let rho = select(F(1) / den, finf(), den == F(0));
    for (var i = lid; i < p.len; i = i + WG) {
        st_out(base + i, ld_x(base + i) * rho * ld_g(i) + {{BETA}});
    }
}
