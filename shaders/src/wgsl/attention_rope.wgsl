// Rope / RopeBackward, one invocation per rotated pair or passed-through element, any float32-family
// dtype of x and of the tables (packed F16/BF16 outputs are ORed into zeroed memory).

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.units) {
        return;
    }
    let q = rope_unit(t);
    if (q.j >= p.r) {
        let e = q.base + q.j + p.r;
        st_out(e, ld_x(e));
        return;
    }
    let c = ld_cos_t(q.tab + q.j);
    let sn = ld_sin_t(q.tab + q.j) * p.sign;
    let lo = q.base + q.j * p.step;
    let hi = lo + p.gap;
    let a = ld_x(lo);
    let b = ld_x(hi);
    st_out(lo, a * c - b * sn);
    st_out(hi, b * c + a * sn);
}
