// SoftmaxCrossEntropy (§2.7.3): one workgroup per slice (norm_common.wgsl's rows):
// loss = m + ln Σ e^(x - m) - Σ_{t != 0} t·x, with tree sums. A slice whose max is NaN or ±inf
// is NaN (all -inf: -inf - -inf; +inf: inf - inf), written explicitly. So is a slice with a NaN
// target: `t != 0` may compile to an ordered comparison, false for NaN, which would skip the term
// (NaN treated as 0), so NaN targets are tested by their bits and counted.

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
    var dot = F(0);
    var nan_t = F(0);
    for (var i = lid; i < p.len; i = i + WG) {
        let e = base + i * p.inner;
        let x = ld_x(e);
        s = s + fexp(x - m);
        let t = ld_t(e);
        if (fisnan(t)) {
            nan_t = F(1);
        } else if (t != F(0)) {
            dot = dot + t * x;
        }
    }
    s = wg_sum(lid, s);
    dot = wg_sum(lid, dot);
    nan_t = wg_max(lid, nan_t);
    if (lid == 0u) {
        let bad = fisnan(m) || fisinf(m) || nan_t > F(0);
        st_out(w, select(m + flog(s) - dot, fnan(), bad));
    }
}
