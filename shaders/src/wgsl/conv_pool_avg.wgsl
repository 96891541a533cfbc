// Pool.Avg (§2.9.3): one invocation per output element, the sum of the window points inside the
// input (accumulated in ACC: f32, or f64 for F64) over the divisor: the inside points, or with
// count_include_pad the points in the padded extent (ceil-mode points past it never count). Both
// counts are products of per-axis counts, since a window is a box; a divisor of 0 gives 0.

{{TENSORS}}

// (inside, in padded extent) counts of the k points start + j·dil on one axis. Every point is at
// least −pads_begin, so q + pb is the point's true offset from the padded start (no wrap).
fn axis_counts(start: u32, k: u32, dil: u32, len: u32, pb: u32, pe: u32) -> vec2<u32> {
    var c = vec2<u32>(0u, 0u);
    for (var j = 0u; j < k; j = j + 1u) {
        let q = start + j * dil;
        c = c + vec2<u32>(select(0u, 1u, q < len), select(0u, 1u, q + pb < len + pb + pe));
    }
    return c;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e >= p.n) {
        return;
    }
    let o = out_position(e);
    let s = window_start(o.xyz);
    let plane = o.w * p.in_dims.w;
    var sum = {{ACC}}(0);
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
                    sum = sum + {{ACC}}(ld_x(row + iw));
                }
            }
        }
    }
    let cd = axis_counts(s.x, p.kernel.x, p.dilation.x, p.in_dims.x, p.pads_begin.x, p.pads_end.x);
    let ch = axis_counts(s.y, p.kernel.y, p.dilation.y, p.in_dims.y, p.pads_begin.y, p.pads_end.y);
    let cw = axis_counts(s.z, p.kernel.z, p.dilation.z, p.in_dims.z, p.pads_begin.z, p.pads_end.z);
    let counts = cd * ch * cw;
    let divisor = select(counts.x, counts.y, p.count_include_pad != 0u);
    if (divisor == 0u) {
        st_out(e, {{ACC}}(0));
    } else {
        st_out(e, sum / {{ACC}}(divisor));
    }
}
