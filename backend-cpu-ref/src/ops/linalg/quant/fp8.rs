//! The 8-bit float formats of §2.6.7: E4M3 ("E4M3FN": no infinities, one NaN pattern per sign)
//! and E5M2 (IEEE-like, with infinities). Also used for Nvfp4's block scales.

/// `2^e`, exactly (a product of twos; every exponent used here is far inside f64's range).
fn pow2(e: i32) -> f64 {
    let step = if e < 0 { 0.5 } else { 2.0 };
    (0..e.unsigned_abs()).fold(1.0, |acc, _| acc * step)
}

/// `(−1)^s · v`, keeping the sign of zero.
fn signed(sign: bool, v: f64) -> f32 {
    // Every E4M3/E5M2/E2M1 value is exact in f32 (few significand bits, small exponents).
    let v = v as f32;
    if sign {
        -v
    } else {
        v
    }
}

/// E4M3: bits `s eeee mmm`, bias 7; `e = 15, m = 7` is NaN, `e = 0` subnormal `m · 2^−9`.
pub(crate) fn e4m3(byte: u8) -> f32 {
    let (s, e, m) = (byte >> 7 == 1, (byte >> 3) & 15, byte & 7);
    if e == 15 && m == 7 {
        return f32::NAN;
    }
    if e == 0 {
        return signed(s, f64::from(m) * pow2(-9));
    }
    signed(s, pow2(i32::from(e) - 7) * (1.0 + f64::from(m) / 8.0))
}

/// E5M2: bits `s eeeee mm`, bias 15; `e = 31` is ±∞ (`m = 0`) or NaN, `e = 0` subnormal
/// `m · 2^−16`.
pub(crate) fn e5m2(byte: u8) -> f32 {
    let (s, e, m) = (byte >> 7 == 1, (byte >> 2) & 31, byte & 3);
    if e == 31 {
        return if m == 0 { signed(s, f64::INFINITY) } else { f32::NAN };
    }
    if e == 0 {
        return signed(s, f64::from(m) * pow2(-16));
    }
    signed(s, pow2(i32::from(e) - 15) * (1.0 + f64::from(m) / 4.0))
}

/// Fp8E4m3 / Fp8E5m2 row: `code(w[k]) · s` with the row's scale `s`.
pub(crate) fn fp8_row(w: &[u8], e5: bool, s: f32, out: &mut Vec<f32>) {
    for &b in w {
        out.push(if e5 { e5m2(b) } else { e4m3(b) } * s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    fn e4m3_known_codes() {
        assert_eq!(e4m3(0x00).to_bits(), 0.0f32.to_bits());
        assert_eq!(e4m3(0x80).to_bits(), (-0.0f32).to_bits());
        assert_eq!(e4m3(0x01), 1.0 / 512.0); // smallest subnormal 2^-9
        assert_eq!(e4m3(0x07), 7.0 / 512.0); // largest subnormal
        assert_eq!(e4m3(0x08), 1.0 / 64.0); // smallest normal 2^-6
        assert_eq!(e4m3(0x38), 1.0);
        assert_eq!(e4m3(0x3C), 1.5);
        assert_eq!(e4m3(0x7E), 448.0);
        assert_eq!(e4m3(0xFE), -448.0);
        assert_eq!(e4m3(0x78), 256.0); // e = 15, m = 0 is a number, not ∞
        assert!(e4m3(0x7F).is_nan() && e4m3(0xFF).is_nan());
    }

    #[test]
    fn every_e4m3_code() {
        for b in 0..=255u8 {
            let (v, mag) = (e4m3(b), b & 0x7F);
            if mag == 0x7F {
                assert!(v.is_nan(), "{b:#x}");
                continue;
            }
            assert!(v.is_finite() && v.abs() <= 448.0, "{b:#x}");
            assert_eq!(v.is_sign_negative(), b >= 0x80, "{b:#x}");
            assert_eq!(v.abs(), e4m3(mag), "{b:#x}: sign-magnitude");
            let (e, m) = (u32::from(mag >> 3), u32::from(mag & 7));
            let want = if e == 0 {
                m as f32 / 512.0
            } else {
                // The f32 with the same exponent (rebiased 7 → 127) and the mantissa on top.
                f32::from_bits(((e + 120) << 23) | (m << 20))
            };
            assert_eq!(v.abs(), want, "{b:#x}");
            if mag > 0 {
                assert!(e4m3(mag - 1) < e4m3(mag), "{b:#x}: increasing");
            }
        }
    }

    #[test]
    fn e5m2_known_codes() {
        assert_eq!(e5m2(0x3C), 1.0);
        assert_eq!(e5m2(0x01), 1.0 / 65536.0);
        assert_eq!(e5m2(0x7B), 57344.0);
        assert_eq!(e5m2(0x7C), f32::INFINITY);
        assert_eq!(e5m2(0xFC), f32::NEG_INFINITY);
        assert!(e5m2(0x7D).is_nan() && e5m2(0xFF).is_nan());
        assert_eq!(e5m2(0x80).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn every_e5m2_code_is_the_top_byte_of_an_f16() {
        // E5M2 has binary16's sign and exponent fields and its top two mantissa bits.
        for b in 0..=255u8 {
            let want = f16::from_bits(u16::from(b) << 8).to_f32();
            let v = e5m2(b);
            assert!(v.to_bits() == want.to_bits() || (v.is_nan() && want.is_nan()), "{b:#x}: {v} vs {want}");
        }
    }

    #[test]
    fn rows_multiply_by_the_scale() {
        let mut out = Vec::new();
        fp8_row(&[0x38, 0xC0, 0x7F], false, 0.5, &mut out);
        assert_eq!(out[..2], [0.5, -1.0]);
        assert!(out[2].is_nan());
        let mut out = Vec::new();
        fp8_row(&[0x3C, 0x7C], true, -2.0, &mut out);
        assert_eq!(out, [-2.0, f32::NEG_INFINITY]);
    }
}
