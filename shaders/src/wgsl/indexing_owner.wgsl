// ScatterAdd / GatherBackward without atomics ("owner computes"), for dtypes WGSL has no atomic
// add or compare-exchange for (F64): one invocation per output element (o, r, t) starts from its
// initial value (data, or zero) and adds, in index order, every update (o, j, t) whose index
// resolves to r. Costs nidx index reads per output element, but never races.

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
    let r = rest % p.a;
    let o = rest / p.a;
    var acc = {{INIT}};
    for (var j = 0u; j < p.nidx; j = j + 1u) {
        if (index_at(j, p.a) == r) {
            acc = acc + ld_upd((o * p.nidx + j) * p.inner + t);
        }
    }
    st_out(e, acc);
}
