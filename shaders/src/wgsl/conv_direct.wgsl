// Conv (§2.9.1), general direct form: one invocation per output element sums, over the input
// channels of its group, the kernel taps that fall inside the input.

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.total) {
        return;
    }
    let q = out_pos(t);
    let g = q.co / p.cgo;
    let b = vec3<i32>(q.o * p.stride.xyz) - vec3<i32>(p.pads.xyz);
    let rd = taps(b.x, p.dilation.x, p.k.x, p.in_sp.x);
    let rh = taps(b.y, p.dilation.y, p.k.y, p.in_sp.y);
    let rw = taps(b.z, p.dilation.z, p.k.z, p.in_sp.z);
    var acc = bias_of(q.co);
    var xc = (q.n * p.cin + g * p.cgi) * p.in_total;
    var wc = q.co * p.cgi * p.k_total;
    for (var c = 0u; c < p.cgi; c++) {
        for (var kd = rd.x; kd < rd.y; kd++) {
            let xd = u32(b.x + i32(kd * p.dilation.x)) * p.in_sp.y;
            for (var kh = rh.x; kh < rh.y; kh++) {
                let xh = xc + (xd + u32(b.y + i32(kh * p.dilation.y))) * p.in_sp.z;
                let wh = wc + (kd * p.k.y + kh) * p.k.z;
                for (var kw = rw.x; kw < rw.y; kw++) {
                    acc += ld_w(wh + kw) * ld_x(xh + u32(b.z + i32(kw * p.dilation.z)));
                }
            }
        }
        xc += p.in_total;
        wc += p.k_total;
    }
    st_out(t, acc);
}
