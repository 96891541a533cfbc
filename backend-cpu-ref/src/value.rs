//! Element values: the one place that knows how each dtype is stored and how a value is rounded
//! into it.
//!
//! Every element is decoded losslessly into a [`Scalar`] (floats as f64, integers as i128, Bool,
//! C64 as two f64) and encoded back by [`encode`], which applies the `Cast` rules of §2.2.6. Ops
//! compute on `Scalar`s and let `encode` do the single rounding (floats) or wrapping (integers), so
//! that no op has its own conversion code.

use crate::mem::{try_bytes, try_vec};
use backend_api::{bail, DType, Result, Tensor};
use half::{bf16, f16};

/// One element, held exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A value of a float dtype (or an intermediate result, rounded at encode).
    F(f64),
    /// A value of an integer dtype (or an intermediate result, wrapped at encode).
    I(i128),
    /// A Bool.
    B(bool),
    /// A C64 value: real and imaginary parts.
    C(f64, f64),
}

/// Copies `b[offset..offset + N]` into an array; missing bytes read as 0. Never panics: tensor
/// lengths are checked when tensors are made, so the padding never happens in practice.
fn field<const N: usize>(b: &[u8], offset: usize) -> [u8; N] {
    let mut a = [0u8; N];
    for (d, s) in a.iter_mut().zip(b.iter().skip(offset)) {
        *d = *s;
    }
    a
}

/// Decodes one element of `dtype` from its little-endian bytes.
pub fn decode(dtype: DType, b: &[u8]) -> Scalar {
    match dtype {
        DType::F32 => Scalar::F(f32::from_le_bytes(field(b, 0)) as f64),
        DType::F16 => Scalar::F(f16::from_bits(u16::from_le_bytes(field(b, 0))).to_f64()),
        DType::BF16 => Scalar::F(bf16::from_bits(u16::from_le_bytes(field(b, 0))).to_f64()),
        DType::F64 => Scalar::F(f64::from_le_bytes(field(b, 0))),
        DType::I64 => Scalar::I(i64::from_le_bytes(field(b, 0)) as i128),
        DType::I32 => Scalar::I(i32::from_le_bytes(field(b, 0)) as i128),
        DType::I8 => Scalar::I(i8::from_le_bytes(field(b, 0)) as i128),
        DType::U32 => Scalar::I(u32::from_le_bytes(field(b, 0)) as i128),
        DType::U8 => Scalar::I(u8::from_le_bytes(field(b, 0)) as i128),
        DType::Bool => Scalar::B(b.first().is_some_and(|&x| x != 0)),
        DType::C64 => {
            let re = f32::from_le_bytes(field(b, 0)) as f64;
            let im = f32::from_le_bytes(field(b, 4)) as f64;
            Scalar::C(re, im)
        }
    }
}

/// Appends `s` converted to `to` by the `Cast` rules (§2.2.6).
pub fn encode(s: Scalar, to: DType, out: &mut Vec<u8>) {
    match to {
        DType::F32 => out.extend_from_slice(&(to_float(s, to) as f32).to_le_bytes()),
        // The value is already rounded to the format, so these conversions are exact whatever
        // path `half` takes internally.
        DType::F16 => out.extend_from_slice(&f16::from_f64(to_float(s, to)).to_bits().to_le_bytes()),
        DType::BF16 => out.extend_from_slice(&bf16::from_f64(to_float(s, to)).to_bits().to_le_bytes()),
        DType::F64 => out.extend_from_slice(&to_float(s, to).to_le_bytes()),
        DType::I64 => out.extend_from_slice(&(to_int(s, to) as i64).to_le_bytes()),
        DType::I32 => out.extend_from_slice(&(to_int(s, to) as i32).to_le_bytes()),
        DType::I8 => out.extend_from_slice(&(to_int(s, to) as i8).to_le_bytes()),
        DType::U32 => out.extend_from_slice(&(to_int(s, to) as u32).to_le_bytes()),
        DType::U8 => out.extend_from_slice(&(to_int(s, to) as u8).to_le_bytes()),
        DType::Bool => out.push(to_bool(s) as u8),
        DType::C64 => {
            let (re, im) = to_c64(s);
            out.extend_from_slice(&re.to_le_bytes());
            out.extend_from_slice(&im.to_le_bytes());
        }
    }
}

