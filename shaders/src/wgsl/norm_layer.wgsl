// LayerNorm of one row (H = len trailing elements) per workgroup, two passes:
// mu = sum(x) / H, var = sum((x - mu)^2) / H (never E[x^2] - mu^2), then
// y = (x - mu) * inv * gamma[t] + beta[t] with inv = 1 / sqrt(var + eps) (+inf when that is 0, so
// eps = 0 on a constant row gives 0 * inf = NaN, as the spec's 0/0).

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    let h = F(p.len);
    var s = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        s = s + ld_x(base + i);
    }
    let mu = wg_sum(lid, s) / h;
    var q = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        let d = ld_x(base + i) - mu;
        q = q + d * d;
    }
    let den = sqrt(wg_sum(lid, q) / h + F(p.eps));
    let inv = select(F(1) / den, finf(), den == F(0));
    for (var i = lid; i < p.len; i = i + WG) {
        st_out(base + i, (ld_x(base + i) - mu) * inv * ld_g(i) + {{BETA}});
    }
}
