// Conv (§2.9.1), depthwise direct form (groups == Cin == Cout): one invocation per four
// consecutive outputs along the innermost spatial dim, so each weight is loaded once for four
// outputs and neighbouring taps of the four windows share cache lines.

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.total) {
        return;
    }
    // t = row · quads + j, a row being one (n, c, od, oh)
    let row = t / p.quads;
    let w0 = (t - row * p.quads) * 4u;
    let q = out_pos(row * p.out_sp.z + w0);
    let b = vec3<i32>(q.o * p.stride.xyz) - vec3<i32>(p.pads.xyz);
    let rd = taps(b.x, p.dilation.x, p.k.x, p.in_sp.x);
    let rh = taps(b.y, p.dilation.y, p.k.y, p.in_sp.y);
    // outputs of the quad past the row's end compute nothing and are not stored
    let live = min(4u, p.out_sp.z - w0);
    let sw = i32(p.stride.z);
    var acc = vec4<F>(bias_of(q.co));
    let xc = (q.n * p.cin + q.co) * p.in_total;
    let wc = q.co * p.k_total;
    for (var kd = rd.x; kd < rd.y; kd++) {
        let xd = u32(b.x + i32(kd * p.dilation.x)) * p.in_sp.y;
        for (var kh = rh.x; kh < rh.y; kh++) {
            let xh = xc + (xd + u32(b.y + i32(kh * p.dilation.y))) * p.in_sp.z;
            let wh = wc + (kd * p.k.y + kh) * p.k.z;
            for (var kw = 0u; kw < p.k.z; kw++) {
                let wv = ld_w(wh + kw);
                let iw0 = b.z + i32(kw * p.dilation.z);
                for (var j = 0u; j < live; j++) {
                    let iw = iw0 + i32(j) * sw;
                    if (iw >= 0 && iw < i32(p.in_sp.z)) {
                        acc[j] += wv * ld_x(xh + u32(iw));
                    }
                }
            }
        }
    }
    let base = row * p.out_sp.z + w0;
    for (var j = 0u; j < live; j++) {
        st_out(base + j, acc[j]);
    }
}
