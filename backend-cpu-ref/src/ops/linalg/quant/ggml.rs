//! The 32-element GGML block formats of §2.6.7 (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and the byte
//! readers every GGML block decoder shares. Each decoder takes one block's bytes and appends its
//! 32 values to `out`.

use half::f16;

/// `N` bytes of `b` from offset `o`, copied; bytes past the end read as 0. Decoders are handed
/// exactly one block (`chunks_exact`), so the padding never happens; copying keeps them total.
pub(crate) fn field<const N: usize>(b: &[u8], o: usize) -> [u8; N] {
    let mut a = [0u8; N];
    for (d, s) in a.iter_mut().zip(b.iter().skip(o)) {
        *d = *s;
    }
    a
}

/// The little-endian binary16 at byte `o`, converted exactly to f32 (subnormals, ±∞, NaN).
pub(crate) fn f16_at(b: &[u8], o: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes(field(b, o))).to_f32()
}

/// The little-endian f32 at byte `o`.
pub(crate) fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_le_bytes(field(b, o))
}

/// The signed value of an I8 byte.
pub(crate) fn i8_of(byte: u8) -> i8 {
    i8::from_le_bytes([byte])
}

/// `n4(e)`: byte `i` of `qs` holds element `i` (low nibble) and element `i + 16` (high nibble).
fn n4(qs: &[u8; 16], e: usize) -> u8 {
    if e < 16 {
        qs[e] & 15
    } else {
        qs[e - 16] >> 4
    }
}

/// `h(e)`: bit `e` of `qh`.
fn h(qh: u32, e: usize) -> u8 {
    u8::from((qh >> e) & 1 == 1)
}

/// Q4_0 (18 bytes): `d · (n4(e) − 8)`.
pub(crate) fn q4_0(b: &[u8], out: &mut Vec<f32>) {
    let (d, qs) = (f16_at(b, 0), field::<16>(b, 2));
    for e in 0..32 {
        out.push(d * f32::from(i16::from(n4(&qs, e)) - 8));
    }
}

/// Q4_1 (20 bytes): `d · n4(e) + m`.
pub(crate) fn q4_1(b: &[u8], out: &mut Vec<f32>) {
    let (d, m, qs) = (f16_at(b, 0), f16_at(b, 2), field::<16>(b, 4));
    for e in 0..32 {
        out.push(d * f32::from(n4(&qs, e)) + m);
    }
}

/// Q5_0 (22 bytes): `d · (n4(e) + 16·h(e) − 16)`.
pub(crate) fn q5_0(b: &[u8], out: &mut Vec<f32>) {
    let (d, qh, qs) = (f16_at(b, 0), u32::from_le_bytes(field(b, 2)), field::<16>(b, 6));
    for e in 0..32 {
        let q = i16::from(n4(&qs, e)) + 16 * i16::from(h(qh, e)) - 16;
        out.push(d * f32::from(q));
    }
}

/// Q5_1 (24 bytes): `d · (n4(e) + 16·h(e)) + m`.
pub(crate) fn q5_1(b: &[u8], out: &mut Vec<f32>) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let (qh, qs) = (u32::from_le_bytes(field(b, 4)), field::<16>(b, 8));
    for e in 0..32 {
        let q = u16::from(n4(&qs, e)) + 16 * u16::from(h(qh, e));
        out.push(d * f32::from(q) + m);
    }
}

