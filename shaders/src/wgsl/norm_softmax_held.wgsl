// Softmax / LogSoftmax of one row per workgroup, single pass: the row (at most K elements per
// invocation, element lid + k WG in slot k) is read once from memory into registers, and the max,
// the sum and the outputs are computed from there. Same formulas and special values as
// norm_softmax.wgsl (m NaN-propagating, a row with a NaN or infinite max or a NaN sum is NaN).

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
    var m = -finf();
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            v[k] = ld_x(base + i * p.inner);
            m = fmax(m, v[k]);
        }
    }
    m = row_max(ids, lid, m);
    var s = F(0);
    for (var k = 0u; k < K; k = k + 1u) {
        if (lid + k * WG < p.len) {
            s = s + fexp(v[k] - m);
        }
    }
    s = row_sum(ids, lid, s);
    let bad = fisnan(m) || fisinf(m) || fisnan(s);
    let c = {{ROW}};
    for (var k = 0u; k < K; k = k + 1u) {
        let i = lid + k * WG;
        if (i < p.len) {
            let d = v[k] - m;
            st_out(base + i * p.inner, select({{OUT}}, fnan(), bad));
        }
    }
}
