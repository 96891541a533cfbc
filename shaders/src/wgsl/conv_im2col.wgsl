// Im2Col (§2.9.4): one invocation per element of the [N·C, Πk, L] output (PyTorch unfold layout),
// copying raw element bits: out[nc, flat(κ), flat(o)] = x[nc, o·stride + κ·dilation − pads_begin],
// or ZERO (the bits of 0 in every dtype) for a point outside the input. Here out_dims.w = L and
// kernel.w = Πk.

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    let col = e % p.out_dims.w;
    let t = e / p.out_dims.w;
    let kk = t % p.kernel.w;
    let nc = t / p.kernel.w;
    // Output position of the column (an [OD, OH, OW] grid) and kernel point of the row.
    let o = out_position(col).xyz;
    let kw = kk % p.kernel.z;
    let kdh = kk / p.kernel.z;
    let k = vec3<u32>(kdh / p.kernel.y, kdh % p.kernel.y, kw);
    let q = window_start(o) + k * p.dilation.xyz;
    if (all(q < p.in_dims.xyz)) {
        st_out(e, ld_x(nc * p.in_dims.w + (q.x * p.in_dims.y + q.y) * p.in_dims.z + q.z));
    } else {
        st_out(e, {{ZERO}});
    }
}
