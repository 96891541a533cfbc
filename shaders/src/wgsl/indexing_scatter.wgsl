// ScatterAdd / GatherBackward with atomics (§2.4.2, §2.4.3): one invocation per update element
// (o, j, t) adds it into accumulator element (o, r, t), r = the resolved indices[j]; out-of-range
// contributions are skipped. The accumulator already holds data (or zeros). `add_at` is the
// dtype's lock-free add (atomicAdd, or a compare-exchange loop on the containing u32 word), so
// colliding indices never lose an update.

{{TENSORS}}
{{INDEX}}
{{ADD}}

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
        return;
    }
    add_at((o * p.a + r) * p.inner + t, ld_upd(e));
}
