//! Test-only second decoders for the GGML formats, written the other way round: as loops over a
//! block's fields in storage order (the structure of ggml's reference dequantisers), with Q3_K's
//! 6-bit scales unpacked by whole-word masks. The per-element decoders of `ggml.rs` and
//! `kquants.rs` must agree with them bit for bit on every block, which checks the index helpers
//! of §2.6.7 against the layouts they describe.

use super::ggml::{f16_at, f32_at, field, i8_of, q4_0, q4_1, q5_0, q5_1, q8_0};
use super::kquants::{q2_k, q3_k, q4_k, q5_k, q6_k, q8_k};

fn loop_q4_0(b: &[u8]) -> Vec<f32> {
    let (d, qs) = (f16_at(b, 0), field::<16>(b, 2));
    let mut y = vec![0.0; 32];
    for j in 0..16 {
        y[j] = f32::from(i16::from(qs[j] & 15) - 8) * d;
        y[j + 16] = f32::from(i16::from(qs[j] >> 4) - 8) * d;
    }
    y
}

/// Q5_0 (`m = None`) and Q5_1: the fifth bit of element `j` and `j + 16` moved into place with
/// shifts of the whole `qh` word.
fn loop_q5(b: &[u8], with_min: bool) -> Vec<f32> {
    let o = if with_min { 2 } else { 0 };
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let (qh, qs) = (u32::from_le_bytes(field(b, 2 + o)), field::<16>(b, 6 + o));
    let mut y = vec![0.0; 32];
    for j in 0..16 {
        let xh0 = ((qh >> j) << 4) & 0x10;
        let xh1 = (qh >> (j + 12)) & 0x10;
        let (x0, x1) = (u32::from(qs[j] & 15) | xh0, u32::from(qs[j] >> 4) | xh1);
        if with_min {
            y[j] = x0 as f32 * d + m;
            y[j + 16] = x1 as f32 * d + m;
        } else {
            y[j] = (x0 as f32 - 16.0) * d;
            y[j + 16] = (x1 as f32 - 16.0) * d;
        }
    }
    y
}

fn loop_q4_1(b: &[u8]) -> Vec<f32> {
    let (d, m, qs) = (f16_at(b, 0), f16_at(b, 2), field::<16>(b, 4));
    let mut y = vec![0.0; 32];
    for j in 0..16 {
        y[j] = f32::from(qs[j] & 15) * d + m;
        y[j + 16] = f32::from(qs[j] >> 4) * d + m;
    }
    y
}

fn loop_q2_k(b: &[u8]) -> Vec<f32> {
    let (scales, qs, d, dmin) = (field::<16>(b, 0), field::<64>(b, 16), f16_at(b, 80), f16_at(b, 82));
    let mut y = Vec::new();
    let mut is = 0;
    for half in 0..2 {
        let q = &qs[32 * half..32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for part in [&q[..16], &q[16..]] {
                let sc = scales[is];
                is += 1;
                let (dl, ml) = (d * f32::from(sc & 15), dmin * f32::from(sc >> 4));
                y.extend(part.iter().map(|&x| dl * f32::from((x >> shift) & 3) - ml));
            }
        }
    }
    y
}

fn loop_q3_k(b: &[u8]) -> Vec<f32> {
    let (hmask, qs, raw, d) = (field::<32>(b, 0), field::<64>(b, 32), field::<12>(b, 96), f16_at(b, 108));
    // The 16 six-bit scales, four at a time from little-endian words.
    let word = |i: usize| u32::from_le_bytes(field(&raw, 4 * i));
    let (a0, a1, t) = (word(0), word(1), word(2));
    let (k1, k2) = (0x0303_0303u32, 0x0f0f_0f0fu32);
    let words = [
        (a0 & k2) | ((t & k1) << 4),
        (a1 & k2) | (((t >> 2) & k1) << 4),
        ((a0 >> 4) & k2) | (((t >> 4) & k1) << 4),
        ((a1 >> 4) & k2) | (((t >> 6) & k1) << 4),
    ];
    let scales: Vec<i16> = words.iter().flat_map(|w| w.to_le_bytes()).map(|s| i16::from(s) - 32).collect();
    let mut y = Vec::new();
    let (mut is, mut m) = (0, 1u8);
    for half in 0..2 {
        let q = &qs[32 * half..32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for l0 in [0, 16] {
                let dl = d * f32::from(scales[is]);
                is += 1;
                for l in l0..l0 + 16 {
                    let hi = if hmask[l] & m != 0 { 0 } else { 4 };
                    y.push(dl * f32::from(i16::from((q[l] >> shift) & 3) - hi));
                }
            }
            m <<= 1;
        }
    }
    y
}