/// `s` as a value of the float dtype `to` (held in an f64), rounded once.
pub fn to_float(s: Scalar, to: DType) -> f64 {
    match s {
        Scalar::F(x) | Scalar::C(x, _) => round_float(x, to),
        Scalar::I(i) => round_float(round_int(i, precision(to)), to),
        Scalar::B(b) => b as u8 as f64,
    }
}

/// `s` as a value of the integer dtype `to`: floats truncate and saturate (NaN → 0), integers wrap.
pub fn to_int(s: Scalar, to: DType) -> i128 {
    let (lo, hi) = int_bounds(to);
    match s {
        // `as i128` truncates toward zero, saturates, and maps NaN to 0.
        Scalar::F(x) | Scalar::C(x, _) => (x as i128).clamp(lo, hi),
        Scalar::I(i) => wrap(i, to),
        Scalar::B(b) => b as i128,
    }
}

/// `s` as a Bool: non-zero is true (NaN is non-zero; C64 is true when either part is non-zero).
pub fn to_bool(s: Scalar) -> bool {
    match s {
        Scalar::F(x) => x != 0.0,
        Scalar::I(i) => i != 0,
        Scalar::B(b) => b,
        Scalar::C(re, im) => re != 0.0 || im != 0.0,
    }
}

/// `s` as a C64: a real value becomes the real part (converted to F32), with imaginary part +0.
pub fn to_c64(s: Scalar) -> (f32, f32) {
    match s {
        Scalar::C(re, im) => (re as f32, im as f32),
        real => (to_float(real, DType::F32) as f32, 0.0),
    }
}

/// Keeps the low bits of `i` as the two's-complement (or unsigned) value of `dtype`. Non-integer
/// dtypes leave `i` unchanged.
pub fn wrap(i: i128, dtype: DType) -> i128 {
    match dtype {
        DType::I64 => i as i64 as i128,
        DType::I32 => i as i32 as i128,
        DType::I8 => i as i8 as i128,
        DType::U32 => i as u32 as i128,
        DType::U8 => i as u8 as i128,
        DType::F32 | DType::F16 | DType::BF16 | DType::F64 | DType::Bool | DType::C64 => i,
    }
}

/// `[MIN, MAX]` of an integer dtype (Bool: `[0, 1]`; others: the whole i128 range).
pub fn int_bounds(dtype: DType) -> (i128, i128) {
    match dtype {
        DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::I8 => (i8::MIN as i128, i8::MAX as i128),
        DType::U32 => (0, u32::MAX as i128),
        DType::U8 => (0, u8::MAX as i128),
        DType::Bool => (0, 1),
        DType::F32 | DType::F16 | DType::BF16 | DType::F64 | DType::C64 => (i128::MIN, i128::MAX),
    }
}

/// Significand bits (implicit bit included) of a float dtype; C64 parts are F32.
fn precision(dtype: DType) -> u32 {
    match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F32 | DType::C64 => 24,
        _ => 53,
    }
}

/// `2^n` for `-1022 <= n <= 1023`, built from its bits (exact).
fn pow2(n: i32) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// Rounds `x` to nearest, ties to even, into a binary format with `frac` stored fraction bits and
/// normal exponents `[emin, emax]`, subnormals included; overflow gives ±∞. One rounding from the
/// exact value of `x`, which is what §1.7 asks of F64→F16 (no detour through F32).
pub fn round_to_format(x: f64, frac: i32, emin: i32, emax: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let a = x.abs();
    // floor(log2 a) for normal f64; f64 subnormals are far below every target's range.
    let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
    if e > emax {
        return f64::INFINITY.copysign(x);
    }
    let ulp = pow2(e - frac);
    // Scaling by a power of two is exact, so `q` is the exact value in units of the target ulp.
    let q = (a / ulp).round_ties_even();
    let r = q * ulp;
    if r >= pow2(emax + 1) {
        return f64::INFINITY.copysign(x);
    }
    r.copysign(x)
}

