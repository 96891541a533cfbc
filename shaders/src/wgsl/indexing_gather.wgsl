// Gather (§2.4.1): one invocation per output element (o, j, t) copies the raw bits of data
// element (o, r, t), r = the resolved indices[j], or writes zero bits (+0, 0, false, 0+0i) when
// r is out of range. Raw bits: NaN payloads and Bool bytes survive unchanged.

{{TENSORS}}
{{INDEX}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    let t = e % p.inner;
    let rest = e / p.inner;
    let j = rest % p.nidx;
    let o = rest / p.nidx;
    let r = index_at(j, p.a);
    if (r == OUT_OF_RANGE) {
        st_out(e, {{ZERO}});
    } else {
        st_out(e, ld_x((o * p.a + r) * p.inner + t));
    }
}
