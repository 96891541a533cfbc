// SoftmaxCrossEntropyBackward (§2.16.3) on the norm family's norm_common.wgsl: one workgroup per
// slice: d_logits = (e^(x - m) / Σ e^(x - m) - t) · d_loss; NaN throughout when m is NaN or ±inf,
// and NaN where t is NaN (written explicitly: a compiler assuming no NaN may fold the arithmetic).

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
    let bad = fisnan(m) || fisinf(m);
    let g = ld_dl(w);
    for (var i = lid; i < p.len; i = i + WG) {
        let e = base + i * p.inner;
        let t = ld_t(e);
        let d = (fexp(ld_x(e) - m) / s - t) * g;
        st_out(e, select(d, fnan(), bad || fisnan(t)));
    }
}
