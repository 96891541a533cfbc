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

// The offsets of kernel tap t from a window's origin, per dim (kk·dilation; under 2^31).
fn tap_offsets(t: u32) -> vec3<i32> {
    let q = p.geom;
    let kk = vec3<u32>(t / q.taps.x, (t / q.taps.z) % q.taps.y, t % q.taps.z);
    return vec3<i32>(kk * q.dilation.xyz);
}

// The row-major index offset of tap offsets `off` within an input channel (wrapping i32
// arithmetic; exact once added to an origin whose sum lies inside the input).
fn linear(off: vec3<i32>) -> i32 {
    let ins = vec3<i32>(p.geom.in_sp.xyz);
    return (off.x * ins.y + off.y) * ins.z + off.z;
}

// What the addressing of the K step starting at k0 shares. With K_ALIGNED (k0 a multiple of BK,
// BK dividing Cgi) the step lies in one tap: its tap, first channel, offsets and their index
// offset are computed here once; otherwise each element decomposes its own row.
struct KStep {
    k0: u32,
    tap: u32,
    ci0: u32,
    off: vec3<i32>,
    lin: i32,
}

fn k_step(k0: u32) -> KStep {
    if (!K_ALIGNED) {
        return KStep(k0, 0u, 0u, vec3<i32>(0), 0);
    }
    let cgi = p.geom.chan.x;
    let t = k0 / cgi;
    let off = tap_offsets(t);
    return KStep(k0, t, k0 % cgi, off, linear(off));
}

// (tap, channel) of row ks.k0 + dk of the implicit matrix.
fn tap_channel(ks: KStep, dk: u32) -> vec2<u32> {
    if (K_ALIGNED) {
        return vec2<u32>(ks.tap, ks.ci0 + dk);
    }
    let cgi = p.geom.chan.x;
    let gk = ks.k0 + dk;
    return vec2<u32>(gk / cgi, gk % cgi);
}

// Index of A's (row0 + c.x, k0 + c.y): w[co, ci, tap] in the group block at base.
fn index_a(base: u32, row0: u32, ks: KStep, kend: u32, c: vec2<u32>) -> u32 {
    let gi = row0 + c.x;
    if (gi >= p.m || ks.k0 + c.y >= kend) {
        return NONE;
    }
    let tc = tap_channel(ks, c.y);
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
    return vec4<i32>(org, linear(org));
}

// Index of element (k0 + dk, column bc) of the implicit im2col matrix; NONE past the K range or
// in the padding. The tap's offsets are the same for every element of a step where K_ALIGNED.
// The row-major index is formed as origin index + tap offset in wrapping i32 arithmetic, which
// is the exact index whenever the position is inside the input.
fn index_b(base: u32, bc: BCol, ks: KStep, kend: u32, dk: u32) -> u32 {
    if (ks.k0 + dk >= kend) {
        return NONE;
    }
    let tc = tap_channel(ks, dk);
    var off = ks.off;
    var lin = ks.lin;
    if (!K_ALIGNED) {
        off = tap_offsets(tc.x);
        lin = linear(off);
    }
    let pos = bc.xyz + off;
    if (any(pos < vec3<i32>(0)) || any(pos >= vec3<i32>(p.geom.in_sp.xyz))) {
        return NONE;
    }
    return base + tc.y * p.geom.in_sp.w + u32(bc.w + lin);
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