/// `x` rounded to the float dtype `to` (F64: unchanged; non-float dtypes: unchanged).
pub fn round_float(x: f64, to: DType) -> f64 {
    match to {
        // Rust's `as f32` rounds to nearest, ties to even, overflowing to ±∞.
        DType::F32 | DType::C64 => x as f32 as f64,
        DType::F16 => round_to_format(x, 10, -14, 15),
        DType::BF16 => round_to_format(x, 7, -126, 127),
        _ => x,
    }
}

/// The integer `i` rounded to `p` significant bits (nearest, ties to even), as an exact f64.
/// With `round_float` afterwards this is a single rounding of the integer (§2.2.6).
pub fn round_int(i: i128, p: u32) -> f64 {
    let mag = i.unsigned_abs();
    let bits = 128 - mag.leading_zeros();
    let r = if bits <= p {
        mag
    } else {
        let shift = bits - p;
        let q = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let q = if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q };
        q << shift
    };
    // `r` has at most `p <= 53` significant bits, so this conversion is exact.
    let f = r as f64;
    if i < 0 {
        -f
    } else {
        f
    }
}

/// Every element of `t`, decoded (into fallibly reserved memory: a `Capacity` error, not an
/// abort, when the allocator refuses).
pub fn scalars(t: &Tensor) -> Result<Vec<Scalar>> {
    let d = t.dtype();
    let chunks = t.bytes().chunks_exact(d.size());
    let mut v = try_vec(chunks.len())?;
    v.extend(chunks.map(|b| decode(d, b)));
    Ok(v)
}

/// A tensor of `dtype` and `shape` holding `values` encoded by the `Cast` rules.
pub fn from_scalars(dtype: DType, shape: &[usize], values: &[Scalar]) -> Result<Tensor> {
    let mut data = try_bytes(dtype, &[values.len()])?;
    for &v in values {
        encode(v, dtype, &mut data);
    }
    Tensor::from_bytes(dtype, shape, data)
}

/// Every element of a float tensor as f64; a `DType` error for other dtypes.
pub fn floats(t: &Tensor, what: &str) -> Result<Vec<f64>> {
    if !t.dtype().is_float() {
        bail!(DType, "{what} must be a float tensor, got {}{:?}", t.dtype(), t.shape());
    }
    Ok(scalars(t)?
        .into_iter()
        .map(|s| match s {
            Scalar::F(x) => x,
            Scalar::I(_) | Scalar::B(_) | Scalar::C(_, _) => f64::NAN,
        })
        .collect())
}

