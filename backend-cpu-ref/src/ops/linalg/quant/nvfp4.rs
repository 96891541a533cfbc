//! Nvfp4 (§2.6.7): E2M1 nibbles, an E4M3 scale per 16 elements and one f32 global scale.

use super::fp8::e4m3;

/// E2M1: bits `s ee m`, bias 1; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 for codes 0..7.
pub(crate) fn e2m1(nibble: u8) -> f32 {
    let (s, e, m) = ((nibble >> 3) & 1 == 1, (nibble >> 1) & 3, nibble & 1);
    let mag = if e == 0 {
        f32::from(m) * 0.5
    } else {
        // 2^(e − 1) for e = 1..3.
        f32::from(1u8 << (e - 1)) * (1.0 + f32::from(m) / 2.0)
    };
    if s {
        -mag
    } else {
        mag
    }
}

/// One row: `e2m1(nib(k)) · e4m3(block_scale[k div 16]) · global`, products left to right in f32.
/// `w` holds the row's `K/2` bytes (element `2i` in the low nibble of byte `i`), `block_scale`
/// its `K/16` scale bytes.
pub(crate) fn nvfp4_row(w: &[u8], block_scale: &[u8], global: f32, out: &mut Vec<f32>) {
    // Eight bytes (16 elements) per block scale.
    for (bytes, &bs) in w.chunks(8).zip(block_scale) {
        let s = e4m3(bs);
        for nib in bytes.iter().flat_map(|&b| [b & 15, b >> 4]) {
            out.push(e2m1(nib) * s * global);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nibble() {
        let mags = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for n in 0..16u8 {
            let v = e2m1(n);
            assert_eq!(v.abs(), mags[usize::from(n & 7)], "{n}");
            assert_eq!(v.is_sign_negative(), n >= 8, "{n}");
        }
    }

    #[test]
    fn a_row_by_hand() {
        // K = 32: block 0 scale 0x38 (1.0), block 1 scale 0x30 (0.5); global 2.
        // Byte 0x21: elements 0.5 (code 1), 1.0 (code 2); byte 0xF9: −0.5 (code 9), −6 (code 15).
        let mut w = [0u8; 16];
        w[0] = 0x21;
        w[8] = 0xF9;
        let mut out = Vec::new();
        nvfp4_row(&w, &[0x38, 0x30], 2.0, &mut out);
        assert_eq!(out.len(), 32);
        assert_eq!(out[..2], [1.0, 2.0]);
        assert_eq!(out[16..18], [-0.5, -6.0]);
        assert!(out[2..16].iter().chain(&out[18..]).all(|&v| v == 0.0));
    }

    #[test]
    fn nan_and_negative_block_scales() {
        let mut out = Vec::new();
        // 0x7F is E4M3 NaN: the whole block is NaN (0 · NaN included); 0xB8 is −1.
        nvfp4_row(&[0x02; 16], &[0x7F, 0xB8], 1.0, &mut out);
        assert!(out[..16].iter().all(|v| v.is_nan()));
        assert_eq!(out[16..18], [-1.0, -0.0]);
    }
}
