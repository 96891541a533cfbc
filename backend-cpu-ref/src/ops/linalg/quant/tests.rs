//! QuantMatMul and QuantGroupedMatMul against hand-computed cases, against MatMul on the decoded
//! weights (for every format), and on their edge cases and errors.

use super::{quant_grouped_matmul, quant_matmul, weights};
use crate::ops::linalg::matmul;
use backend_api::op::QuantFormat;
use backend_api::{DType, ErrorKind, Tensor};
use half::{bf16, f16};

fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}
fn u8s(shape: &[usize], v: &[u8]) -> Tensor {
    Tensor::from_bytes(DType::U8, shape, v.to_vec()).unwrap()
}
fn ids(v: &[i32]) -> Tensor {
    Tensor::from_slice(&[v.len()], v).unwrap()
}
fn f32v(y: &Tensor) -> Vec<f32> {
    y.to_vec::<f32>().unwrap()
}

/// Deterministic bytes (a 64-bit LCG's top byte), so every test sees the same "random" weights.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 56) as u8
        })
        .collect()
}

/// Weight inputs of `format` for `[N, K]`: codes from `bytes` (every nibble and code value occurs
/// for these sizes); scales finite (so the MatMul comparison is of numbers), F16 when `half`.
fn weights_for(format: QuantFormat, n: usize, k: usize, half: bool, seed: u64) -> Vec<Tensor> {
    let scale = |nb: usize| {
        let v: Vec<f32> = (0..n * nb).map(|i| (i % 7) as f32 * 0.25 - 0.75).collect();
        if half {
            let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
            Tensor::from_slice(&[n, nb], &h).unwrap()
        } else {
            t(&[n, nb], &v)
        }
    };
    match format {
        QuantFormat::Int8Block { block_size } => {
            let w = Tensor::from_bytes(DType::I8, &[n, k], bytes(n * k, seed)).unwrap();
            vec![w, scale(k.div_ceil(block_size as usize))]
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            let nb = k.div_ceil(block_size as usize);
            vec![u8s(&[n, k], &bytes(n * k, seed)), scale(nb), scale(nb)]
        }
        QuantFormat::Int4Block { block_size } => {
            vec![u8s(&[n, k.div_ceil(2)], &bytes(n * k.div_ceil(2), seed)), scale(k.div_ceil(block_size as usize))]
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            // Finite codes only: clear the exponent's top bit.
            let w: Vec<u8> = bytes(n * k, seed).iter().map(|b| b & 0xBF).collect();
            vec![u8s(&[n, k], &w), t(&[n], &(0..n).map(|i| i as f32 - 0.5).collect::<Vec<_>>())]
        }
        QuantFormat::Nvfp4 => {
            let bs: Vec<u8> = bytes(n * k / 16, seed + 1).iter().map(|b| b & 0x3F).collect();
            vec![u8s(&[n, k / 2], &bytes(n * k / 2, seed)), u8s(&[n, k / 16], &bs), Tensor::scalar(0.75f32)]
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
        | QuantFormat::Q8_K => {
            let (qk, bb) = format.ggml_block().unwrap();
            let mut w = bytes(n * k / qk * bb, seed);
            // Finite f16/f32 scale fields: clear bit 6 of every block's last byte of each field.
            for block in w.chunks_exact_mut(bb) {
                let fields: &[usize] = match format {
                    QuantFormat::Q2_K => &[81, 83],
                    QuantFormat::Q3_K => &[109],
                    QuantFormat::Q6_K => &[209],
                    QuantFormat::Q8_K => &[3],
                    QuantFormat::Q4_1 | QuantFormat::Q5_1 | QuantFormat::Q4_K | QuantFormat::Q5_K => &[1, 3],
                    _ => &[1],
                };
                for &i in fields {
                    block[i] &= 0xBF;
                }
            }
            vec![u8s(&[n, w.len() / n], &w)]
        }
    }
}

/// `W` decoded by the oracle's decoders, as a `[K, N]` f32 tensor for MatMul.
fn decoded_transposed(format: QuantFormat, ws: &[Tensor], n: usize, k: usize) -> Tensor {
    let views: Vec<_> = ws.iter().map(|t| t.view()).collect();
    let (rows, w) = weights::decode(format, &views, k, "test").unwrap();
    assert_eq!(rows, n);
    let wt: Vec<f32> = (0..k * n).map(|i| w[(i % n) * k + i / n]).collect();
    t(&[k, n], &wt)
}

fn with_x(x: &Tensor, ws: &[Tensor]) -> Vec<Tensor> {
    std::iter::once(x.clone()).chain(ws.iter().cloned()).collect()
}
fn refs(v: &[Tensor]) -> Vec<&Tensor> {
    v.iter().collect()
}

/// Every format, with the block sizes of the scale formats not dividing K where allowed.
fn formats() -> Vec<QuantFormat> {
    let mut v = QuantFormat::ALL.to_vec();
    v.extend([
        QuantFormat::Int8Block { block_size: 1 },
        QuantFormat::Int8BlockAsym { block_size: 5 },
        QuantFormat::Int4Block { block_size: 3 },
        QuantFormat::Int8Block { block_size: 1000 },
    ]);
    v
}

fn k_for(format: QuantFormat) -> usize {
    match format.ggml_block() {
        Some((qk, _)) => 2 * qk,
        None if matches!(format, QuantFormat::Nvfp4) => 48,
        None => 37,
    }
}

#[test]
fn every_format_equals_matmul_on_the_decoded_weights() {
    for format in formats() {
        for half in [false, true] {
            let (m, n, k) = (3, 4, k_for(format));
            let ws = weights_for(format, n, k, half, 7);
            let xv: Vec<f32> = (0..m * k).map(|i| ((i * 37) % 11) as f32 * 0.125 - 0.5).collect();
            let x = t(&[m, k], &xv);
            let y = quant_matmul(&refs(&with_x(&x, &ws)), format).unwrap();
            assert_eq!(y.shape(), &[m, n]);
            let want = matmul(&x, &decoded_transposed(format, &ws, n, k)).unwrap();
            assert_eq!(f32v(&y), f32v(&want), "{format:?} half scales {half}");
        }
    }
}

#[test]
fn q4_0_by_hand_and_leading_dims() {
    // One row (N = 1), K = 32, d = 0.5, every byte 0x9A: elements 0..16 are nibble 10 (→ 1),
    // 16..32 nibble 9 (→ 0.5). x [2, 1, 32]: all ones, then ones on the second half only.
    let mut blk = vec![0x00, 0x38];
    blk.extend([0x9A; 16]);
    let w = u8s(&[1, 18], &blk);
    let mut xv = vec![1.0; 32];
    xv.extend((0..32).map(|i| if i < 16 { 0.0 } else { 1.0 }));
    let y = quant_matmul(&[&t(&[2, 1, 32], &xv), &w], QuantFormat::Q4_0).unwrap();
    assert_eq!(y.shape(), &[2, 1, 1]);
    assert_eq!(f32v(&y), [24.0, 8.0]);
}

#[test]
fn half_x_gives_half_output_and_accumulates_wide() {
    // Int8Block, B = 4, scale 1: w = [64, 1, 1, 1], x = [32, 1, 1, 0]: 2048 + 1 + 1 = 2050, exact
    // in f16 (an f16 accumulator would round 2048 + 1 back to 2048 twice); bf16 rounds the single
    // result to 2048.
    let w = Tensor::from_bytes(DType::I8, &[1, 4], vec![64, 1, 1, 1]).unwrap();
    let s = t(&[1, 1], &[1.0]);
    let fmt = QuantFormat::Int8Block { block_size: 4 };
    let xh = Tensor::from_slice(&[1, 4], &[32.0f32, 1.0, 1.0, 0.0].map(f16::from_f32)).unwrap();
    let y = quant_matmul(&[&xh, &w, &s], fmt).unwrap();
    assert_eq!(y.dtype(), DType::F16);
    assert_eq!(y.to_vec::<f16>().unwrap(), [f16::from_f32(2050.0)]);
    let xb = Tensor::from_slice(&[1, 4], &[32.0f32, 1.0, 1.0, 0.0].map(bf16::from_f32)).unwrap();
    let y = quant_matmul(&[&xb, &w, &s], fmt).unwrap();
    assert_eq!(y.dtype(), DType::BF16);
    assert_eq!(y.to_vec::<bf16>().unwrap(), [bf16::from_f32(2048.0)]);
}

#[test]
fn fp8_scales_per_tensor_and_per_row_and_nan_propagates() {
    // E4M3 0x38 = 1, 0x40 = 2, 0x7F = NaN; E5M2 0x7C = +∞.
    let w = u8s(&[2, 2], &[0x38, 0x40, 0x7F, 0x38]);
    let x = t(&[1, 2], &[1.0, 1.0]);
    let y = quant_matmul(&[&x, &w, &Tensor::scalar(0.5f32)], QuantFormat::Fp8E4m3).unwrap();
    let v = f32v(&y);
    assert_eq!(v[0], 1.5);
    assert!(v[1].is_nan());
    let y = quant_matmul(&[&x, &w, &t(&[2], &[2.0, 0.0])], QuantFormat::Fp8E4m3).unwrap();
    assert_eq!(f32v(&y)[0], 6.0);
    let w5 = u8s(&[1, 2], &[0x7C, 0x3C]);
    let y = quant_matmul(&[&x, &w5, &Tensor::scalar(1.0f32)], QuantFormat::Fp8E5m2).unwrap();
    assert_eq!(f32v(&y), [f32::INFINITY]);
}

#[test]
fn empty_edges() {
    let fmt = QuantFormat::Int8Block { block_size: 2 };
    let w0 = Tensor::from_bytes(DType::I8, &[3, 0], vec![]).unwrap();
    // K = 0: zeros (nb = 0 scales per row).
    let y = quant_matmul(&[&t(&[2, 0], &[]), &w0, &t(&[3, 0], &[])], fmt).unwrap();
    assert_eq!((y.shape(), f32v(&y)), (&[2usize, 3][..], vec![0.0; 6]));
    // N = 0 and M = 0: empty.
    let wn = Tensor::from_bytes(DType::I8, &[0, 2], vec![]).unwrap();
    let y = quant_matmul(&[&t(&[2, 2], &[1.0; 4]), &wn, &t(&[0, 1], &[])], fmt).unwrap();
    assert_eq!(y.shape(), &[2, 0]);
    let y = quant_matmul(&[&t(&[0, 32], &[]), &u8s(&[1, 18], &[0; 18])], QuantFormat::Q4_0).unwrap();
    assert_eq!(y.shape(), &[0, 1]);
}

#[test]
fn bad_weights_are_errors_of_the_right_kind() {
    let x = t(&[1, 32], &[0.0; 32]);
    let kind = |ins: &[&Tensor], f| quant_matmul(ins, f).unwrap_err().kind();
    // A Q4_0 row of 17 bytes instead of 18.
    let e = quant_matmul(&[&x, &u8s(&[1, 17], &[0; 17])], QuantFormat::Q4_0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    assert!(e.message().contains("Q4_0") && e.message().contains("[1, 17]"), "{e}");
    // K not a multiple of the block.
    let x8 = t(&[1, 8], &[0.0; 8]);
    assert_eq!(kind(&[&x8, &u8s(&[1, 4], &[0; 4])], QuantFormat::Q8_0), ErrorKind::Shape);
    let nv = [&x8, &u8s(&[1, 4], &[0; 4]), &u8s(&[1, 0], &[]), &Tensor::scalar(1.0f32)];
    assert_eq!(kind(&nv, QuantFormat::Nvfp4), ErrorKind::Shape);
    // Block size 0, a scale of the wrong dtype or shape, a missing input, an integer x.
    let w = Tensor::from_bytes(DType::I8, &[1, 32], vec![0; 32]).unwrap();
    let s = t(&[1, 1], &[1.0]);
    assert_eq!(kind(&[&x, &w, &s], QuantFormat::Int8Block { block_size: 0 }), ErrorKind::Attribute);
    let bad = Tensor::from_slice(&[1, 1], &[bf16::ONE]).unwrap();
    assert_eq!(kind(&[&x, &w, &bad], QuantFormat::Int8Block { block_size: 32 }), ErrorKind::DType);
    assert_eq!(kind(&[&x, &w, &t(&[1, 2], &[1.0; 2])], QuantFormat::Int8Block { block_size: 32 }), ErrorKind::Shape);
    assert_eq!(kind(&[&x, &w], QuantFormat::Int8BlockAsym { block_size: 32 }), ErrorKind::Arity);
    let xi = Tensor::from_slice(&[1, 32], &[0i32; 32]).unwrap();
    assert_eq!(kind(&[&xi, &w, &s], QuantFormat::Int8Block { block_size: 32 }), ErrorKind::DType);
    // Asym zero of another dtype than its scale.
    let zh = Tensor::from_slice(&[1, 1], &[f16::ZERO]).unwrap();
    let wu = u8s(&[1, 32], &[0; 32]);
    assert_eq!(kind(&[&x, &wu, &s, &zh], QuantFormat::Int8BlockAsym { block_size: 32 }), ErrorKind::DType);
}

/// `e` experts' weights of `format` (F16 scales where the format has a choice), each weight input
/// stacked on a leading `E`; also the per-expert inputs.
fn stacked(format: QuantFormat, n: usize, k: usize, e: usize) -> (Vec<Tensor>, Vec<Vec<Tensor>>) {
    let per: Vec<Vec<Tensor>> = (0..e).map(|i| weights_for(format, n, k, true, 11 + i as u64)).collect();
    let stacked = (0..format.num_weight_inputs())
        .map(|j| {
            let first = &per[0][j];
            let mut shape = vec![e];
            shape.extend_from_slice(first.shape());
            let data: Vec<u8> = per.iter().flat_map(|p| p[j].bytes().to_vec()).collect();
            Tensor::from_bytes(first.dtype(), &shape, data).unwrap()
        })
        .collect();
    (stacked, per)
}

#[test]
fn grouped_rows_use_their_expert_and_out_of_range_rows_are_zero() {
    for format in
        [QuantFormat::Q4_K, QuantFormat::Int4Block { block_size: 3 }, QuantFormat::Nvfp4, QuantFormat::Fp8E5m2]
    {
        let (m, n, k) = (5, 3, k_for(format));
        let (ws, per) = stacked(format, n, k, 2);
        let xv: Vec<f32> = (0..m * k).map(|i| ((i * 13) % 9) as f32 * 0.25 - 1.0).collect();
        let x = t(&[m, k], &xv);
        let expert = ids(&[1, 0, -1, 2, -3]);
        let mut ins = with_x(&x, &ws);
        ins.push(expert);
        let y = quant_grouped_matmul(&refs(&ins), format).unwrap();
        assert_eq!(y.shape(), &[m, n]);
        let got = f32v(&y);
        for (row, ex) in [(0, Some(1)), (1, Some(0)), (2, Some(1)), (3, None), (4, None)] {
            let want = match ex {
                Some(e) => {
                    let xr = t(&[1, k], &xv[row * k..(row + 1) * k]);
                    f32v(&quant_matmul(&refs(&with_x(&xr, &per[e])), format).unwrap())
                }
                None => vec![0.0; n],
            };
            assert_eq!(got[row * n..(row + 1) * n], want[..], "{format:?} row {row}");
        }
    }
}

#[test]
fn grouped_edges_and_errors() {
    let format = QuantFormat::Fp8E4m3;
    // E = 0: zeros; a per-tensor scale becomes [E].
    let x = t(&[2, 2], &[1.0; 4]);
    let ins = [&x, &u8s(&[0, 3, 2], &[]), &t(&[0], &[]), &ids(&[0, -1])];
    let y = quant_grouped_matmul(&ins, format).unwrap();
    assert_eq!((y.shape(), f32v(&y)), (&[2usize, 3][..], vec![0.0; 6]));
    let w = u8s(&[2, 1, 2], &[0x38, 0x38, 0x40, 0x40]);
    let y = quant_grouped_matmul(&[&x, &w, &t(&[2], &[1.0, 0.5]), &ids(&[1, 0])], format).unwrap();
    assert_eq!(f32v(&y), [2.0, 2.0]);
    // Leading dims differ, expert ids not of an index dtype, expert of the wrong length.
    let e = quant_grouped_matmul(&[&x, &w, &t(&[3], &[1.0; 3]), &ids(&[1, 0])], format).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    assert!(e.message().contains("leading"), "{e}");
    let fids = t(&[2], &[0.0, 1.0]);
    let e = quant_grouped_matmul(&[&x, &w, &t(&[2], &[1.0; 2]), &fids], format).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DType);
    let e = quant_grouped_matmul(&[&x, &w, &t(&[2], &[1.0; 2]), &ids(&[0])], format).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    // A per-expert slice of the wrong shape names the slice.
    let e =
        quant_grouped_matmul(&[&x, &u8s(&[2, 1, 3], &[0; 6]), &t(&[2], &[1.0; 2]), &ids(&[0, 1])], format).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    assert!(e.to_string().contains("per-expert"), "{e}");
}

#[test]
fn special_scales_propagate_and_subnormal_scales_are_exact() {
    // Int4Block, K = 4, B = 2, F16 scales per row: [NaN, 1], [+∞, 2^-24]; nibbles 1, 0, 3, −1.
    let fmt = QuantFormat::Int4Block { block_size: 2 };
    let w = u8s(&[2, 2], &[0x01, 0xF3, 0x01, 0xF3]);
    let s = Tensor::from_slice(&[2, 2], &[f16::NAN, f16::ONE, f16::INFINITY, f16::from_bits(1)]).unwrap();
    // x = [0, 0, 1, 1]: row 0's NaN block meets x = 0 and still gives NaN; row 1's first block
    // decodes to ∞ and ∞ · 0 (nibble 0), and ∞ · 0 again with x = 0: NaN.
    let y = quant_matmul(&[&t(&[1, 4], &[0.0, 0.0, 1.0, 1.0]), &w, &s], fmt).unwrap();
    assert!(f32v(&y).iter().all(|v| v.is_nan()));
    // A subnormal f16 scale (2^-24) is read exactly.
    let w1 = u8s(&[1, 2], &[0x01, 0xF3]);
    let s1 = Tensor::from_slice(&[1, 2], &[f16::ONE, f16::from_bits(1)]).unwrap();
    let y = quant_matmul(&[&t(&[1, 4], &[0.0, 0.0, 1.0, 1.0]), &w1, &s1], fmt).unwrap();
    // 3 · 2^-24 − 1 · 2^-24 = 2^-23.
    assert_eq!(f32v(&y), [2f32.powi(-23)]);
}

#[test]
fn every_signed_asym_code() {
    // Int8BlockAsym with I8 weights, zero 0.5 and scale 2: every code c gives 2c − 1.
    let fmt = QuantFormat::Int8BlockAsym { block_size: 256 };
    let codes: Vec<u8> = (0..=255).collect();
    let w = Tensor::from_bytes(DType::I8, &[256, 1], codes.clone()).unwrap();
    let x = t(&[1, 1], &[1.0]);
    let y = quant_matmul(&[&x, &w, &t(&[256, 1], &[2.0; 256]), &t(&[256, 1], &[0.5; 256])], fmt).unwrap();
    let want: Vec<f32> = codes.iter().map(|&c| 2.0 * f32::from(c as i8) - 1.0).collect();
    assert_eq!(f32v(&y), want);
}