/// Q8_0 (34 bytes): `d · qs[e]` with signed bytes.
pub(crate) fn q8_0(b: &[u8], out: &mut Vec<f32>) {
    let (d, qs) = (f16_at(b, 0), field::<32>(b, 2));
    for q in qs {
        out.push(d * f32::from(i8_of(q)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block: `head` at offset 0, then `qs` at `at`, zero-filled to `len` bytes.
    fn block(len: usize, head: &[u8], at: usize, qs: &[(usize, u8)]) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[..head.len()].copy_from_slice(head);
        for &(i, v) in qs {
            b[at + i] = v;
        }
        b
    }

    fn run(f: fn(&[u8], &mut Vec<f32>), b: &[u8]) -> Vec<f32> {
        let mut out = Vec::new();
        f(b, &mut out);
        assert_eq!(out.len(), 32);
        out
    }

    #[test]
    fn q4_0_by_hand() {
        // d = 0.5 (f16 0x3800); byte i holds nibble i (element i) and 15 − i (element i + 16).
        let qs: Vec<(usize, u8)> = (0..16).map(|i| (i, i as u8 | ((15 - i as u8) << 4))).collect();
        let out = run(q4_0, &block(18, &[0x00, 0x38], 2, &qs));
        let want = [
            -4.0, -3.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, //
            3.5, 3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5, -2.0, -2.5, -3.0, -3.5, -4.0,
        ];
        assert_eq!(out, want);
    }

    #[test]
    fn q4_0_subnormal_nan_and_infinite_scales() {
        // d = 2^-24 (the smallest f16 subnormal): nibble 15 → 7 · 2^-24.
        let out = run(q4_0, &block(18, &[0x01, 0x00], 2, &[(0, 0x0F)]));
        assert_eq!(out[0], 7.0 * 2f32.powi(-24));
        let out = run(q4_0, &block(18, &[0x00, 0x7E], 2, &[]));
        assert!(out.iter().all(|v| v.is_nan()));
        // d = +∞: nibble 8 (value 0) gives ∞ · 0 = NaN, the others ±∞.
        let out = run(q4_0, &block(18, &[0x00, 0x7C], 2, &[(0, 0x08)]));
        assert!(out[0].is_nan());
        assert_eq!(out[1], f32::NEG_INFINITY);
    }

    #[test]
    fn q4_1_by_hand() {
        // d = 0.5, m = −1 (0xBC00): byte 0 = 0xF0 → e0: 0, e16: 15; byte 15 = 0x1E → e15: 14, e31: 1.
        let out = run(q4_1, &block(20, &[0x00, 0x38, 0x00, 0xBC], 4, &[(0, 0xF0), (15, 0x1E)]));
        assert_eq!([out[0], out[16], out[15], out[31], out[5]], [-1.0, 6.5, 6.0, -0.5, -1.0]);
    }

    #[test]
    fn q5_0_by_hand() {
        // d = 0.25 (0x3400); qh = 0x8000_0001 (bits 0 and 31); byte 0 = 0x3F, byte 15 = 0x20.
        let head = [0x00, 0x34, 0x01, 0x00, 0x00, 0x80];
        let out = run(q5_0, &block(22, &head, 6, &[(0, 0x3F), (15, 0x20)]));
        // e0: 15 + 16 − 16; e16: 3 − 16; e15: 0 − 16; e31: 2 + 16 − 16; e1: 0 − 16.
        assert_eq!([out[0], out[16], out[15], out[31], out[1]], [3.75, -3.25, -4.0, 0.5, -4.0]);
    }

    #[test]
    fn q5_1_by_hand() {
        // d = 0.25, m = 1 (0x3C00), the qh and qs of the Q5_0 case.
        let head = [0x00, 0x34, 0x00, 0x3C, 0x01, 0x00, 0x00, 0x80];
        let out = run(q5_1, &block(24, &head, 8, &[(0, 0x3F), (15, 0x20)]));
        // e0: 0.25·31 + 1; e16: 0.25·3 + 1; e15: 0.25·0 + 1; e31: 0.25·18 + 1.
        assert_eq!([out[0], out[16], out[15], out[31]], [8.75, 1.75, 1.0, 5.5]);
    }

    #[test]
    fn q8_0_by_hand() {
        // d = 2 (0x4000); qs[0] = 0x81 (−127), qs[31] = 5.
        let out = run(q8_0, &block(34, &[0x00, 0x40], 2, &[(0, 0x81), (31, 5)]));
        assert_eq!([out[0], out[31], out[1]], [-254.0, 10.0, 0.0]);
    }
}
