// Split-K reduction: out[e] = finish(Σ_s part[s·total + e]) for every output element e, where
// total = nbatch·M·N and part holds the f32/f64 partial sums the product kernels wrote for each
// K range. Addressing and the epilogue: see `linalg_common.wgsl`.

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    let mn = p.m * p.n;
    let total = p.nbatch * mn;
    if (e >= total) {
        return;
    }
    var s = R(0.0);
    for (var sp = 0u; sp < p.nsplit; sp = sp + 1u) {
        s = s + ld_part(sp * total + e);
    }
    let r = e % mn;
    let off = batch_offsets(e / mn);
    st_out(e, finish(off.z + (r / p.n) * p.bias_rs + (r % p.n) * p.bias_cs, s));
}
