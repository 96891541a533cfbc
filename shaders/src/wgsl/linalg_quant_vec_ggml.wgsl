// Items of the GGML block formats for `linalg_quant_vec.wgsl`. Unit u of a row is block u (32
// elements) or, for the 256-element K-quants, block u as well; `item_<f>(n, rb, u, i)` gives the
// XG groups of 4 decoded weights of item i of block u of the row starting at byte rb of w, and
// `k_<f>(u, i, j)` the element of the row where group j starts. The items of a block read
// consecutive quant words, so consecutive lanes do. Every weight is the f32 value of §2.6.7 in
// the spec's product order: `d · (q − 8)`, `(d · sc) · q − (dmin · mn)`, ... Block starts are even
// (every BB is even), so f16 fields are read from one word (`wh`). `n` is unused here.
//
// 32-element formats (G = 4 items of 8 elements, XG = 2): item i takes quant word i, whose low
// nibbles are elements 4i .. 4i + 3 and high nibbles 16 + 4i .. (Q8_0: bytes 8i .. 8i + 7).
// Q4_K, Q5_K (G = 16, XG = 4): item i = 4 pr + h takes quant words 2h, 2h + 1 of the 32 bytes
// holding sub-blocks 2 pr (low nibbles) and 2 pr + 1 (high nibbles).
// Q2_K, Q3_K, Q6_K (G = 16, XG = 4): item i = 8 hq + q takes l = 4q .. 4q + 3 of half hq, that
// is the elements 128 hq + 32 c + l of the four c < 4 (group j = c).
// Q8_K (G = 32, XG = 2): item i takes quant bytes 8i .. 8i + 7.

// The low and high nibbles of the bytes of word v.
fn nib_lo(v: u32) -> vec4<u32> {
    return bytes4(v) & vec4<u32>(15u);
}

fn nib_hi(v: u32) -> vec4<u32> {
    return bytes4(v) >> vec4<u32>(4u);
}

// Bit b of each byte of word v.
fn bit4(v: u32, b: u32) -> vec4<u32> {
    return (bytes4(v) >> vec4<u32>(b)) & vec4<u32>(1u);
}

// Byte o of w.
fn wbyte(o: u32) -> u32 {
    return (w[o >> 2u] >> ((o & 3u) * 8u)) & 255u;
}

