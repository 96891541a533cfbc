//! Philox4x32-10 (§1.9): the one counter-based generator behind every random op.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

/// Philox4x32 with 10 rounds: counter `c`, key `k` → four output words.
pub fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let (hi0, lo0) = mulhilo(M0, c[0]);
        let (hi1, lo1) = mulhilo(M1, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The stream word at position `i` for `key = (lo, hi)` and op `seed`.
pub fn stream_word(key: [u32; 2], seed: u64, i: u64) -> u32 {
    let b = i / 4;
    let c = [b as u32, (b >> 32) as u32, seed as u32, (seed >> 32) as u32];
    philox4x32_10(c, key)[(i % 4) as usize]
}

/// `uniform(i) = (word(i) >> 8) · 2^-24`.
pub fn uniform(key: [u32; 2], seed: u64, i: u64) -> f64 {
    (stream_word(key, seed, i) >> 8) as f64 * (1.0 / 16_777_216.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers() {
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
        assert_eq!(
            philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn stream_and_uniform_reference_values() {
        let w: Vec<u32> = (0..8).map(|i| stream_word([1, 2], 3, i)).collect();
        assert_eq!(w, [0x4236452e, 0xd5af937b, 0xe196fd49, 0x1dd16593, 0xbe4d29c6, 0x1b06ef7b, 0x795632f1, 0x7e50bf3f]);
        assert!((uniform([0, 0], 0, 0) - 0.399046421).abs() < 1e-9);
        assert!((uniform([1, 2], 3, 3) - 0.116476357).abs() < 1e-9);
    }
}