/// Q4_K (`qh = None`) and Q5_K: 64 elements per step, low then high nibbles of 32 bytes.
fn loop_q45_k(b: &[u8], five: bool) -> Vec<f32> {
    let (d, dmin, s) = (f16_at(b, 0), f16_at(b, 2), field::<12>(b, 4));
    let (qh, qs) = if five { (field::<32>(b, 16), field::<128>(b, 48)) } else { ([0; 32], field::<128>(b, 16)) };
    let scale_min = |j: usize| {
        if j < 4 {
            (s[j] & 63, s[j + 4] & 63)
        } else {
            ((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
        }
    };
    let mut y = Vec::new();
    let (mut u1, mut u2) = (1u8, 2u8);
    for step in 0..4 {
        let q = &qs[32 * step..32 * step + 32];
        for (j, hi_nibble, u) in [(2 * step, false, u1), (2 * step + 1, true, u2)] {
            let (sc, mn) = scale_min(j);
            let (dl, ml) = (d * f32::from(sc), dmin * f32::from(mn));
            for l in 0..32 {
                let v = if hi_nibble { q[l] >> 4 } else { q[l] & 15 };
                let h = if five && qh[l] & u != 0 { 16 } else { 0 };
                y.push(dl * f32::from(v + h) - ml);
            }
        }
        u1 <<= 2;
        u2 <<= 2;
    }
    y
}

fn loop_q6_k(b: &[u8]) -> Vec<f32> {
    let (ql, qh, sc, d) = (field::<128>(b, 0), field::<64>(b, 128), field::<16>(b, 192), f16_at(b, 208));
    let mut y = vec![0.0; 256];
    for half in 0..2 {
        let (ql, qh, sc) = (&ql[64 * half..], &qh[32 * half..], &sc[8 * half..]);
        let out = &mut y[128 * half..];
        for l in 0..32 {
            let is = l / 16;
            let q = [
                (ql[l] & 15) | ((qh[l] & 3) << 4),
                (ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4),
                (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4),
                (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4),
            ];
            for (c, &q) in q.iter().enumerate() {
                out[l + 32 * c] = d * f32::from(i8_of(sc[is + 2 * c])) * f32::from(i16::from(q) - 32);
            }
        }
    }
    y
}

fn loop_q8(b: &[u8], k: bool) -> Vec<f32> {
    let (d, at) = if k { (f32_at(b, 0), 4) } else { (f16_at(b, 0), 2) };
    (0..if k { 256 } else { 32 }).map(|e| f32::from(i8_of(b[at + e])) * d).collect()
}

/// Deterministic pseudo-random bytes.
fn random_block(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 56) as u8
        })
        .collect()
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn per_element_decoders_equal_the_loop_decoders_on_random_blocks() {
    type Pair = (&'static str, usize, fn(&[u8], &mut Vec<f32>), fn(&[u8]) -> Vec<f32>);
    let pairs: [Pair; 11] = [
        ("Q4_0", 18, q4_0, loop_q4_0),
        ("Q4_1", 20, q4_1, loop_q4_1),
        ("Q5_0", 22, q5_0, |b| loop_q5(b, false)),
        ("Q5_1", 24, q5_1, |b| loop_q5(b, true)),
        ("Q8_0", 34, q8_0, |b| loop_q8(b, false)),
        ("Q2_K", 84, q2_k, loop_q2_k),
        ("Q3_K", 110, q3_k, loop_q3_k),
        ("Q4_K", 144, q4_k, |b| loop_q45_k(b, false)),
        ("Q5_K", 176, q5_k, |b| loop_q45_k(b, true)),
        ("Q6_K", 210, q6_k, loop_q6_k),
        ("Q8_K", 292, q8_k, |b| loop_q8(b, true)),
    ];
    for (name, bb, per_element, looped) in pairs {
        for seed in 0..200 {
            let b = random_block(bb, seed);
            let mut got = Vec::new();
            per_element(&b, &mut got);
            let want = looped(&b);
            assert_eq!(got.len(), want.len(), "{name}");
            for (e, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(same(*g, *w), "{name} seed {seed} element {e}: {g} vs {w}");
            }
        }
    }
}
