// Pool.Max (§2.9.3): one invocation per output element, the maximum over the window points inside
// the input (NaN propagating through MAX); padded and out-of-extent points never take part, and a
// window with no inside point keeps LOWEST (−∞ or the dtype minimum). Whole kernel rows outside the
// input are skipped before the inner loop, which has no division.

{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    let o = out_position(e);
    let s = window_start(o.xyz);
    let plane = o.w * p.in_dims.w;
    var a: {{R}} = {{LOWEST}};
    for (var kd = 0u; kd < p.kernel.x; kd = kd + 1u) {
        let id = s.x + kd * p.dilation.x;
        if (id >= p.in_dims.x) {
            continue;
        }
        for (var kh = 0u; kh < p.kernel.y; kh = kh + 1u) {
            let ih = s.y + kh * p.dilation.y;
            if (ih >= p.in_dims.y) {
                continue;
            }
            let row = plane + (id * p.in_dims.y + ih) * p.in_dims.z;
            for (var kw = 0u; kw < p.kernel.z; kw = kw + 1u) {
                let iw = s.z + kw * p.dilation.z;
                if (iw < p.in_dims.z) {
                    let b = ld_x(row + iw);
                    a = {{MAX}};
                }
            }
        }
    }
    st_out(e, a);
}
