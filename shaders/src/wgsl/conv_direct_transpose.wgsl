// ConvTranspose (§2.9.2), gather form: one invocation per output element o sums x · w over the
// kernel taps κ whose source o + pads_begin − κ·dilation is a multiple of the stride landing
// inside the input, and over the input channels of its group. No atomics: each output element
// has one writer. Every product is added, even with x = 0 (NaN/∞ weights propagate).

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= p.total) {
        return;
    }
    let q = out_pos(t);
    let g = q.co / p.cgo;
    let e = vec3<i32>(q.o + p.pads.xyz);
    var acc = bias_of(q.co);
    let xg = (q.n * p.cin + g * p.cgi) * p.in_total;
    let wg = (g * p.cgi * p.cgo + (q.co - g * p.cgo)) * p.k_total;
    let wstep = p.cgo * p.k_total;
    for (var kd = 0u; kd < p.k.x; kd++) {
        // the source coordinate only decreases with κ: stop once it is negative
        let td = e.x - i32(kd * p.dilation.x);
        if (td < 0) {
            break;
        }
        let id = u32(td) / p.stride.x;
        if (id * p.stride.x != u32(td) || id >= p.in_sp.x) {
            continue;
        }
        for (var kh = 0u; kh < p.k.y; kh++) {
            let th = e.y - i32(kh * p.dilation.y);
            if (th < 0) {
                break;
            }
            let ih = u32(th) / p.stride.y;
            if (ih * p.stride.y != u32(th) || ih >= p.in_sp.y) {
                continue;
            }
            for (var kw = 0u; kw < p.k.z; kw++) {
                let tw = e.z - i32(kw * p.dilation.z);
                if (tw < 0) {
                    break;
                }
                let iw = u32(tw) / p.stride.z;
                if (iw * p.stride.z != u32(tw) || iw >= p.in_sp.z) {
                    continue;
                }
                let xi = xg + (id * p.in_sp.y + ih) * p.in_sp.z + iw;
                let wi = wg + (kd * p.k.y + kh) * p.k.z + kw;
                for (var c = 0u; c < p.cgi; c++) {
                    acc += ld_x(xi + c * p.in_total) * ld_w(wi + c * wstep);
                }
            }
        }
    }
    st_out(t, acc);
}
