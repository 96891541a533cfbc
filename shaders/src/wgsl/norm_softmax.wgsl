// Softmax / LogSoftmax of one row per workgroup: m = max (NaN-propagating), s = sum e^(x - m),
// then every element from d = x - m and the per-row value c: Softmax e^d / s, LogSoftmax d - ln s
// (the direct formula, never a log of the softmax). A row whose max is NaN or +-inf, or whose
// sum is NaN, is NaN throughout (all -inf: -inf - -inf; +inf: inf - inf), written explicitly so
// the result does not depend on how the driver treats inf - inf.

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var m = -finf();
    for (var i = lid; i < p.len; i = i + WG) {
        m = fmax(m, ld_x(base + i * p.inner));
    }
    m = wg_max(lid, m);
    var s = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        s = s + fexp(ld_x(base + i * p.inner) - m);
    }
    s = wg_sum(lid, s);
    let bad = fisnan(m) || fisinf(m) || fisnan(s);
    let c = {{ROW}};
    for (var i = lid; i < p.len; i = i + WG) {
        let e = base + i * p.inner;
        let d = ld_x(e) - m;
        st_out(e, select({{OUT}}, fnan(), bad));
    }
}
