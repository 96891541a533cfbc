//! QuantMatMul (§2.6.5) on wgpu against cpu-ref for every format of §2.6.7, with the (M)
//! tolerance `M = Σ_k |x|·|W|`. The weights' bytes are drawn over the whole code space (NaN and
//! infinite codes and f16 scales included); `W` for `M` is decoded by cpu-ref itself, as
//! `QuantMatMul(I_K, weights) = Wᵀ`. Shapes are small and ragged: M = 1, 3 (rank 3) and 9 rows
//! (a partial last row block of 4), N not a multiple of anything, K of several blocks and, where
//! the format allows, not a multiple of its block. Kept small: lavapipe is slow.

mod common;
use backend_api::op::QuantFormat;
use backend_api::{DType, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{FeatureChoice, WgpuBackend, WgpuOptions};
use common::quant::{as_i8, bytes, magnitudes, quant_matmul, weights};
use common::{approx, check, cpu, random, wgpu};

/// Every format on every row count, x dtypes and scale dtypes taken in turn.
#[test]
fn every_format_matches_cpu_ref() {
    let formats = common::quant::EVERY_FORMAT;
    let rows: [&[usize]; 3] = [&[1], &[1, 3], &[9]];
    let (mut cases, mut turn) = (0, 0usize);
    for (fi, &format) in formats.iter().enumerate() {
        for (ri, lead) in rows.iter().enumerate() {
            turn += 1;
            let xd = [DType::F32, DType::F16, DType::BF16][turn % 3];
            let sd = [DType::F32, DType::F16][turn % 2];
            let n = [5, 67, 3][ri];
            let seed = (fi * 10 + ri) as u64;
            let (k, mut ws) = weights(format, &[], n, sd, seed);
            if matches!(format, QuantFormat::Int8BlockAsym { .. }) && turn % 2 == 0 {
                ws[0] = as_i8(ws[0].clone());
            }
            let shape: Vec<usize> = lead.iter().copied().chain([k]).collect();
            let x = random(xd, &shape, -1.0, 1.0, seed + 7);
            let name = format!("{} x {xd}{shape:?} N = {n} scale {sd}", format.name());
            let got = quant_matmul(wgpu(), format, &x, &ws);
            let want = quant_matmul(cpu(), format, &x, &ws);
            let m = magnitudes(format, &x, &ws, k);
            check(&name, &got, &want, Some(approx(xd)), Some(&m));
            cases += 1;
        }
    }
    assert_eq!(cases, 51);
}

/// K = 0 gives zeros; N = 0 and M = 0 give empty outputs.
#[test]
fn empty_dims() {
    let f = QuantFormat::Int8Block { block_size: 4 };
    let zero_k = [as_i8(bytes(&[3, 0], 1)), random(DType::F32, &[3, 0], -1.0, 1.0, 2)];
    let x = random(DType::F16, &[2, 0], -1.0, 1.0, 3);
    let got = quant_matmul(wgpu(), f, &x, &zero_k);
    assert_eq!(got.shape(), [2, 3]);
    assert!(got.view().to_f64_lossy().iter().all(|&v| v == 0.0));
    let no_n = [as_i8(bytes(&[0, 8], 1)), random(DType::F32, &[0, 2], -1.0, 1.0, 2)];
    assert_eq!(quant_matmul(wgpu(), f, &random(DType::F32, &[2, 8], -1.0, 1.0, 3), &no_n).shape(), [2, 0]);
    let w = [as_i8(bytes(&[3, 8], 1)), random(DType::F32, &[3, 2], -1.0, 1.0, 2)];
    assert_eq!(quant_matmul(wgpu(), f, &random(DType::F32, &[0, 8], -1.0, 1.0, 3), &w).shape(), [0, 3]);
}

/// Every FP8 code (E4M3 and E5M2: NaNs, infinities, subnormals, signed zeros) and every E4M3
/// block scale of Nvfp4 decodes exactly as cpu-ref decodes it: row n of W holds code n, and x
/// picks one element, so each output is one decoded value times 1.
#[test]
fn every_fp8_code_decodes_exactly() {
    let codes = Tensor::from_bytes(DType::U8, &[256, 1], (0..=255u8).collect()).unwrap();
    let one = common::tensor(DType::F32, &[1, 1], &[1.0]);
    let scale = common::tensor(DType::F32, &[], &[1.0]);
    for f in [QuantFormat::Fp8E4m3, QuantFormat::Fp8E5m2] {
        let ws = [codes.clone(), scale.clone()];
        let (got, want) = (quant_matmul(wgpu(), f, &one, &ws), quant_matmul(cpu(), f, &one, &ws));
        check(f.name(), &got, &want, None, None);
    }
    // Nvfp4: every nibble 0x2 (1.0), block scale = row, global scale 1; x = e_0.
    let w = Tensor::from_bytes(DType::U8, &[256, 8], vec![0x22; 256 * 8]).unwrap();
    let bs = Tensor::from_bytes(DType::U8, &[256, 1], (0..=255u8).collect()).unwrap();
    let mut e0 = vec![0.0; 16];
    e0[0] = 1.0;
    let x = common::tensor(DType::F32, &[1, 16], &e0);
    let ws = [w, bs, scale];
    let (got, want) =
        (quant_matmul(wgpu(), QuantFormat::Nvfp4, &x, &ws), quant_matmul(cpu(), QuantFormat::Nvfp4, &x, &ws));
    check("Nvfp4 block scales", &got, &want, None, None);
}

/// K for `format` (case `c`: K not a multiple of the unit or block where the format allows it)
/// and the weight inputs for `[N, K]`, scale dtype `s` where the format has one.
fn weights_k(format: QuantFormat, n: usize, c: usize, s: DType, seed: u64) -> (usize, Vec<Tensor>) {
    let nb = |k: usize, b: u32| k.div_ceil(b as usize);
    let scales = |k: usize, b: u32| random(s, &[n, nb(k, b)], -1.0, 1.0, seed + 1);
    let k = [37, 64, 100][c % 3];
    match format {
        QuantFormat::Int8Block { block_size: b } => (k, vec![as_i8(bytes(&[n, k], seed)), scales(k, b)]),
        QuantFormat::Int8BlockAsym { block_size: b } => {
            let zero = random(s, &[n, nb(k, b)], -3.0, 200.0, seed + 2);
            let w = if c.is_multiple_of(2) { as_i8(bytes(&[n, k], seed)) } else { bytes(&[n, k], seed) };
            (k, vec![w, scales(k, b), zero])
        }
        QuantFormat::Int4Block { block_size: b } => (k, vec![bytes(&[n, k.div_ceil(2)], seed), scales(k, b)]),
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            let scale: &[usize] = if c.is_multiple_of(2) { &[n] } else { &[] };
            (k, vec![bytes(&[n, k], seed), random(DType::F32, scale, -2.0, 2.0, seed + 1)])
        }
        QuantFormat::Nvfp4 => {
            let k = [48, 64, 80][c % 3];
            let global = random(DType::F32, &[], 0.0, 0.01, seed + 2);
            (k, vec![bytes(&[n, k / 2], seed), bytes(&[n, k / 16], seed + 1), global])
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
        | QuantFormat::Q8_K => weights(format, &[], n, s, seed),
    }
}

/// The decode GEMV (M = 1 ..= 8 rows of x): every format and row count, x F32/F16/BF16 and
/// scales F32/F16 in turn, N straddling the columns of a workgroup, K with and without a ragged
/// tail and block sizes on both the one-scale-per-unit path and the element-by-element path; with
/// the column sums by subgroups (where the adapter has one subgroup size) and in workgroup memory.
#[test]
fn decode_rows_match_cpu_ref() {
    let on = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter");
    eprintln!("subgroups of the default device: {:?}", on.device_caps().subgroups);
    let off = WgpuBackend::new(&WgpuOptions { features: FeatureChoice::none(), ..WgpuOptions::default() })
        .expect("a wgpu adapter");
    let formats = [
        QuantFormat::Q4_0,
        QuantFormat::Q4_K,
        QuantFormat::Q6_K,
        QuantFormat::Q8_0,
        QuantFormat::Int4Block { block_size: 32 },
        QuantFormat::Int4Block { block_size: 6 },
        QuantFormat::Fp8E4m3,
        QuantFormat::Nvfp4,
        QuantFormat::Int8Block { block_size: 16 },
        QuantFormat::Int8Block { block_size: 8 },
        QuantFormat::Int8BlockAsym { block_size: 12 },
        QuantFormat::Int8BlockAsym { block_size: 5 },
        QuantFormat::Fp8E5m2,
        QuantFormat::Q4_1,
        QuantFormat::Q5_0,
        QuantFormat::Q5_1,
        QuantFormat::Q2_K,
        QuantFormat::Q3_K,
        QuantFormat::Q5_K,
        QuantFormat::Q8_K,
    ];
    let mut cases = 0;
    for (fi, &format) in formats.iter().enumerate() {
        for m in 1..=8usize {
            let turn = fi + m;
            let xd = [DType::F32, DType::F16, DType::BF16][turn % 3];
            let sd = [DType::F32, DType::F16][turn % 2];
            let n = [1, 9, 33, 70][m % 4];
            let seed = (fi * 100 + m) as u64;
            let (k, ws) = weights_k(format, n, turn, sd, seed);
            let x = random(xd, &[m, k], -1.0, 1.0, seed + 7);
            let want = quant_matmul(cpu(), format, &x, &ws);
            let mag = magnitudes(format, &x, &ws, k);
            let (be, form): (&dyn backend_api::Backend, _) =
                if turn.is_multiple_of(2) { (&on, "default") } else { (&off, "none") };
            let name = format!("{} x {xd}[{m}, {k}] N = {n} scale {sd} features {form}", format.name());
            check(&name, &quant_matmul(be, format, &x, &ws), &want, Some(approx(xd)), Some(&mag));
            cases += 1;
        }
    }
    assert_eq!(cases, 20 * 8);
}
