// Quantised matmul helpers: element e of the GGML block starting at byte o of w (§2.6.7; the
// layouts of ggml's `block_*` structs), in the spec's product order. Uses `linalg_quant_decode.wgsl`.

// n4(e) of the 32-element formats: byte i of qs (at byte q) holds elements i and i + 16.
fn n4(q: u32, e: u32) -> u32 {
    if (e < 16u) {
        return wb(q + e) & 15u;
    }
    return wb(q + e - 16u) >> 4u;
}

// h(e) of Q5_0/Q5_1: bit e of the u32 qh at byte o.
fn h5(o: u32, e: u32) -> u32 {
    return (wu32(o) >> e) & 1u;
}

fn q4_0(o: u32, e: u32) -> f32 {
    return wf16(o) * f32(i32(n4(o + 2u, e)) - 8);
}

fn q4_1(o: u32, e: u32) -> f32 {
    return wf16(o) * f32(n4(o + 4u, e)) + wf16(o + 2u);
}

fn q5_0(o: u32, e: u32) -> f32 {
    return wf16(o) * f32(i32(n4(o + 6u, e) + 16u * h5(o + 2u, e)) - 16);
}

fn q5_1(o: u32, e: u32) -> f32 {
    return wf16(o) * f32(n4(o + 8u, e) + 16u * h5(o + 4u, e)) + wf16(o + 2u);
}

fn q8_0(o: u32, e: u32) -> f32 {
    return wf16(o) * sx8(wb(o + 2u + e));
}

// q2(e) of Q2_K/Q3_K from qs at byte q.
fn q2(q: u32, e: u32) -> u32 {
    return (wb(q + 32u * (e / 128u) + e % 32u) >> (2u * ((e % 128u) / 32u))) & 3u;
}

fn q2_k(o: u32, e: u32) -> f32 {
    let sc = wb(o + e / 16u);
    return wf16(o + 80u) * f32(sc & 15u) * f32(q2(o + 16u, e)) - wf16(o + 82u) * f32(sc >> 4u);
}

// s6(s) of Q3_K from the 12 scale bytes at byte q.
fn s6(q: u32, s: u32) -> u32 {
    var lo = wb(q + s - 8u) >> 4u;
    if (s < 8u) {
        lo = wb(q + s) & 15u;
    }
    let hi = (wb(q + 8u + s % 4u) >> (2u * (s / 4u))) & 3u;
    return lo | (hi << 4u);
}

fn q3_k(o: u32, e: u32) -> f32 {
    let s = i32(s6(o + 96u, e / 16u)) - 32;
    let hm = (wb(o + e % 32u) >> (e / 32u)) & 1u;
    let q = i32(q2(o + 32u, e)) - 4 + 4 * i32(hm);
    return wf16(o + 108u) * f32(s) * f32(q);
}

// sc(j), mn(j) of Q4_K/Q5_K from the 12 scale bytes at byte q.
fn sc_mn(q: u32, j: u32) -> vec2<u32> {
    if (j < 4u) {
        return vec2<u32>(wb(q + j) & 63u, wb(q + j + 4u) & 63u);
    }
    let sc = (wb(q + j + 4u) & 15u) | ((wb(q + j - 4u) >> 6u) << 4u);
    let mn = (wb(q + j + 4u) >> 4u) | ((wb(q + j) >> 6u) << 4u);
    return vec2<u32>(sc, mn);
}

// k4(e) of Q4_K/Q5_K from qs at byte q.
fn k4(q: u32, e: u32) -> u32 {
    let byte = wb(q + 32u * (e / 64u) + e % 32u);
    return (byte >> (4u * ((e / 32u) & 1u))) & 15u;
}

fn q4_k(o: u32, e: u32) -> f32 {
    let sm = sc_mn(o + 4u, e / 32u);
    return wf16(o) * f32(sm.x) * f32(k4(o + 16u, e)) - wf16(o + 2u) * f32(sm.y);
}

fn q5_k(o: u32, e: u32) -> f32 {
    let sm = sc_mn(o + 4u, e / 32u);
    let q = k4(o + 48u, e) + 16u * ((wb(o + 16u + e % 32u) >> (e / 32u)) & 1u);
    return wf16(o) * f32(sm.x) * f32(q) - wf16(o + 2u) * f32(sm.y);
}

fn q6_k(o: u32, e: u32) -> f32 {
    let h = e / 128u;
    let c = (e % 128u) / 32u;
    let l = e % 32u;
    let lo = (wb(o + 64u * h + 32u * (c % 2u) + l) >> (4u * (c / 2u))) & 15u;
    let hi = (wb(o + 128u + 32u * h + l) >> (2u * c)) & 3u;
    let q = i32(lo | (hi << 4u)) - 32;
    return wf16(o + 208u) * sx8(wb(o + 192u + e / 16u)) * f32(q);
}

fn q8_k(o: u32, e: u32) -> f32 {
    return wf32(o) * sx8(wb(o + 4u + e));
}
