//! Weight inputs for every format of §2.6.7, drawn over the whole code space: codes are uniform
//! bytes (every nibble, every FP8/E2M1 code), scales are drawn bit by bit over a wide exponent
//! range (f16 subnormals included), and at the case's special rate a scale is any bit pattern at
//! all (NaN, ±∞, huge) and an FP8 NaN/∞ code is kept rather than made finite.

use crate::rng::Rng;
use backend_api::op::QuantFormat;
use backend_api::{DType, Result, Tensor};

/// `n` uniform bytes.
fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| (rng.next_u64() >> 56) as u8).collect()
}

/// An f16 bit pattern: at `rate` any pattern; else a random sign and mantissa with the exponent
/// field in 0..=17 (subnormals up to 2^2).
fn f16_bits(rng: &mut Rng, rate: f64) -> u16 {
    if rng.chance(rate) {
        return (rng.next_u64() >> 48) as u16;
    }
    let (s, e, m) = (rng.below(2) as u16, rng.int_in(0, 17) as u16, rng.below(1024) as u16);
    (s << 15) | (e << 10) | m
}

/// An f32 bit pattern: at `rate` a special (±0, ±∞, NaN, the smallest subnormal); else a random
/// sign and mantissa with a value in [2^−20, 2^4).
fn f32_bits(rng: &mut Rng, rate: f64) -> u32 {
    if rng.chance(rate) {
        return rng.pick(&[0u32, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 1]);
    }
    let (s, e, m) = (rng.below(2) as u32, rng.int_in(107, 130) as u32, (rng.next_u64() >> 41) as u32);
    (s << 31) | (e << 23) | m
}

/// A scale tensor of `shape` in `dtype` (F32 or F16).
fn scales(rng: &mut Rng, dtype: DType, shape: &[usize], rate: f64) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let data: Vec<u8> = match dtype {
        DType::F16 => (0..n).flat_map(|_| f16_bits(rng, rate).to_le_bytes()).collect(),
        _ => (0..n).flat_map(|_| f32_bits(rng, rate).to_le_bytes()).collect(),
    };
    Tensor::from_bytes(dtype, shape, data)
}

/// Asymmetric zero points: integers and fractions over the code range and a little past it.
fn zeros(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|_| {
            let z = rng.uniform(-140.0, 270.0);
            if rng.chance(0.5) {
                z.round() as f32
            } else {
                z as f32
            }
        })
        .collect();
    match dtype {
        DType::F16 => Tensor::from_slice(shape, &v.iter().map(|&z| half::f16::from_f32(z)).collect::<Vec<_>>()),
        _ => Tensor::from_slice(shape, &v),
    }
}

/// FP8 codes: uniform bytes, with NaN/∞ codes (exponent field all ones) made finite unless kept
/// at `rate`.
fn fp8_codes(rng: &mut Rng, n: usize, e5: bool, rate: f64) -> Vec<u8> {
    let top = |b: u8| if e5 { b & 0x7C == 0x7C } else { b & 0x7F == 0x7F };
    bytes(rng, n).into_iter().map(|b| if top(b) && !rng.chance(rate) { b & 0xBF } else { b }).collect()
}

