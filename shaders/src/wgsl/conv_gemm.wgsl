// Conv (§2.9.1) as an implicit GEMM: for batch item n and group g, C[co, s] = Σ_k A[co, k] · B[k, s]
// with K tap-major, k = tap·Cgi + ci (tap row-major over the padded kernel box):
// A[co, k] = w[g·Cgo + co, ci, tap], read in place (w's group block, no copy), and B the im2col
// of x formed on the fly here: column s = the output position (row-major over the padded output
// dims), B[k, s] = x[n, g·Cgi + ci, s·stride + tap·dilation − pads_begin], NONE (zero) when that
// lands in the padding. C is row-major [Cout/G, S] at batch (n, g): exactly NCHW.
//
// Tap-major K makes a K step cheap to address: with K_ALIGNED (Cgi a multiple of the K step BK,
// and every step starting at a multiple of BK) the whole step lies in one tap, so the tap, its
// kernel offsets and each column's bounds test are the same for every element a thread stages in
// that step; only the channel moves, by a multiply-add.
//
// The (n, g) batch is the product kernel's batch over dims [N, G]: its offsets pick w's group,
// x's channel block and the bias's group (see `linalg_common.wgsl`). The lowering keeps every
// coordinate formed below (o·stride + κ·dilation) under 2^31, so the i32 arithmetic cannot wrap,
// and an index is formed only for an element inside the matrix (ci < Cgi, tap < taps, a position
// inside x): every access is in bounds by construction.

struct ConvGeom {
    // Input spatial dims (D, H, W) and D·H·W.
    in_sp: vec4<u32>,
    // Output H·W, H, W and D·H·W.
    out_sp: vec4<u32>,
    // Kernel kh·kw, kh, kw and kd·kh·kw (taps).
    taps: vec4<u32>,
    // Strides (D, H, W), fourth lane unused.
    stride: vec4<u32>,
    // Dilations.
    dilation: vec4<u32>,
    // Padding before each dim.
    pads: vec4<u32>,
    // Input channels per group (Cgi), then unused lanes.
    chan: vec4<u32>,
}

const K_ALIGNED: bool = {{K_ALIGNED}};

// (tap, channel) of row k0 + dk of the implicit matrix. With K_ALIGNED the tap is the step's own
// (k0 is a multiple of BK, BK divides Cgi and dk < BK), the same for every element of the step.
fn tap_channel(k0: u32, dk: u32) -> vec2<u32> {
    let cgi = p.geom.chan.x;
    if (K_ALIGNED) {
        return vec2<u32>(k0 / cgi, k0 % cgi + dk);
    }
    let gk = k0 + dk;
    return vec2<u32>(gk / cgi, gk % cgi);
}

// Index of A's (row0 + c.x, k0 + c.y): w[co, ci, tap] in the group block at base.
fn index_a(base: u32, row0: u32, k0: u32, kend: u32, c: vec2<u32>) -> u32 {
    let gi = row0 + c.x;
    if (gi >= p.m || k0 + c.y >= kend) {
        return NONE;
    }
    let tc = tap_channel(k0, c.y);
    return base + gi * p.a_rs + tc.y * p.geom.taps.w + tc.x;
}

// Column j of the implicit im2col matrix, addressed once per invocation: its window origin
// o·stride − pads_begin per dim (xyz) and that origin's row-major index into an input channel (w;
// it may lie outside, it is only ever added to an in-window offset). A column past the matrix
// gets an origin of −2^31, so that every tap of it fails the bounds test below (tap offsets are
// under 2^31).
alias BCol = vec4<i32>;

fn b_col(col0: u32, j: u32) -> BCol {
    let gj = col0 + j;
    let q = p.geom;
    let o = vec3<u32>(gj / q.out_sp.x, (gj / q.out_sp.z) % q.out_sp.y, gj % q.out_sp.z);
    let inside = vec3<i32>(o * q.stride.xyz) - vec3<i32>(q.pads.xyz);
    let org = select(vec3<i32>(i32(-2147483647) - 1), inside, gj < p.n);
    let ins = vec3<i32>(q.in_sp.xyz);
    return vec4<i32>(org, (org.x * ins.y + org.y) * ins.z + org.z);
}

// Index of element (k0 + dk, column bc) of the implicit im2col matrix; NONE past the K range or
// in the padding. The tap's offsets are the same for every element of a step where K_ALIGNED.
// The row-major index is formed as origin index + tap offset in wrapping i32 arithmetic, which
// is the exact index whenever the position is inside the input.
fn index_b(base: u32, bc: BCol, k0: u32, kend: u32, dk: u32) -> u32 {
    if (k0 + dk >= kend) {
        return NONE;
    }
    let q = p.geom;
    let tc = tap_channel(k0, dk);
    let t = tc.x;
    let kk = vec3<u32>(t / q.taps.x, (t / q.taps.z) % q.taps.y, t % q.taps.z);
    let off = vec3<i32>(kk * q.dilation.xyz);
    let pos = bc.xyz + off;
    let ins = vec3<i32>(q.in_sp.xyz);
    if (any(pos < vec3<i32>(0)) || any(pos >= ins)) {
        return NONE;
    }
    let lin = bc.w + (off.x * ins.y + off.y) * ins.z + off.z;
    return base + tc.y * q.in_sp.w + u32(lin);
}

// The columns (output positions) are B's fast axis.
fn b_nfast() -> bool {
    return true;
}

// Pair word of bf16 (low: first element) to two f32 (BF16 operands of the tensor-core form are
// rounded to f16 while staged).
fn unpack2x_bf16(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}
