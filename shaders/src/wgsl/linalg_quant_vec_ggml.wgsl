// Units of the GGML block formats for `linalg_quant_vec.wgsl`: `unit_<format>(n, rb, u)` adds
// elements 32u .. 32u + 31 of the row starting at byte rb of w (every unit is 32 elements). The
// 32-element formats take one block per unit; the 256-element (K-quant) formats take 8 units per
// block, the unit's index s = u % 8 chosen so that the units of a block, taken by consecutive
// lanes, read consecutive bytes of its quants. Every weight is the f32 value of §2.6.7 in the
// spec's product order: `d · (q − 8)`, `(d · sc) · q − (dmin · mn)`, ... Block starts are even
// (every BB is even), so f16 fields are read from one word (`wh`). `n` is unused here.

// The bytes of word v as two-nibble vectors: low nibbles (.lo) and high nibbles (.hi).
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

fn unit_q4_0(n: u32, rb: u32, u: u32) {
    let o = rb + u * 18u;
    let k0 = u * 32u;
    let d = wh(o);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 2u + 4u * t);
        acc4(k0 + 4u * t, d * (vec4<f32>(nib_lo(q)) - 8.0));
        acc4(k0 + 16u + 4u * t, d * (vec4<f32>(nib_hi(q)) - 8.0));
    }
}

fn unit_q4_1(n: u32, rb: u32, u: u32) {
    let o = rb + u * 20u;
    let k0 = u * 32u;
    let d = wh(o);
    let m = wh(o + 2u);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 4u + 4u * t);
        acc4(k0 + 4u * t, d * vec4<f32>(nib_lo(q)) + m);
        acc4(k0 + 16u + 4u * t, d * vec4<f32>(nib_hi(q)) + m);
    }
}

// The high bits h(e) of elements e .. e + 3 from qh.
fn qh4(qh: u32, e: u32) -> vec4<u32> {
    return (vec4<u32>(qh >> e) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(1u);
}

fn unit_q5_0(n: u32, rb: u32, u: u32) {
    let o = rb + u * 22u;
    let k0 = u * 32u;
    let d = wh(o);
    let qh = ww(o + 2u);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 6u + 4u * t);
        let lo = vec4<i32>(nib_lo(q) + 16u * qh4(qh, 4u * t)) - 16;
        let hi = vec4<i32>(nib_hi(q) + 16u * qh4(qh, 16u + 4u * t)) - 16;
        acc4(k0 + 4u * t, d * vec4<f32>(lo));
        acc4(k0 + 16u + 4u * t, d * vec4<f32>(hi));
    }
}

fn unit_q5_1(n: u32, rb: u32, u: u32) {
    let o = rb + u * 24u;
    let k0 = u * 32u;
    let d = wh(o);
    let m = wh(o + 2u);
    let qh = ww(o + 4u);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 8u + 4u * t);
        acc4(k0 + 4u * t, d * vec4<f32>(nib_lo(q) + 16u * qh4(qh, 4u * t)) + m);
        acc4(k0 + 16u + 4u * t, d * vec4<f32>(nib_hi(q) + 16u * qh4(qh, 16u + 4u * t)) + m);
    }
}

fn unit_q8_0(n: u32, rb: u32, u: u32) {
    let o = rb + u * 34u;
    let k0 = u * 32u;
    let d = wh(o);
    for (var t = 0u; t < 8u; t = t + 1u) {
        acc4(k0 + 4u * t, d * sbytes4(ww(o + 2u + 4u * t)));
    }
}

fn unit_q8_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 292u;
    let s = u % 8u;
    let k0 = u * 32u;
    let d = bitcast<f32>(ww(o));
    for (var t = 0u; t < 8u; t = t + 1u) {
        acc4(k0 + 4u * t, d * sbytes4(ww(o + 4u + 32u * s + 4u * t)));
    }
}