// The high bits h(e) of elements e .. e + 3 from qh (Q5_0, Q5_1).
fn qh4(qh: u32, e: u32) -> vec4<u32> {
    return (vec4<u32>(qh >> e) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(1u);
}

fn k_q32(u: u32, i: u32, j: u32) -> u32 {
    return 32u * u + 4u * i + 16u * j;
}

fn k_q8_0(u: u32, i: u32, j: u32) -> u32 {
    return 32u * u + 8u * i + 4u * j;
}

fn k_q8_k(u: u32, i: u32, j: u32) -> u32 {
    return 256u * u + 8u * i + 4u * j;
}

fn k_q4_k(u: u32, i: u32, j: u32) -> u32 {
    return 256u * u + 64u * (i / 4u) + 8u * (i % 4u) + 4u * (j % 2u) + 32u * (j / 2u);
}

fn k_q6_k(u: u32, i: u32, j: u32) -> u32 {
    return 256u * u + 128u * (i / 8u) + 4u * (i % 8u) + 32u * j;
}

fn item_q4_0(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 18u;
    let d = wh(o);
    let q = ww(o + 2u + 4u * i);
    return array<vec4<f32>, 2>(d * f4_off(nib_lo(q), 8.0), d * f4_off(nib_hi(q), 8.0));
}

fn item_q4_1(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 20u;
    let d = wh(o);
    let m = wh(o + 2u);
    let q = ww(o + 4u + 4u * i);
    return array<vec4<f32>, 2>(d * f4(nib_lo(q)) + m, d * f4(nib_hi(q)) + m);
}

fn item_q5_0(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 22u;
    let d = wh(o);
    let qh = ww(o + 2u);
    let q = ww(o + 6u + 4u * i);
    let lo = nib_lo(q) + 16u * qh4(qh, 4u * i);
    let hi = nib_hi(q) + 16u * qh4(qh, 16u + 4u * i);
    return array<vec4<f32>, 2>(d * f4_off(lo, 16.0), d * f4_off(hi, 16.0));
}

fn item_q5_1(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 24u;
    let d = wh(o);
    let m = wh(o + 2u);
    let qh = ww(o + 4u);
    let q = ww(o + 8u + 4u * i);
    let lo = nib_lo(q) + 16u * qh4(qh, 4u * i);
    let hi = nib_hi(q) + 16u * qh4(qh, 16u + 4u * i);
    return array<vec4<f32>, 2>(d * f4(lo) + m, d * f4(hi) + m);
}

fn item_q8_0(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 34u;
    let d = wh(o);
    return array<vec4<f32>, 2>(d * sbytes4(ww(o + 2u + 8u * i)), d * sbytes4(ww(o + 6u + 8u * i)));
}

fn item_q8_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 2> {
    let o = rb + u * 292u;
    let d = bitcast<f32>(ww(o));
    return array<vec4<f32>, 2>(d * sbytes4(ww(o + 4u + 8u * i)), d * sbytes4(ww(o + 8u + 8u * i)));
}

// sc(j), mn(j) of Q4_K/Q5_K from the 12 scale bytes S held in the words s0, s1, s2, without a
// branch: with t = j % 4 the bytes S[t], S[t + 4], S[t + 8] give both cases (j < 4: S[j] and
// S[j + 4]; j >= 4: S[j + 4], S[j − 4] and S[j]).
fn k_scale(s0: u32, s1: u32, s2: u32, j: u32) -> vec2<u32> {
    let sh = 8u * (j % 4u);
    let b0 = (s0 >> sh) & 255u;
    let b4 = (s1 >> sh) & 255u;
    let b8 = (s2 >> sh) & 255u;
    let lo = vec2<u32>(b0 & 63u, b4 & 63u);
    let hi = vec2<u32>((b8 & 15u) | ((b0 >> 6u) << 4u), (b8 >> 4u) | ((b4 >> 6u) << 4u));
    return select(hi, lo, j < 4u);
}

// (d · sc, dmin · mn, d · sc', dmin · mn') of sub-blocks 2 pr and 2 pr + 1 of the Q4_K/Q5_K
// block at byte o.
fn k_dm(o: u32, pr: u32) -> vec4<f32> {
    let dm = ww(o);
    let d = h2f(dm);
    let dmin = h2f(dm >> 16u);
    let s0 = ww(o + 4u);
    let s1 = ww(o + 8u);
    let s2 = ww(o + 12u);
    let a = k_scale(s0, s1, s2, 2u * pr);
    let b = k_scale(s0, s1, s2, 2u * pr + 1u);
    return vec4<f32>(d * f4(vec4<u32>(a.x, b.x, 0u, 0u)).xy, dmin * f4(vec4<u32>(a.y, b.y, 0u, 0u)).xy).xzyw;
}

fn item_q4_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 4> {
    let o = rb + u * 144u;
    let pr = i / 4u;
    let s = k_dm(o, pr);
    let q0 = ww(o + 16u + 32u * pr + 8u * (i % 4u));
    let q1 = ww(o + 20u + 32u * pr + 8u * (i % 4u));
    return array<vec4<f32>, 4>(
        s.x * f4(nib_lo(q0)) - s.y,
        s.x * f4(nib_lo(q1)) - s.y,
        s.z * f4(nib_hi(q0)) - s.w,
        s.z * f4(nib_hi(q1)) - s.w,
    );
}

fn item_q5_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 4> {
    let o = rb + u * 176u;
    let pr = i / 4u;
    let s = k_dm(o, pr);
    let q0 = ww(o + 48u + 32u * pr + 8u * (i % 4u));
    let q1 = ww(o + 52u + 32u * pr + 8u * (i % 4u));
    // kh(e): bit e / 32 of qh[e % 32], the same qh bytes for both sub-blocks.
    let h0 = ww(o + 16u + 8u * (i % 4u));
    let h1 = ww(o + 20u + 8u * (i % 4u));
    let b0 = 2u * pr;
    let b1 = b0 + 1u;
    return array<vec4<f32>, 4>(
        s.x * f4(nib_lo(q0) + 16u * bit4(h0, b0)) - s.y,
        s.x * f4(nib_lo(q1) + 16u * bit4(h1, b0)) - s.y,
        s.z * f4(nib_hi(q0) + 16u * bit4(h0, b1)) - s.w,
        s.z * f4(nib_hi(q1) + 16u * bit4(h1, b1)) - s.w,
    );
}

// The 4 bytes 2c + sel (c < 4) of the 8 bytes s0, s1 (sel = 0 or 1).
fn pick4(s0: u32, s1: u32, sel: u32) -> vec4<u32> {
    let sh = 8u * sel;
    return vec4<u32>(s0 >> sh, s0 >> (sh + 16u), s1 >> sh, s1 >> (sh + 16u)) & vec4<u32>(255u);
}

fn item_q2_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 4> {
    let o = rb + u * 84u;
    let hq = i / 8u;
    let q = bytes4(ww(o + 16u + 32u * hq + 4u * (i % 8u)));
    let dm = ww(o + 80u);
    let sc = pick4(ww(o + 8u * hq), ww(o + 8u * hq + 4u), (i % 8u) / 4u);
    let dl = h2f(dm) * f4(sc & vec4<u32>(15u));
    let ml = h2f(dm >> 16u) * f4(sc >> vec4<u32>(4u));
    let m3 = vec4<u32>(3u);
    return array<vec4<f32>, 4>(
        dl.x * f4(q & m3) - ml.x,
        dl.y * f4((q >> vec4<u32>(2u)) & m3) - ml.y,
        dl.z * f4((q >> vec4<u32>(4u)) & m3) - ml.z,
        dl.w * f4(q >> vec4<u32>(6u)) - ml.w,
    );
}

// s6(s) of Q3_K from the 12 scale bytes at byte q: the low 4 bits are the low (s < 8) or high
// nibble of byte s % 8, without a branch.
fn s6v(q: u32, s: u32) -> u32 {
    let b = wbyte(q + s % 8u);
    let lo = select(b >> 4u, b & 15u, s < 8u);
    let hi = (wbyte(q + 8u + s % 4u) >> (2u * (s / 4u))) & 3u;
    return lo | (hi << 4u);
}

fn item_q3_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 4> {
    let o = rb + u * 110u;
    let hq = i / 8u;
    let l = 4u * (i % 8u);
    let s0 = 8u * hq + (i % 8u) / 4u;
    let s6 = vec4<u32>(s6v(o + 96u, s0), s6v(o + 96u, s0 + 2u), s6v(o + 96u, s0 + 4u), s6v(o + 96u, s0 + 6u));
    let ds = wh(o + 108u) * f4_off(s6, 32.0);
    let q = bytes4(ww(o + 32u + 32u * hq + l));
    let hm = bytes4(ww(o + l)) >> vec4<u32>(4u * hq);
    let m3 = vec4<u32>(3u);
    let m1 = vec4<u32>(1u);
    // q2 − 4 + 4 hm = (q2 + 4 hm) − 4.
    return array<vec4<f32>, 4>(
        ds.x * f4_off((q & m3) + 4u * (hm & m1), 4.0),
        ds.y * f4_off(((q >> vec4<u32>(2u)) & m3) + 4u * ((hm >> vec4<u32>(1u)) & m1), 4.0),
        ds.z * f4_off(((q >> vec4<u32>(4u)) & m3) + 4u * ((hm >> vec4<u32>(2u)) & m1), 4.0),
        ds.w * f4_off((q >> vec4<u32>(6u)) + 4u * ((hm >> vec4<u32>(3u)) & m1), 4.0),
    );
}

fn item_q6_k(n: u32, rb: u32, u: u32, i: u32) -> array<vec4<f32>, 4> {
    let o = rb + u * 210u;
    let hq = i / 8u;
    let l = 4u * (i % 8u);
    let sc = pick4(ww(o + 192u + 8u * hq), ww(o + 196u + 8u * hq), (i % 8u) / 4u);
    // The scales are I8: (byte ^ 0x80) − 128.
    let ds = wh(o + 208u) * f4_off(sc ^ vec4<u32>(0x80u), 128.0);
    // ql byte 64 hq + 32 (c % 2) + l holds c's low 4 bits in nibble c / 2.
    let qa = bytes4(ww(o + 64u * hq + l));
    let qb = bytes4(ww(o + 64u * hq + 32u + l));
    let qh = bytes4(ww(o + 128u + 32u * hq + l));
    let m4 = vec4<u32>(15u);
    let m2 = vec4<u32>(3u);
    let q0 = (qa & m4) | ((qh & m2) << vec4<u32>(4u));
    let q1 = (qb & m4) | (((qh >> vec4<u32>(2u)) & m2) << vec4<u32>(4u));
    let q2 = (qa >> vec4<u32>(4u)) | (((qh >> vec4<u32>(4u)) & m2) << vec4<u32>(4u));
    let q3 = (qb >> vec4<u32>(4u)) | ((qh >> vec4<u32>(6u)) << vec4<u32>(4u));
    return array<vec4<f32>, 4>(ds.x * f4_off(q0, 32.0), ds.y * f4_off(q1, 32.0), ds.z * f4_off(q2, 32.0), ds.w * f4_off(q3, 32.0));
}
