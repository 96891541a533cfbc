//! QuantMatMul's prefill GEMM (more than 8 rows of x) on wgpu against cpu-ref, with the (M)
//! tolerance `M = Σ_k |x|·|W|`: every format with weights over the whole code space, row and
//! column counts that straddle the 64 x 64 (scalar) and 128 x 128 (tensor-core) tiles, K of
//! several K-steps and, where the format allows, not a multiple of 8. The tensor-core form runs
//! only under `MatmulPrecision::F16` on adapters with cooperative matrices (not lavapipe, where
//! the test checks that the option changes nothing); its weights are drawn where f16 holds them.

mod common;
use backend_api::op::QuantFormat;
use backend_api::{DType, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{MatmulPrecision, WgpuBackend, WgpuOptions};
use common::quant::{as_i8, magnitudes, quant_matmul, weights};
use common::{approx, check, cpu, random, wgpu};

/// Every format at 70 rows (a partial second row tile) and 67 columns, x and scale dtypes taken
/// in turn.
#[test]
fn every_format_matches_cpu_ref_across_tiles() {
    for (fi, &format) in common::quant::EVERY_FORMAT.iter().enumerate() {
        let xd = [DType::F32, DType::F16, DType::BF16][fi % 3];
        let sd = [DType::F32, DType::F16][fi % 2];
        let seed = 100 + fi as u64;
        let (k, mut ws) = weights(format, &[], 67, sd, seed);
        if matches!(format, QuantFormat::Int8BlockAsym { .. }) {
            ws[0] = as_i8(ws[0].clone());
        }
        let x = random(xd, &[2, 35, k], -1.0, 1.0, seed + 7);
        let name = format!("{} x {xd}[2, 35, {k}] N = 67 scale {sd}", format.name());
        let got = quant_matmul(wgpu(), format, &x, &ws);
        let want = quant_matmul(cpu(), format, &x, &ws);
        check(&name, &got, &want, Some(approx(xd)), Some(&magnitudes(format, &x, &ws, k)));
    }
}

/// Longer K (many K-steps, the K-quants' items split across steps) on a few formats.
#[test]
fn long_k_matches_cpu_ref() {
    for (i, format) in
        [QuantFormat::Q4_K, QuantFormat::Q6_K, QuantFormat::Int4Block { block_size: 32 }].into_iter().enumerate()
    {
        let (k, ws) = long_weights(format, 9, 3 + i as u64);
        let x = random(DType::F32, &[12, k], -1.0, 1.0, 40 + i as u64);
        let name = format!("{} x F32[12, {k}] N = 9", format.name());
        let got = quant_matmul(wgpu(), format, &x, &ws);
        let want = quant_matmul(cpu(), format, &x, &ws);
        check(&name, &got, &want, Some(approx(DType::F32)), Some(&magnitudes(format, &x, &ws, k)));
    }
}

/// Weights of K = 1024 (Int4Block: 1000, ragged) with scales that f16 holds: 4 K-quant blocks or
/// 32-element scale blocks per row.
fn long_weights(format: QuantFormat, n: usize, seed: u64) -> (usize, Vec<Tensor>) {
    match format {
        QuantFormat::Int4Block { .. } => {
            let k = 1000;
            let codes = common::quant::bytes(&[n, k / 2], seed);
            (k, vec![codes, random(DType::F16, &[n, k.div_ceil(32)], -0.1, 0.1, seed + 1)])
        }
        _ => {
            let (_, bb) = format.ggml_block().expect("a K-quant");
            (1024, vec![tame(format, common::quant::bytes(&[n, 4 * bb], seed), bb, seed)])
        }
    }
}

/// `w` with each block's f16 super-scales (Q4_K: d and dmin at bytes 0..4; Q6_K: d at the
/// block's last 2 bytes) redrawn from [-2⁻⁶, 2⁻⁶), so that every weight is far inside f16.
fn tame(format: QuantFormat, w: Tensor, bb: usize, seed: u64) -> Tensor {
    let mut bytes = w.bytes().to_vec();
    let scales = random(DType::F16, &[bytes.len() / bb, 2], -1.0 / 64.0, 1.0 / 64.0, seed + 3);
    for (block, s) in bytes.chunks_exact_mut(bb).zip(scales.bytes().chunks_exact(4)) {
        match format {
            QuantFormat::Q6_K => block[bb - 2..].copy_from_slice(&s[..2]),
            _ => block[..4].copy_from_slice(s),
        }
    }
    Tensor::from_bytes(DType::U8, w.shape(), bytes).expect("same size")
}

/// Under `MatmulPrecision::F16` (tensor cores where the adapter has them) the product keeps the
/// f16 error bound `2⁻¹⁰ · M` for weights f16 holds, across the 128 x 128 tiles.
#[test]
fn reduced_precision_stays_within_f16_error() {
    let opts = WgpuOptions { matmul_precision: MatmulPrecision::F16, ..WgpuOptions::default() };
    let be = WgpuBackend::new(&opts).expect("a wgpu adapter");
    let cases = [
        (QuantFormat::Q4_K, DType::F16),
        (QuantFormat::Q6_K, DType::BF16),
        (QuantFormat::Int4Block { block_size: 32 }, DType::F32),
    ];
    for (i, (format, xd)) in cases.into_iter().enumerate() {
        let (k, ws) = long_weights(format, 130, 60 + i as u64);
        let x = random(xd, &[129, k], -1.0, 1.0, 70 + i as u64);
        let name = format!("{} x {xd}[129, {k}] N = 130, f16 precision", format.name());
        let got = quant_matmul(&be, format, &x, &ws);
        let want = quant_matmul(cpu(), format, &x, &ws);
        check(&name, &got, &want, Some(approx(xd).max(2e-3)), Some(&magnitudes(format, &x, &ws, k)));
    }
}