// sc(j), mn(j) of Q4_K/Q5_K from the 12 scale bytes at byte q.
fn k_scale(q: u32, j: u32) -> vec2<u32> {
    if (j < 4u) {
        return vec2<u32>(wbyte(q + j) & 63u, wbyte(q + j + 4u) & 63u);
    }
    let sc = (wbyte(q + j + 4u) & 15u) | ((wbyte(q + j - 4u) >> 6u) << 4u);
    let mn = (wbyte(q + j + 4u) >> 4u) | ((wbyte(q + j) >> 6u) << 4u);
    return vec2<u32>(sc, mn);
}

// Q4_K and Q5_K: unit s = 2 pr + hf takes quant bytes 16 hf .. 16 hf + 15 of the 32 that hold
// sub-blocks j = 2 pr (low nibbles) and 2 pr + 1 (high nibbles): elements 64 pr + 16 hf + i and
// 64 pr + 32 + 16 hf + i, i < 16.
fn unit_q4_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 144u;
    let s = u % 8u;
    let pr = s / 2u;
    let hf = s % 2u;
    let e0 = (u / 8u) * 256u + 64u * pr + 16u * hf;
    let dm = ww(o);
    let d = f16_bits_to_f32(dm);
    let dmin = f16_bits_to_f32(dm >> 16u);
    let a = k_scale(o + 4u, 2u * pr);
    let b = k_scale(o + 4u, 2u * pr + 1u);
    let da = d * f32(a.x);
    let ma = dmin * f32(a.y);
    let db = d * f32(b.x);
    let mb = dmin * f32(b.y);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 16u + 32u * pr + 16u * hf + 4u * t);
        acc4(e0 + 4u * t, da * vec4<f32>(nib_lo(q)) - ma);
        acc4(e0 + 32u + 4u * t, db * vec4<f32>(nib_hi(q)) - mb);
    }
}

fn unit_q5_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 176u;
    let s = u % 8u;
    let pr = s / 2u;
    let hf = s % 2u;
    let e0 = (u / 8u) * 256u + 64u * pr + 16u * hf;
    let dm = ww(o);
    let d = f16_bits_to_f32(dm);
    let dmin = f16_bits_to_f32(dm >> 16u);
    let a = k_scale(o + 4u, 2u * pr);
    let b = k_scale(o + 4u, 2u * pr + 1u);
    let da = d * f32(a.x);
    let ma = dmin * f32(a.y);
    let db = d * f32(b.x);
    let mb = dmin * f32(b.y);
    for (var t = 0u; t < 4u; t = t + 1u) {
        let q = ww(o + 48u + 32u * pr + 16u * hf + 4u * t);
        // kh(e): bit e / 32 of qh[e % 32]; e % 32 = 16 hf + 4 t + i for both sub-blocks.
        let h = ww(o + 16u + 16u * hf + 4u * t);
        acc4(e0 + 4u * t, da * vec4<f32>(nib_lo(q) + 16u * bit4(h, 2u * pr)) - ma);
        acc4(e0 + 32u + 4u * t, db * vec4<f32>(nib_hi(q) + 16u * bit4(h, 2u * pr + 1u)) - mb);
    }
}

// Q2_K, Q3_K and Q6_K: unit s = 4 hq + qq takes l = 8 qq .. 8 qq + 7 of half hq (elements
// 128 hq + 32 c + l for c < 4), whose scales are s16 = 8 hq + 2 c + qq / 2.

// The 4 bytes 2c + sel (c < 4) of the 8 bytes s0, s1 (sel = 0 or 1).
fn pick4(s0: u32, s1: u32, sel: u32) -> vec4<u32> {
    let sh = 8u * sel;
    return vec4<u32>(s0 >> sh, s0 >> (sh + 16u), s1 >> sh, s1 >> (sh + 16u)) & vec4<u32>(255u);
}

fn unit_q2_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 84u;
    let s = u % 8u;
    let hq = s / 4u;
    let qq = s % 4u;
    let e0 = (u / 8u) * 256u + 128u * hq + 8u * qq;
    let dm = ww(o + 80u);
    let d = f16_bits_to_f32(dm);
    let dmin = f16_bits_to_f32(dm >> 16u);
    let sc = pick4(ww(o + 8u * hq), ww(o + 8u * hq + 4u), qq / 2u);
    let dl = d * vec4<f32>(sc & vec4<u32>(15u));
    let ml = dmin * vec4<f32>(sc >> vec4<u32>(4u));
    for (var t = 0u; t < 2u; t = t + 1u) {
        let q = bytes4(ww(o + 16u + 32u * hq + 8u * qq + 4u * t));
        for (var c = 0u; c < 4u; c = c + 1u) {
            let q2 = vec4<f32>((q >> vec4<u32>(2u * c)) & vec4<u32>(3u));
            acc4(e0 + 32u * c + 4u * t, dl[c] * q2 - ml[c]);
        }
    }
}

