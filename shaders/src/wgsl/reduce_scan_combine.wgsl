// Cumsum pass 3: one invocation per element adds its block's prefix to its in-block scan and
// stores the result (in the output dtype) at the element's address.

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = linear_id(gid, nwg);
    if (id >= p.rows * p.len) {
        return;
    }
    let r = id / p.len;
    let q = id % p.len;
    st_out(addr(r, q), ld_loc(id) + ld_bs(r * p.nb + q / WG));
}
