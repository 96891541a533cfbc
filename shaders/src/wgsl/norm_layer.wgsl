// LayerNorm of one row (H = len trailing elements) per workgroup, two passes on data shifted by
// the row's first element x0: m = sum(x - x0) / H, var = sum((x - x0 - m)^2) / H (never
// E[x^2] - mu^2), then y = (x - x0 - m) * inv * gamma[t] + beta[t] with inv = 1 / sqrt(var + eps)
// (+inf when that is 0, so eps = 0 on a constant row gives 0 * inf = NaN, as the spec's 0/0).
// The shift keeps nearly equal values accurate: x - x0 is exact when x is within a factor 2 of
// x0, so a row [a, a + d] normalises to exactly [-1, 1] instead of carrying mu's rounding error,
// which is then large relative to d.
// The first pass reads through ld_x1 (the fused residual norms write their sum there).

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    let h = F(p.len);
    let x0 = ld_x(base);
    var s = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        s = s + (ld_x1(base + i) - x0);
    }
    let m = wg_sum(lid, s) / h;
    var q = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        let d = (ld_x(base + i) - x0) - m;
        q = q + d * d;
    }
    let den = sqrt(wg_sum(lid, q) / h + F(p.eps));
    let inv = select(F(1) / den, finf(), den == F(0));
    for (var i = lid; i < p.len; i = i + WG) {
        st_out(base + i, ((ld_x(base + i) - x0) - m) * inv * ld_g(i) + {{BETA}});
    }
}
