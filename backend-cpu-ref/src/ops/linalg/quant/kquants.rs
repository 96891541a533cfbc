//! The 256-element GGML "K-quant" block formats of §2.6.7 (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K).
//! Each decoder takes one block's bytes and appends its 256 values to `out`, computing each
//! element from its position with the spec's helper functions (not ggml's loop nest), so that it
//! checks any loop-structured implementation rather than repeating one.

use super::ggml::{f16_at, f32_at, field, i8_of};

/// Elements per K-quant block (ggml's `QK_K`).
const QK_K: usize = 256;

/// `q2(e)` (Q2_K, Q3_K): 2 bits of `qs[32·(e div 128) + (e mod 32)]`, at `2·((e mod 128) div 32)`.
fn q2(qs: &[u8; 64], e: usize) -> u8 {
    (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3
}

/// `hm(e)` (Q3_K): bit `e div 32` of `hmask[e mod 32]`.
fn hm(hmask: &[u8; 32], e: usize) -> u8 {
    (hmask[e % 32] >> (e / 32)) & 1
}

/// `s6(s)` (Q3_K): the 6-bit scale `s` (0..16): 4 low bits from a nibble of `scales[0..8]`, 2
/// high bits from `scales[8..12]`.
fn s6(scales: &[u8; 12], s: usize) -> u8 {
    let lo = if s < 8 { scales[s] & 15 } else { scales[s - 8] >> 4 };
    let hi = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    lo | (hi << 4)
}

/// `(sc(j), mn(j))` (Q4_K, Q5_K): the 6-bit scale and min of sub-block `j` (0..8).
fn sc_mn(s: &[u8; 12], j: usize) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        ((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
    }
}

/// `k4(e)` (Q4_K, Q5_K): a nibble of `qs[32·(e div 64) + (e mod 32)]`, low when `e div 32` is even.
fn k4(qs: &[u8; 128], e: usize) -> u8 {
    let byte = qs[32 * (e / 64) + e % 32];
    if (e / 32).is_multiple_of(2) {
        byte & 15
    } else {
        byte >> 4
    }
}

/// `kh(e)` (Q5_K): bit `e div 32` of `qh[e mod 32]`.
fn kh(qh: &[u8; 32], e: usize) -> u8 {
    (qh[e % 32] >> (e / 32)) & 1
}

/// `q6(e)` (Q6_K): 4 low bits from `ql`, 2 high bits from `qh` (0..63).
fn q6(ql: &[u8; 128], qh: &[u8; 64], e: usize) -> u8 {
    let (h, c, l) = (e / 128, (e % 128) / 32, e % 32);
    let lo = (ql[64 * h + 32 * (c % 2) + l] >> (4 * (c / 2))) & 15;
    let hi = (qh[32 * h + l] >> (2 * c)) & 3;
    lo | (hi << 4)
}

/// Q2_K (84 bytes): `d · (sc & 15) · q2(e) − dmin · (sc >> 4)`, `sc = scales[e div 16]`.
pub(crate) fn q2_k(b: &[u8], out: &mut Vec<f32>) {
    let (scales, qs) = (field::<16>(b, 0), field::<64>(b, 16));
    let (d, dmin) = (f16_at(b, 80), f16_at(b, 82));
    for e in 0..QK_K {
        let sc = scales[e / 16];
        out.push(d * f32::from(sc & 15) * f32::from(q2(&qs, e)) - dmin * f32::from(sc >> 4));
    }
}

/// Q3_K (110 bytes): `d · (s6(e div 16) − 32) · (q2(e) − 4 + 4·hm(e))`.
pub(crate) fn q3_k(b: &[u8], out: &mut Vec<f32>) {
    let (hmask, qs, scales) = (field::<32>(b, 0), field::<64>(b, 32), field::<12>(b, 96));
    let d = f16_at(b, 108);
    for e in 0..QK_K {
        let s = i16::from(s6(&scales, e / 16)) - 32;
        let q = i16::from(q2(&qs, e)) - 4 + 4 * i16::from(hm(&hmask, e));
        out.push(d * f32::from(s) * f32::from(q));
    }
}

/// Q4_K (144 bytes): `d · sc(j) · k4(e) − dmin · mn(j)`, `j = e div 32`.
pub(crate) fn q4_k(b: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (scales, qs) = (field::<12>(b, 4), field::<128>(b, 16));
    for e in 0..QK_K {
        let (sc, mn) = sc_mn(&scales, e / 32);
        out.push(d * f32::from(sc) * f32::from(k4(&qs, e)) - dmin * f32::from(mn));
    }
}

/// Q5_K (176 bytes): `d · sc(j) · (k4(e) + 16·kh(e)) − dmin · mn(j)`, `j = e div 32`.
pub(crate) fn q5_k(b: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (scales, qh, qs) = (field::<12>(b, 4), field::<32>(b, 16), field::<128>(b, 48));
    for e in 0..QK_K {
        let (sc, mn) = sc_mn(&scales, e / 32);
        let q = k4(&qs, e) + 16 * kh(&qh, e);
        out.push(d * f32::from(sc) * f32::from(q) - dmin * f32::from(mn));
    }
}

/// Q6_K (210 bytes): `d · scales[e div 16] · (q6(e) − 32)` with signed scale bytes.
pub(crate) fn q6_k(b: &[u8], out: &mut Vec<f32>) {
    let (ql, qh, scales) = (field::<128>(b, 0), field::<64>(b, 128), field::<16>(b, 192));
    let d = f16_at(b, 208);
    for e in 0..QK_K {
        let q = i16::from(q6(&ql, &qh, e)) - 32;
        out.push(d * f32::from(i8_of(scales[e / 16])) * f32::from(q));
    }
}

/// Q8_K (292 bytes): `d · qs[e]` with an f32 `d` and signed bytes; `bsums` is not read.
pub(crate) fn q8_k(b: &[u8], out: &mut Vec<f32>) {
    let (d, qs) = (f32_at(b, 0), field::<256>(b, 4));
    for q in qs {
        out.push(d * f32::from(i8_of(q)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zero block of `len` bytes with the given `(offset, byte)` pairs set.
    fn block(len: usize, bytes: &[(usize, u8)]) -> Vec<u8> {
        let mut b = vec![0u8; len];
        for &(i, v) in bytes {
            b[i] = v;
        }
        b
    }

    fn run(f: fn(&[u8], &mut Vec<f32>), b: &[u8]) -> Vec<f32> {
        let mut out = Vec::new();
        f(b, &mut out);
        assert_eq!(out.len(), QK_K);
        out
    }

    fn at(v: &[f32], es: &[usize]) -> Vec<f32> {
        es.iter().map(|&e| v[e]).collect()
    }

    #[test]
    fn q2_k_by_hand() {
        // scales (offset 0): [0] = 0x21, [2] = 0x12, [4] = 0x0F, [6] = 0xF1, [8] = 0x11, [15] = 0x52.
        // qs (offset 16): [0] = 0xE4 (2-bit fields 0, 1, 2, 3), [1] = 0x03, [32] = 0x02, [63] = 0xC0.
        // d = 0.5 (offset 80), dmin = 0.25 (offset 82).
        let b = block(
            84,
            &[
                (0, 0x21),
                (2, 0x12),
                (4, 0x0F),
                (6, 0xF1),
                (8, 0x11),
                (15, 0x52),
                (16, 0xE4),
                (17, 0x03),
                (48, 0x02),
                (79, 0xC0),
                (81, 0x38),
                (83, 0x34),
            ],
        );
        let out = run(q2_k, &b);
        // e0: 0.5·1·0 − 0.25·2; e1: 0.5·1·3 − 0.5; e32: 0.5·2·1 − 0.25·1; e64: 0.5·15·2 − 0;
        // e96: 0.5·1·3 − 0.25·15; e128: 0.5·1·2 − 0.25·1; e255: 0.5·2·3 − 0.25·5; e16: 0.
        let want = [-0.5, 1.0, 0.75, 15.0, -2.25, 0.75, 1.75, 0.0];
        assert_eq!(at(&out, &[0, 1, 32, 64, 96, 128, 255, 16]), want);
    }

    #[test]
    fn q3_k_by_hand() {
        // hmask (0): [0] = 0x01, [8] = 0x40. qs (32): [0] = 0x03, [40] = 0x10, [63] = 0x80.
        // scales (96): [0] = 0x01, [4] = 0x50, [8] = 0x02, [11] = 0xC0. d = 2 (108).
        let b = block(
            110,
            &[(0, 0x01), (8, 0x40), (32, 0x03), (72, 0x10), (95, 0x80), (96, 0x01), (100, 0x50), (104, 0x02)]
                .into_iter()
                .chain([(107, 0xC0), (109, 0x40)])
                .collect::<Vec<_>>(),
        );
        let out = run(q3_k, &b);
        // s6(0) = 1 | 2<<4 = 33; s6(2) = 0; s6(12) = 5 (scales[4] >> 4); s6(15) = 0 | 3<<4 = 48.
        // e0: 2·1·(3 − 4 + 4) = 6; e1: 2·1·(0 − 4) = −8; e32: 2·(−32)·(0 − 4) = 256;
        // e200: q2 = (qs[40] >> 4) & 3 = 1, hm = hmask[8] bit 6 = 1 → 2·(−27)·1 = −54;
        // e255: q2 = qs[63] >> 6 = 2, hm = 0 → 2·16·(−2) = −64.
        assert_eq!(at(&out, &[0, 1, 32, 200, 255]), [6.0, -8.0, 256.0, -54.0, -64.0]);
    }

    /// The Q4_K/Q5_K scales: S[0] = 0x41, S[1] = 0x02, S[3] = 0xC0, S[4] = 0x83, S[5] = 0x04,
    /// S[8] = 0x72, S[11] = 0x31 → (sc, mn) for j = 0: (1, 3); 1: (2, 4); 4: (2 | 16, 7 | 32);
    /// 7: (1 | 48, 3); and d = 1, dmin = 0.5; `qs_at` is the offset of `qs`.
    fn k_block(len: usize, qs_at: usize, extra: &[(usize, u8)]) -> Vec<u8> {
        let scales = [(0, 0x41), (1, 0x02), (3, 0xC0), (4, 0x83), (5, 0x04), (8, 0x72), (11, 0x31)];
        let mut bytes: Vec<(usize, u8)> = scales.iter().map(|&(i, v)| (4 + i, v)).collect();
        bytes.extend([(1, 0x3C), (3, 0x38)]);
        // qs: [0] = 0x5A (e0 → 10, e32 → 5), [64] = 0x0F (e128 → 15), [127] = 0x90 (e255 → 9).
        bytes.extend([(qs_at, 0x5A), (qs_at + 64, 0x0F), (qs_at + 127, 0x90)]);
        bytes.extend_from_slice(extra);
        block(len, &bytes)
    }

    #[test]
    fn q4_k_by_hand() {
        let out = run(q4_k, &k_block(144, 16, &[]));
        // e0: 1·1·10 − 0.5·3; e32: 1·2·5 − 0.5·4; e128: 18·15 − 0.5·39; e255: 49·9 − 0.5·3.
        assert_eq!(at(&out, &[0, 32, 128, 255]), [8.5, 8.0, 250.5, 439.5]);
    }

    #[test]
    fn q5_k_by_hand() {
        // qh (offset 16): [0] = 0x11 (kh(0) = kh(128) = 1), [31] = 0x80 (kh(255) = 1).
        let out = run(q5_k, &k_block(176, 48, &[(16, 0x11), (47, 0x80)]));
        // e0: 1·(10 + 16) − 1.5; e32: 2·5 − 2; e128: 18·31 − 19.5; e255: 49·25 − 1.5.
        assert_eq!(at(&out, &[0, 32, 128, 255]), [24.5, 8.0, 538.5, 1223.5]);
    }

    #[test]
    fn q6_k_by_hand() {
        // ql (0): [0] = 0x37, [127] = 0xF0; qh (128): [0] = 0x02, [63] = 0xC0;
        // scales (192, signed): [0] = −3, [2] = 1, [4] = 2, [15] = −128; d = 0.5 (208).
        let b = block(
            210,
            &[(0, 0x37), (127, 0xF0), (128, 0x02), (191, 0xC0), (192, 0xFD), (194, 1), (196, 2), (207, 0x80)]
                .into_iter()
                .chain([(209, 0x38)])
                .collect::<Vec<_>>(),
        );
        let out = run(q6_k, &b);
        // e0: q6 = 7 | 2<<4 = 39 → 0.5·(−3)·7; e32: q6 = 0 → 0.5·1·(−32);
        // e64: q6 = 0x37 >> 4 = 3 → 0.5·2·(−29); e255: q6 = 15 | 3<<4 = 63 → 0.5·(−128)·31.
        assert_eq!(at(&out, &[0, 32, 64, 255]), [-10.5, -16.0, -29.0, -1984.0]);
    }

    #[test]
    fn q8_k_by_hand() {
        // d = 0.25 as f32 (0x3E80_0000) at 0; qs at 4: [0] = −128, [255] = 127; bsums ignored.
        let b = block(292, &[(2, 0x80), (3, 0x3E), (4, 0x80), (259, 0x7F), (260, 0xFF), (291, 0xFF)]);
        let out = run(q8_k, &b);
        assert_eq!(at(&out, &[0, 255, 1]), [-32.0, 31.75, 0.0]);
    }

    #[test]
    fn every_helper_index_stays_in_its_field_and_covers_it() {
        // Each packed bit is read by exactly one element: the layouts have no gaps or overlaps.
        let mut seen = std::collections::HashSet::new();
        for e in 0..QK_K {
            let (h, c, l) = (e / 128, (e % 128) / 32, e % 32);
            assert!(seen.insert((64 * h + 32 * (c % 2) + l, 4 * (c / 2))), "q6 low bits of {e}");
        }
        let mut seen = std::collections::HashSet::new();
        for e in 0..QK_K {
            assert!(seen.insert((32 * (e / 64) + e % 32, (e / 32) % 2)), "k4 of {e}");
        }
    }
}
