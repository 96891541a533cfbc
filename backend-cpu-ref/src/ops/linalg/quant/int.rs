//! Int8Block, Int8BlockAsym and Int4Block (§2.6.7): integer codes times one scale per block of `B`
//! consecutive elements along K. Each function decodes one row of `W`, appending its `K` values
//! (the spec's f32 products, in the spec's order) to `out`.

use std::num::NonZeroUsize;

/// `scale[k div B]` for `k = 0, 1, …`: each block's scale repeated `B` times (the last block of a
/// row may be cut short by the codes running out, which is how `K` not a multiple of `B` works).
fn per_element(scale: &[f32], b: NonZeroUsize) -> impl Iterator<Item = f32> + '_ {
    scale.iter().flat_map(move |&s| std::iter::repeat_n(s, b.get()))
}

/// The signed value of an I8 byte.
fn i8_of(byte: u8) -> i8 {
    i8::from_le_bytes([byte])
}

/// Int8Block: `w[k] · scale[k div B]`, with `w` the row's I8 bytes.
pub(crate) fn int8_block_row(w: &[u8], scale: &[f32], b: NonZeroUsize, out: &mut Vec<f32>) {
    for (&q, s) in w.iter().zip(per_element(scale, b)) {
        out.push(f32::from(i8_of(q)) * s);
    }
}

/// Int8BlockAsym: `(w[k] − zero[k div B]) · scale[k div B]`, with `w` the row's U8 bytes or, when
/// `signed`, its I8 bytes. The difference is an f32 subtraction (the zero point need not be an
/// integer), then the product.
pub(crate) fn int8_asym_row(
    w: &[u8],
    signed: bool,
    (scale, zero): (&[f32], &[f32]),
    b: NonZeroUsize,
    out: &mut Vec<f32>,
) {
    let pairs = per_element(scale, b).zip(per_element(zero, b));
    for (&q, (s, z)) in w.iter().zip(pairs) {
        let v = if signed { f32::from(i8_of(q)) } else { f32::from(q) };
        out.push((v - z) * s);
    }
}

/// The 4-bit two's-complement value of a nibble (0..=15): −8..=7.
pub(crate) fn int4(nibble: u8) -> i8 {
    let n = i8_of(nibble & 15);
    if n < 8 {
        n
    } else {
        n - 16
    }
}

/// Int4Block: `q(k) · scale[k div B]` for the `k` elements packed two per byte in `w` (element
/// `2i` in the low nibble of byte `i`, `2i + 1` in the high one; an odd `k` leaves the last high
/// nibble unused).
pub(crate) fn int4_block_row(w: &[u8], k: usize, scale: &[f32], b: NonZeroUsize, out: &mut Vec<f32>) {
    let nibbles = w.iter().flat_map(|&byte| [byte & 15, byte >> 4]).take(k);
    for (nib, s) in nibbles.zip(per_element(scale, b)) {
        out.push(f32::from(int4(nib)) * s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(b: usize) -> NonZeroUsize {
        NonZeroUsize::new(b).unwrap()
    }

    #[test]
    fn every_nibble_is_twos_complement() {
        let want = [0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1];
        for (n, w) in (0u8..16).zip(want) {
            assert_eq!(int4(n), w, "nibble {n}");
        }
    }

    #[test]
    fn int8_block_by_hand_with_a_short_last_block() {
        // K = 5, B = 2: blocks {0, 1}, {2, 3}, {4}; scales 0.5, -2, 0.25.
        let w = [1u8, 0xFF, 0x80, 0x7F, 6];
        let mut out = Vec::new();
        int8_block_row(&w, &[0.5, -2.0, 0.25], nz(2), &mut out);
        assert_eq!(out, [0.5, -0.5, 256.0, -254.0, 1.5]);
    }

    #[test]
    fn every_int8_code_times_one() {
        let w: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        int8_block_row(&w, &[1.0], nz(256), &mut out);
        let want: Vec<f32> = (0..=255u8).map(|b| f32::from(b as i8)).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn int8_asym_by_hand_unsigned_and_signed() {
        // K = 3, B = 2: (200 − 128) · 0.5, (0 − 128) · 0.5, (7 − 1.5) · 2.
        let mut out = Vec::new();
        int8_asym_row(&[200, 0, 7], false, (&[0.5, 2.0], &[128.0, 1.5]), nz(2), &mut out);
        assert_eq!(out, [36.0, -64.0, 11.0]);
        // Signed: 0xFF is −1, 0x80 is −128.
        let mut out = Vec::new();
        int8_asym_row(&[0xFF, 0x80, 3], true, (&[0.5, 2.0], &[-1.0, 0.25]), nz(2), &mut out);
        assert_eq!(out, [0.0, -63.5, 5.5]);
    }

    #[test]
    fn int4_block_by_hand_with_odd_k() {
        // K = 5, B = 3: bytes 0x91 → 1, −7; 0x0F → −1, 0; 0xA2 → 2 (high nibble unused).
        let mut out = Vec::new();
        int4_block_row(&[0x91, 0x0F, 0xA2], 5, &[0.5, -4.0], nz(3), &mut out);
        assert_eq!(out, [0.5, -3.5, -0.5, -0.0, -8.0]);
    }

    #[test]
    fn every_int4_pair_of_nibbles() {
        let w: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        int4_block_row(&w, 512, &[1.0], nz(512), &mut out);
        for (i, pair) in out.chunks(2).enumerate() {
            assert_eq!(pair, [f32::from(int4(i as u8 & 15)), f32::from(int4(i as u8 >> 4))]);
        }
    }
}
