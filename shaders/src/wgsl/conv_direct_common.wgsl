// Conv / ConvTranspose direct kernels, shared part (§2.9.1–2.9.2): params, the type F the sums are
// computed in (f32 for F32/F16/BF16 storage, f64 for F64), output addressing and the bias.
//
// Spatial dims are padded to three with leading ones (size 1, kernel 1, stride 1, dilation 1, no
// padding), so one kernel serves 1-D, 2-D and 3-D. The lowering keeps every coordinate it forms
// (o·stride + κ·dilation, o + pads_begin) below 2^31, so the i32 arithmetic below cannot wrap.

struct ConvParams {
    total: u32,
    cout: u32,
    cin: u32,
    cgi: u32,
    cgo: u32,
    in_total: u32,
    k_total: u32,
    quads: u32,
    out_sp: vec4<u32>,
    in_sp: vec4<u32>,
    k: vec4<u32>,
    stride: vec4<u32>,
    dilation: vec4<u32>,
    pads: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: ConvParams;

{{TENSORS}}

alias F = {{F}};

fn bias_of(co: u32) -> F {
    return {{BIAS}};
}

struct OutPos {
    n: u32,
    co: u32,
    o: vec3<u32>,
}

// The output element at row-major index t of [N, Cout, D, H, W].
fn out_pos(t: u32) -> OutPos {
    let w = t % p.out_sp.z;
    var r = t / p.out_sp.z;
    let h = r % p.out_sp.y;
    r = r / p.out_sp.y;
    let d = r % p.out_sp.x;
    r = r / p.out_sp.x;
    return OutPos(r / p.cout, r % p.cout, vec3<u32>(d, h, w));
}

// The kernel taps κ of one dim whose input coordinate b + κ·dil lies in [0, n), as [lo, hi):
// computed once per output, so the tap loops carry no bounds tests (and a tap in the padding is
// never multiplied, keeping non-finite weights out of windows in the padding).
fn taps(b: i32, dil: u32, k: u32, n: u32) -> vec2<u32> {
    var lo = 0u;
    if (b < 0) {
        lo = (u32(-b) + dil - 1u) / dil;
    }
    var hi = 0u;
    let room = i32(n) - b;
    if (room > 0) {
        hi = min(k, (u32(room) + dil - 1u) / dil);
    }
    return vec2<u32>(lo, hi);
}