// s6(s) of Q3_K from the 12 scale bytes at byte q.
fn s6v(q: u32, s: u32) -> u32 {
    var lo = wbyte(q + s - 8u) >> 4u;
    if (s < 8u) {
        lo = wbyte(q + s) & 15u;
    }
    let hi = (wbyte(q + 8u + s % 4u) >> (2u * (s / 4u))) & 3u;
    return lo | (hi << 4u);
}

fn unit_q3_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 110u;
    let s = u % 8u;
    let hq = s / 4u;
    let qq = s % 4u;
    let e0 = (u / 8u) * 256u + 128u * hq + 8u * qq;
    let d = wh(o + 108u);
    var ds: vec4<f32>;
    for (var c = 0u; c < 4u; c = c + 1u) {
        ds[c] = d * f32(i32(s6v(o + 96u, 8u * hq + 2u * c + qq / 2u)) - 32);
    }
    for (var t = 0u; t < 2u; t = t + 1u) {
        let q = bytes4(ww(o + 32u + 32u * hq + 8u * qq + 4u * t));
        let hm = bytes4(ww(o + 8u * qq + 4u * t));
        for (var c = 0u; c < 4u; c = c + 1u) {
            let q2 = vec4<i32>((q >> vec4<u32>(2u * c)) & vec4<u32>(3u));
            let h = vec4<i32>((hm >> vec4<u32>(4u * hq + c)) & vec4<u32>(1u));
            acc4(e0 + 32u * c + 4u * t, ds[c] * vec4<f32>(q2 - 4 + 4 * h));
        }
    }
}

fn unit_q6_k(n: u32, rb: u32, u: u32) {
    let o = rb + (u / 8u) * 210u;
    let s = u % 8u;
    let hq = s / 4u;
    let qq = s % 4u;
    let e0 = (u / 8u) * 256u + 128u * hq + 8u * qq;
    let d = wh(o + 208u);
    let sc = pick4(ww(o + 192u + 8u * hq), ww(o + 196u + 8u * hq), qq / 2u);
    let ds = d * vec4<f32>(vec4<i32>(sc << vec4<u32>(24u)) >> vec4<u32>(24u));
    for (var t = 0u; t < 2u; t = t + 1u) {
        let l = 8u * qq + 4u * t;
        // ql byte 64 hq + 32 (c % 2) + l holds c's low 4 bits in nibble c / 2.
        let qa = bytes4(ww(o + 64u * hq + l));
        let qb = bytes4(ww(o + 64u * hq + 32u + l));
        let qh = bytes4(ww(o + 128u + 32u * hq + l));
        let m4 = vec4<u32>(15u);
        let m2 = vec4<u32>(3u);
        let q0 = (qa & m4) | ((qh & m2) << vec4<u32>(4u));
        let q1 = (qb & m4) | (((qh >> vec4<u32>(2u)) & m2) << vec4<u32>(4u));
        let q2 = (qa >> vec4<u32>(4u)) | (((qh >> vec4<u32>(4u)) & m2) << vec4<u32>(4u));
        let q3 = (qb >> vec4<u32>(4u)) | (((qh >> vec4<u32>(6u)) & m2) << vec4<u32>(4u));
        acc4(e0 + 4u * t, ds.x * vec4<f32>(vec4<i32>(q0) - 32));
        acc4(e0 + 32u + 4u * t, ds.y * vec4<f32>(vec4<i32>(q1) - 32));
        acc4(e0 + 64u + 4u * t, ds.z * vec4<f32>(vec4<i32>(q2) - 32));
        acc4(e0 + 96u + 4u * t, ds.w * vec4<f32>(vec4<i32>(q3) - 32));
    }
}