/// A float tensor from f64 values, each rounded once to `dtype`.
pub fn from_floats(dtype: DType, shape: &[usize], values: &[f64]) -> Result<Tensor> {
    if !dtype.is_float() {
        bail!(DType, "expected a float output dtype, got {dtype}");
    }
    let mut data = try_bytes(dtype, &[values.len()])?;
    for &v in values {
        encode(Scalar::F(v), dtype, &mut data);
    }
    Tensor::from_bytes(dtype, shape, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: Scalar, to: DType) -> Vec<u8> {
        let mut v = Vec::new();
        encode(s, to, &mut v);
        v
    }

    fn f16_bits(x: f64) -> u16 {
        u16::from_le_bytes(field(&enc(Scalar::F(x), DType::F16), 0))
    }

    fn bf16_bits(x: f64) -> u16 {
        u16::from_le_bytes(field(&enc(Scalar::F(x), DType::BF16), 0))
    }

    #[test]
    fn every_f16_value_round_trips() {
        for bits in 0..=u16::MAX {
            let h = f16::from_bits(bits);
            if h.is_nan() {
                continue;
            }
            assert_eq!(f16_bits(h.to_f64()), bits, "f16 bits {bits:#06x}");
        }
    }

    #[test]
    fn every_bf16_value_round_trips() {
        for bits in 0..=u16::MAX {
            let h = bf16::from_bits(bits);
            if h.is_nan() {
                continue;
            }
            assert_eq!(bf16_bits(h.to_f64()), bits, "bf16 bits {bits:#06x}");
        }
    }

    /// `half`'s f32 → f16/bf16 conversions round to nearest even in one step (unlike its f64
    /// ones), so on f32-representable inputs they are an independent oracle for ours.
    fn agrees_with_half_from_f32(x: f32) {
        if x.is_nan() {
            return;
        }
        assert_eq!(f16_bits(x as f64), f16::from_f32(x).to_bits(), "f16 of {x:e} ({:#010x})", x.to_bits());
        assert_eq!(bf16_bits(x as f64), bf16::from_f32(x).to_bits(), "bf16 of {x:e} ({:#010x})", x.to_bits());
    }

    #[test]
    fn matches_single_step_f32_conversions() {
        for bits in (0..=u32::MAX).step_by(4099) {
            agrees_with_half_from_f32(f32::from_bits(bits));
        }
        // Every midpoint between neighbouring finite f16 / bf16 values (exact ties), and its f32
        // neighbours, up to and including the overflow boundary.
        let pairs = (0..0x7c00u16)
            .map(|b| (f16::from_bits(b).to_f64(), f16::from_bits(b + 1).to_f64()))
            .chain((0..0x7f80u16).map(|b| (bf16::from_bits(b).to_f64(), bf16::from_bits(b + 1).to_f64())));
        for (lo, hi) in pairs {
            let mid = ((lo + hi) / 2.0) as f32;
            for x in [mid, mid.next_up(), mid.next_down(), -mid, -mid.next_up()] {
                agrees_with_half_from_f32(x);
            }
        }
    }

    #[test]
    fn f16_ties_round_to_even() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (odd): to even, 1.
        assert_eq!(f16_bits(1.0 + pow2(-11)), 0x3c00);
        // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
        assert_eq!(f16_bits(1.0 + 3.0 * pow2(-11)), 0x3c02);
        // 65504 is the max; 65520 is the tie with 65536 (even) and overflows; just below stays.
        assert_eq!(f16_bits(65519.99), 0x7bff);
        assert_eq!(f16_bits(65520.0), 0x7c00);
        assert_eq!(f16_bits(-65520.0), 0xfc00);
        // Smallest subnormal 2^-24; half of it ties to 0 (even), slightly more rounds up.
        assert_eq!(f16_bits(pow2(-25)), 0x0000);
        assert_eq!(f16_bits(-pow2(-25)), 0x8000);
        assert_eq!(f16_bits(pow2(-25) * 1.0001), 0x0001);
        assert_eq!(f16_bits(3.0 * pow2(-25)), 0x0002);
    }

    #[test]
    fn f64_to_f16_is_a_single_rounding() {
        // Via f32 this would first round to the tie 1 + 2^-11 and then to 1.0; the exact value is
        // above the tie, so the single rounding gives 1 + 2^-10.
        let x = 1.0 + pow2(-11) + pow2(-40);
        assert_eq!(x as f32 as f64, 1.0 + pow2(-11));
        assert_eq!(f16_bits(x), 0x3c01);
    }

    #[test]
    fn f64_to_bf16_is_a_single_rounding() {
        // Halfway between 1 and 1 + 2^-7 plus a bit below f32 precision: rounds up.
        let x = 1.0 + pow2(-8) + pow2(-40);
        assert_eq!(bf16_bits(x), 0x3f81);
        assert_eq!(bf16_bits(1.0 + pow2(-8)), 0x3f80);
        assert_eq!(bf16_bits(1.0 + 3.0 * pow2(-8)), 0x3f82);
        assert_eq!(bf16_bits(f64::MAX), 0x7f80);
        assert_eq!(bf16_bits(-3.5e38), 0xff80);
        assert!(bf16::from_bits(bf16_bits(f64::NAN)).is_nan());
    }

    #[test]
    fn float_to_int_truncates_and_saturates() {
        assert_eq!(to_int(Scalar::F(f64::NAN), DType::I32), 0);
        assert_eq!(to_int(Scalar::F(-2.9), DType::I32), -2);
        assert_eq!(to_int(Scalar::F(2.9), DType::I8), 2);
        assert_eq!(to_int(Scalar::F(300.0), DType::I8), 127);
        assert_eq!(to_int(Scalar::F(-300.0), DType::I8), -128);
        assert_eq!(to_int(Scalar::F(-5.0), DType::U8), 0);
        assert_eq!(to_int(Scalar::F(f64::INFINITY), DType::I64), i64::MAX as i128);
        assert_eq!(to_int(Scalar::F(f64::NEG_INFINITY), DType::I64), i64::MIN as i128);
        assert_eq!(to_int(Scalar::F(9.3e18), DType::I64), i64::MAX as i128);
        assert_eq!(to_int(Scalar::F(f64::INFINITY), DType::U32), u32::MAX as i128);
        assert_eq!(to_int(Scalar::F(-0.0), DType::U32), 0);
    }

    #[test]
    fn int_to_int_wraps() {
        assert_eq!(to_int(Scalar::I(300), DType::U8), 44);
        assert_eq!(to_int(Scalar::I(-1), DType::U32), u32::MAX as i128);
        assert_eq!(to_int(Scalar::I(200), DType::I8), -56);
        assert_eq!(to_int(Scalar::I(u32::MAX as i128), DType::I32), -1);
        assert_eq!(to_int(Scalar::I(-1), DType::I64), -1);
    }

    #[test]
    fn int_to_float_rounds_once() {
        // 2^24 + 1 ties to 2^24 (even), 2^24 + 3 to 2^24 + 4.
        assert_eq!(to_float(Scalar::I((1 << 24) + 1), DType::F32), 16777216.0);
        assert_eq!(to_float(Scalar::I((1 << 24) + 3), DType::F32), 16777220.0);
        // i64 2^62 + 2^38 + 1: through f64 it would first become the tie 2^62 + 2^38 and then
        // round to even (2^62); the single rounding sees the +1 and goes up to 2^62 + 2^39.
        let i = (1i128 << 62) + (1 << 38) + 1;
        assert_eq!(to_float(Scalar::I(i), DType::F32), (2f64).powi(62) + (2f64).powi(39));
        assert_eq!(to_float(Scalar::I(70000), DType::F16), f64::INFINITY);
        assert_eq!(to_float(Scalar::I(-70000), DType::F16), f64::NEG_INFINITY);
        assert_eq!(to_float(Scalar::I(65519), DType::F16), 65504.0);
        assert_eq!(to_float(Scalar::I(2049), DType::F16), 2048.0);
        assert_eq!(to_float(Scalar::I(2051), DType::F16), 2052.0);
        assert_eq!(to_float(Scalar::I(257), DType::BF16), 256.0);
        assert_eq!(to_float(Scalar::I(i64::MAX as i128), DType::F64), 9223372036854775808.0);
    }

    #[test]
    fn bool_and_c64_rules() {
        assert!(to_bool(Scalar::F(f64::NAN)));
        assert!(!to_bool(Scalar::F(-0.0)));
        assert!(to_bool(Scalar::C(0.0, 1.0)));
        assert!(!to_bool(Scalar::C(0.0, -0.0)));
        assert_eq!(to_c64(Scalar::I(3)), (3.0, 0.0));
        assert_eq!(to_c64(Scalar::B(true)), (1.0, 0.0));
        assert_eq!(to_int(Scalar::C(-7.9, 100.0), DType::I32), -7);
        assert_eq!(to_float(Scalar::B(true), DType::BF16), 1.0);
        assert_eq!(decode(DType::Bool, &[7]), Scalar::B(true));
    }
}
