// LayerNorm of one row per workgroup, single pass: the row shifted by its first element x0 (at
// most K elements per invocation, element lid + k WG in slot k) is read once into registers, then
// the same pivot-shifted two-moment computation as norm_layer.wgsl runs on the registers:
// m = sum(x - x0) / H, var = sum((x - x0 - m)^2) / H, y = (x - x0 - m) * inv * gamma + beta.

const K: u32 = {{K}}u;

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
    var v: array<F, K>;
    var s = F(0);
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            v[k] = ld_x(base + i) - x0;
            s = s + v[k];
        }
    }
    let m = row_sum(ids, lid, s) / h;
    var q = F(0);
    for (var k = 0u; k < K; k = k + 1u) {
        if (lid + k * WG < p.len) {
            let d = v[k] - m;
            q = q + d * d;
        }
    }
    let den = sqrt(row_sum(ids, lid, q) / h + F(p.eps));
    let inv = select(F(1) / den, finf(), den == F(0));
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            st_out(base + i, (v[k] - m) * inv * ld_g(i) + {{BETA}});
        }
    }
}