/// The weight inputs of `format` for `W[N, K]`, with a leading `lead` shape (`[E]` for the
/// grouped op, `[]` otherwise). `rate` is the special-value rate of scales and FP8 codes.
pub fn weights(
    rng: &mut Rng,
    format: QuantFormat,
    lead: &[usize],
    [n, k]: [usize; 2],
    rate: f64,
) -> Result<Vec<Tensor>> {
    let shape = |tail: &[usize]| [lead, tail].concat();
    let count = |tail: &[usize]| shape(tail).iter().product::<usize>();
    let sdt = if rng.chance(0.5) { DType::F16 } else { DType::F32 };
    let u8s = |rng: &mut Rng, tail: &[usize]| Tensor::from_bytes(DType::U8, &shape(tail), bytes(rng, count(tail)));
    Ok(match format {
        QuantFormat::Int8Block { block_size } => {
            let w = Tensor::from_bytes(DType::I8, &shape(&[n, k]), bytes(rng, count(&[n, k])))?;
            vec![w, scales(rng, sdt, &shape(&[n, k.div_ceil(block_size as usize)]), rate)?]
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            let wdt = if rng.chance(0.5) { DType::U8 } else { DType::I8 };
            let w = Tensor::from_bytes(wdt, &shape(&[n, k]), bytes(rng, count(&[n, k])))?;
            let sh = shape(&[n, k.div_ceil(block_size as usize)]);
            vec![w, scales(rng, sdt, &sh, rate)?, zeros(rng, sdt, &sh)?]
        }
        QuantFormat::Int4Block { block_size } => {
            vec![u8s(rng, &[n, k.div_ceil(2)])?, scales(rng, sdt, &shape(&[n, k.div_ceil(block_size as usize)]), rate)?]
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            let codes = fp8_codes(rng, count(&[n, k]), format == QuantFormat::Fp8E5m2, rate);
            let w = Tensor::from_bytes(DType::U8, &shape(&[n, k]), codes)?;
            let per_row: &[usize] = if rng.chance(0.5) { &[n] } else { &[] };
            vec![w, scales(rng, DType::F32, &shape(per_row), rate)?]
        }
        QuantFormat::Nvfp4 => {
            // Block scales as quantisers write them (non-negative, finite), any byte at `rate`.
            let bs: Vec<u8> = bytes(rng, count(&[n, k / 16]))
                .into_iter()
                .map(|b| if rng.chance(rate) { b } else { b % 0x7F })
                .collect();
            let bs = Tensor::from_bytes(DType::U8, &shape(&[n, k / 16]), bs)?;
            vec![u8s(rng, &[n, k / 2])?, bs, scales(rng, DType::F32, &shape(&[]), rate)?]
        }
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => vec![ggml_weight(rng, format, &shape, [n, k], rate)?],
    })
}

/// Byte offsets of a GGML block's f16 scale fields (`d`, and `dmin` or `m`); Q8_K's `d` is f32.
fn scale_fields(format: QuantFormat) -> &'static [usize] {
    match format {
        QuantFormat::Q4_0 | QuantFormat::Q5_0 | QuantFormat::Q8_0 => &[0],
        QuantFormat::Q4_1 | QuantFormat::Q5_1 | QuantFormat::Q4_K | QuantFormat::Q5_K => &[0, 2],
        QuantFormat::Q2_K => &[80, 82],
        QuantFormat::Q3_K => &[108],
        QuantFormat::Q6_K => &[208],
        QuantFormat::Int8Block { .. }
        | QuantFormat::Int8BlockAsym { .. }
        | QuantFormat::Int4Block { .. }
        | QuantFormat::Fp8E4m3
        | QuantFormat::Fp8E5m2
        | QuantFormat::Nvfp4
        | QuantFormat::Q8_K => &[],
    }
}

/// A GGML weight: uniform bytes with every block's scale fields redrawn as scales.
fn ggml_weight(
    rng: &mut Rng,
    format: QuantFormat,
    shape: &dyn Fn(&[usize]) -> Vec<usize>,
    [n, k]: [usize; 2],
    rate: f64,
) -> Result<Tensor> {
    let Some((qk, bb)) = format.ggml_block() else {
        backend_api::bail!(Attribute, "{} is not a GGML block format", format.name());
    };
    let sh = shape(&[n, k / qk * bb]);
    let mut data = bytes(rng, sh.iter().product());
    for block in data.chunks_exact_mut(bb) {
        for &o in scale_fields(format) {
            block[o..o + 2].copy_from_slice(&f16_bits(rng, rate).to_le_bytes());
        }
        if format == QuantFormat::Q8_K {
            block[..4].copy_from_slice(&f32_bits(rng, rate).to_le_bytes());
        }
    }
    Tensor::from_bytes(DType::U8, &sh, data)
}
