// RmsNorm of one row per workgroup, single pass: the row (at most K elements per invocation,
// element lid + k WG in slot k) is read once into registers; then as norm_rms.wgsl,
// rho = 1 / sqrt(sum(x^2) / H + eps) (+inf when that is 0) and y = x * rho * gamma + beta.

const K: u32 = {{K}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: RowIds) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var v: array<F, K>;
    var s = F(0);
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            v[k] = ld_x(base + i);
            s = s + v[k] * v[k];
        }
    }
    let den = sqrt(row_sum(ids, lid, s) / F(p.len) + F(p.eps));
    let rho = select(F(1) / den, finf(), den == F(0));
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            st_out(base + i, v[k] * rho * ld_g(i) + {{BETA}});
        }
    }
}
