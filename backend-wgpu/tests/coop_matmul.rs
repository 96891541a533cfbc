//! The cooperative-matrix (tensor-core) F16 GEMM against cpu-ref, and against the tiled kernel of
//! the same device with cooperative matrices turned off, on ragged shapes: M, N, K not multiples
//! of the fragments or tiles, K = 0, odd batch offsets (elements starting mid-word), transposed
//! DotGeneral operands, bias + activation, split-K and the large tiles; every tile shape, staging
//! (`linalg_coop.wgsl`, `linalg_coop_vec.wgsl`), K step and buffering reached through the
//! `coop.*` tuning overrides; and F32/BF16 products under the reduced-precision option
//! ([`MatmulPrecision::F16`]) with an f16-appropriate tolerance.
//!
//! Adapters without an f16 x f16 -> f32 cooperative configuration (lavapipe) skip with a
//! printed message: there the tiled kernel runs, which `tests/linalg.rs` covers. The test that
//! the precision option changes nothing without tensor cores runs everywhere.

use backend_api::op::{DotGeneralAttrs, Op, UnaryOp};
use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref as _;
use backend_wgpu::{DeviceCaps, FeatureChoice, MatmulPrecision, WgpuBackend, WgpuOptions};
use wgpu::wgt::CooperativeScalarType;

mod common;
use common::{approx, check, cpu, random};

/// Whether the lowering picks the cooperative-matrix kernel for F16 on `caps` (mirrors
/// `coop_tile` of the linalg lowering: f16, one subgroup size, an f16 x f16 -> f32 square
/// configuration of 8 or 16).
fn coop_config(caps: &DeviceCaps) -> Option<u32> {
    let sizes = caps.subgroups.as_ref()?;
    if !caps.f16 || sizes.min != sizes.max {
        return None;
    }
    caps.cooperative_matrix
        .iter()
        .filter(|c| {
            c.ab_type == CooperativeScalarType::F16
                && c.cr_type == CooperativeScalarType::F32
                && c.m_size == c.n_size
                && c.n_size == c.k_size
                && matches!(c.m_size, 8 | 16)
        })
        .map(|c| c.m_size)
        .max()
}

/// The default backend if it runs the cooperative-matrix kernel, else `None` after saying why.
fn coop_backend() -> Option<WgpuBackend> {
    coop_backend_with(&WgpuOptions::default())
}

/// The backend opened with `opts` if it runs the cooperative-matrix kernel, else `None`.
fn coop_backend_with(opts: &WgpuOptions) -> Option<WgpuBackend> {
    let be = WgpuBackend::new(opts).expect("a wgpu adapter (install mesa-vulkan-drivers)");
    let caps = be.device_caps();
    match coop_config(caps) {
        Some(frag) => {
            eprintln!(
                "{}: cooperative {frag}x{frag} f16 -> f32 fragments, subgroups {:?}",
                caps.description, caps.subgroups
            );
            Some(be)
        }
        None => {
            eprintln!(
                "SKIPPED: {} has no usable f16 x f16 -> f32 cooperative matrix (configurations {:?}, f16 {}, \
                 subgroups {:?}); the tiled kernel runs there instead",
                caps.description, caps.cooperative_matrix, caps.f16, caps.subgroups
            );
            None
        }
    }
}

/// The same device without cooperative matrices: the tiled kernel.
fn tiled_backend() -> WgpuBackend {
    let features = FeatureChoice { cooperative_matrix: false, ..FeatureChoice::default() };
    WgpuBackend::new(&WgpuOptions { features, ..WgpuOptions::default() }).expect("a wgpu adapter")
}

fn graph(op: &Op, ins: &[&Tensor]) -> Graph {
    let mut g = GraphBuilder::new();
    let vals: Vec<Value> = ins
        .iter()
        .enumerate()
        .map(|(k, t)| g.input(&format!("x{k}"), t.dtype(), t.shape().to_vec()).unwrap())
        .collect();
    let y = g.add1(op.clone(), &vals).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn run(be: &dyn Backend, op: &Op, ins: &[&Tensor]) -> Tensor {
    let names: Vec<String> = (0..ins.len()).map(|k| format!("x{k}")).collect();
    let inputs: Vec<(&str, &Tensor)> = names.iter().map(String::as_str).zip(ins.iter().copied()).collect();
    common::run(be, &graph(op, ins), &inputs).remove(0)
}

fn abs(t: &Tensor) -> Tensor {
    let v: Vec<f64> = t.view().to_f64_lossy().iter().map(|x| x.abs()).collect();
    common::tensor(t.dtype(), t.shape(), &v)
}

/// `op` on the coop backend vs cpu-ref and vs the tiled kernel, with the Approx (M) tolerance;
/// `mag_op` on |inputs| gives M.
fn compare(coop: &WgpuBackend, tiled: &WgpuBackend, op: &Op, mag_op: &Op, ins: &[&Tensor], what: &str) {
    let got = run(coop, op, ins);
    let want = run(cpu(), op, ins);
    let abs_ins: Vec<Tensor> = ins.iter().map(|t| abs(t)).collect();
    let mag = run(cpu(), mag_op, &abs_ins.iter().collect::<Vec<_>>()).view().to_f64_lossy();
    let tol = approx(DType::F16);
    check(&format!("{what} vs cpu-ref"), &got, &want, Some(tol), Some(&mag));
    let other = run(tiled, op, ins);
    // Both are within tol of the reference, so within 2 tol of each other.
    let mag2: Vec<f64> = mag.iter().map(|m| 2.0 * m).collect();
    check(&format!("{what} vs tiled"), &got, &other, Some(2.0 * tol), Some(&mag2));
}

fn matmul_case(coop: &WgpuBackend, tiled: &WgpuBackend, a: &[usize], b: &[usize], seed: u64) {
    let x = random(DType::F16, a, -1.0, 1.0, seed);
    let w = random(DType::F16, b, -1.0, 1.0, seed + 1);
    compare(coop, tiled, &Op::MatMul, &Op::MatMul, &[&x, &w], &format!("MatMul F16 {a:?} x {b:?}"));
}

#[test]
fn coop_matmul_ragged_shapes() {
    let Some(coop) = coop_backend() else { return };
    let tiled = tiled_backend();
    let cases: [(&[usize], &[usize]); 10] = [
        (&[9, 1], &[1, 9]),
        (&[37, 19], &[19, 45]),
        (&[64, 64], &[64, 64]),
        (&[65, 33], &[33, 63]),
        (&[127, 129], &[129, 131]),
        // odd batch offsets: matrices start in the middle of a storage word
        (&[3, 17, 19], &[19, 21]),
        (&[2, 1, 15, 7], &[3, 7, 13]),
        // K = 0: zeros
        (&[20, 0], &[0, 30]),
        // long K, few tiles: split-K partial sums and their reduction
        (&[65, 1030], &[1030, 65]),
        // many tiles: the large tile, with edges
        (&[64, 130, 20], &[1, 20, 129]),
    ];
    for (seed, (a, b)) in cases.iter().enumerate() {
        matmul_case(&coop, &tiled, a, b, 100 + 2 * seed as u64);
    }
}

#[test]
fn coop_vector_load_shapes() {
    // K and N multiples of 8: the vector-load kernel (`linalg_coop_vec.wgsl`), double-buffered
    // where the workgroup memory allows, with ragged M, tile edges along N, several K steps, batch
    // offsets that are whole vectors, split-K (K = 4096 over two 64 x 64 tiles), and the
    // automatic 128 x 256 tile (2048 x 4096: 256 of them).
    let Some(coop) = coop_backend() else { return };
    let tiled = tiled_backend();
    let cases: [(&[usize], &[usize]); 10] = [
        (&[9, 8], &[8, 8]),
        (&[65, 4096], &[4096, 64]),
        (&[2048, 16], &[16, 4096]),
        (&[37, 24], &[24, 40]),
        (&[64, 96], &[96, 64]),
        (&[65, 200], &[200, 136]),
        (&[3, 17, 40], &[40, 72]),
        (&[2, 1, 15, 16], &[3, 16, 24]),
        (&[65, 1032], &[1032, 64]),
        (&[64, 136, 40], &[1, 40, 136]),
    ];
    for (seed, (a, b)) in cases.iter().enumerate() {
        matmul_case(&coop, &tiled, a, b, 300 + 2 * seed as u64);
    }
}

#[test]
fn coop_fused_bias_and_activation() {
    let Some(coop) = coop_backend() else { return };
    let tiled = tiled_backend();
    let cases: [(&[usize], &[usize], &[usize]); 4] = [
        (&[65, 33], &[33, 63], &[63]),
        (&[2, 9, 10], &[10, 129], &[1, 1, 129]),
        (&[66, 1040], &[1040, 3], &[66, 3]),
        (&[40, 24], &[24, 17], &[40, 1]),
    ];
    for act in [None, Some(UnaryOp::Relu), Some(UnaryOp::Gelu), Some(UnaryOp::Tanh)] {
        for (seed, (a, b, bias)) in cases.iter().enumerate() {
            let s = 200 + 3 * seed as u64;
            let (x, w, c) = (
                random(DType::F16, a, -1.0, 1.0, s),
                random(DType::F16, b, -1.0, 1.0, s + 1),
                random(DType::F16, bias, -1.0, 1.0, s + 2),
            );
            let op = Op::FusedMatMulBiasAct { activation: act };
            let mag = Op::FusedMatMulBiasAct { activation: None };
            compare(&coop, &tiled, &op, &mag, &[&x, &w, &c], &format!("Fused {act:?} F16 {a:?} {b:?} + {bias:?}"));
        }
    }
}

fn dot(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> Op {
    Op::DotGeneral(DotGeneralAttrs {
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
    })
}

#[test]
fn coop_dot_general_transposed_and_batched() {
    let Some(coop) = coop_backend() else { return };
    let tiled = tiled_backend();
    type Case = (&'static [usize], &'static [usize], [&'static [usize]; 4]);
    let cases: [Case; 5] = [
        // A^T·B, A·B^T, A^T·B^T
        (&[63, 65], &[63, 64], [&[], &[], &[0], &[0]]),
        (&[65, 63], &[129, 63], [&[], &[], &[1], &[1]]),
        (&[63, 65], &[33, 63], [&[], &[], &[0], &[1]]),
        // batch in the middle of lhs, last in rhs (attention-like)
        (&[17, 3, 24], &[24, 19, 3], [&[1], &[2], &[2], &[0]]),
        // contracting axes against memory order: the copy path feeds the GEMM
        (&[12, 6, 5], &[5, 6, 23], [&[], &[], &[2, 1], &[0, 1]]),
    ];
    for (seed, (ls, rs, [lb, rb, lc, rc])) in cases.iter().enumerate() {
        let l = random(DType::F16, ls, -1.0, 1.0, 300 + 2 * seed as u64);
        let r = random(DType::F16, rs, -1.0, 1.0, 301 + 2 * seed as u64);
        let op = dot(lb, rb, lc, rc);
        compare(
            &coop,
            &tiled,
            &op,
            &op,
            &[&l, &r],
            &format!("DotGeneral F16 {ls:?} {rs:?} {lb:?} {rb:?} {lc:?} {rc:?}"),
        );
    }
}

/// Options with the tuning overrides `pairs` (`KEY=VALUE`) and matrix precision `precision`.
fn options(pairs: &[&str], precision: MatmulPrecision) -> WgpuOptions {
    let mut opts = WgpuOptions { matmul_precision: precision, ..WgpuOptions::default() };
    for p in pairs {
        opts.tuning.set_pair(p).expect("a known tuning key");
    }
    opts
}

/// Every tile shape, staging, K step and buffering of the cooperative kernels, forced by the
/// `coop.*` overrides, on shapes with whole vectors: ragged M and tile edges, whole tiles, a
/// batch, split-K and without it, bias and activation (forced sizes that do not fit the device
/// fall back to the automatic choice).
#[test]
fn coop_forced_tiles_and_stagings() {
    let Some(_) = coop_backend() else { return };
    let tiled = tiled_backend();
    let overrides: [&[&str]; 13] = [
        &["coop.tile=small"],
        &["coop.tile=small", "coop.buffers=1"],
        &["coop.tile=mid", "coop.split=1"],
        &["coop.tile=large"],
        &["coop.tile=large", "coop.bk=64"],
        &["coop.tile=large", "coop.buffers=1"],
        &["coop.tile=wide"],
        &["coop.tile=wide", "coop.bk=64"],
        &["coop.tile=huge"],
        &["coop.tile=huge", "coop.buffers=2"],
        &["coop.bk=64", "coop.tile=mid"],
        &["coop.stage=cvt", "coop.split=4"],
        &["coop.stage=pairs"],
    ];
    let cases: [(&[usize], &[usize]); 6] = [
        (&[37, 24], &[24, 40]),
        (&[130, 1032], &[1032, 136]),
        (&[128, 256], &[256, 256]),
        (&[256, 128], &[128, 256]),
        (&[2, 128, 64], &[64, 128]),
        (&[128, 2048], &[2048, 128]),
    ];
    for pairs in overrides {
        let Some(coop) = coop_backend_with(&options(pairs, MatmulPrecision::Exact)) else { return };
        for (seed, (a, b)) in cases.iter().enumerate() {
            eprintln!("{pairs:?} {a:?} x {b:?}");
            matmul_case(&coop, &tiled, a, b, 500 + 2 * seed as u64);
        }
        let (x, w, c) = (
            random(DType::F16, &[128, 64], -1.0, 1.0, 600),
            random(DType::F16, &[64, 256], -1.0, 1.0, 601),
            random(DType::F16, &[256], -1.0, 1.0, 602),
        );
        let op = Op::FusedMatMulBiasAct { activation: Some(UnaryOp::Gelu) };
        let mag = Op::FusedMatMulBiasAct { activation: None };
        compare(&coop, &tiled, &op, &mag, &[&x, &w, &c], &format!("{pairs:?} fused Gelu"));
    }
}

/// (lhs shape, rhs shape, [lhs batch, rhs batch, lhs contract, rhs contract]).
type DotCase = (&'static [usize], &'static [usize], [&'static [usize]; 4]);

/// `op` on `be` against cpu-ref with relative tolerance `tol` of M (`mag_op` on |inputs|).
fn compare_ref(be: &WgpuBackend, op: &Op, mag_op: &Op, ins: &[&Tensor], tol: f64, what: &str) {
    let got = run(be, op, ins);
    let want = run(cpu(), op, ins);
    let abs_ins: Vec<Tensor> = ins.iter().map(|t| abs(t)).collect();
    let mag = run(cpu(), mag_op, &abs_ins.iter().collect::<Vec<_>>()).view().to_f64_lossy();
    check(&format!("{what} vs cpu-ref"), &got, &want, Some(tol), Some(&mag));
}

/// The tolerance of an F32/BF16 product with operands rounded to f16: 2^-11 relative per
/// operand, so about 2^-10 of M, plus the output's own rounding for BF16.
fn reduced_tol(d: DType) -> f64 {
    if d == DType::BF16 {
        approx(DType::BF16)
    } else {
        2e-3
    }
}

/// F32 and BF16 MatMul, FusedMatMulBiasAct and DotGeneral under [`MatmulPrecision::F16`]: on
/// tensor cores where the layout has whole vectors (ragged M, batched, split-K, fused, forced
/// tiles, K steps and buffers), exact elsewhere (transposed, K not a multiple of 8); within an
/// f16-operand tolerance of cpu-ref everywhere.
#[test]
fn reduced_precision_f32_and_bf16_products() {
    let configs: [&[&str]; 5] = [
        &[],
        &["coop.tile=large", "coop.bk=64"],
        &["coop.tile=huge"],
        &["coop.tile=wide", "coop.buffers=1"],
        &["coop.tile=small", "coop.split=1"],
    ];
    for pairs in configs {
        let Some(be) = coop_backend_with(&options(pairs, MatmulPrecision::F16)) else { return };
        for d in [DType::F32, DType::BF16] {
            let tol = reduced_tol(d);
            let cases: [(&[usize], &[usize]); 7] = [
                (&[37, 24], &[24, 40]),
                // few tiles, long K: split-K unless coop.split=1
                (&[65, 4096], &[4096, 64]),
                (&[130, 1032], &[1032, 136]),
                (&[256, 128], &[128, 256]),
                (&[3, 17, 40], &[40, 72]),
                // K not a multiple of 8: exact tiled kernel
                (&[33, 19], &[19, 45]),
                (&[2, 1, 15, 16], &[3, 16, 24]),
            ];
            for (seed, (a, b)) in cases.iter().enumerate() {
                let x = random(d, a, -1.0, 1.0, 700 + 2 * seed as u64);
                let w = random(d, b, -1.0, 1.0, 701 + 2 * seed as u64);
                compare_ref(
                    &be,
                    &Op::MatMul,
                    &Op::MatMul,
                    &[&x, &w],
                    tol,
                    &format!("{pairs:?} MatMul {d:?} {a:?} {b:?}"),
                );
            }
            let (x, w, c) = (
                random(d, &[66, 64], -1.0, 1.0, 800),
                random(d, &[64, 24], -1.0, 1.0, 801),
                random(d, &[24], -1.0, 1.0, 802),
            );
            let op = Op::FusedMatMulBiasAct { activation: Some(UnaryOp::Relu) };
            let mag = Op::FusedMatMulBiasAct { activation: None };
            compare_ref(&be, &op, &mag, &[&x, &w, &c], tol, &format!("{pairs:?} fused {d:?}"));
            // Transposed (exact tiled kernel) and batched DotGeneral.
            let dots: [DotCase; 2] = [
                (&[63, 64], &[63, 48], [&[], &[], &[0], &[0]]),
                (&[17, 3, 24], &[3, 24, 16], [&[1], &[0], &[2], &[1]]),
            ];
            for (seed, (ls, rs, [lb, rb, lc, rc])) in dots.iter().enumerate() {
                let l = random(d, ls, -1.0, 1.0, 900 + 2 * seed as u64);
                let r = random(d, rs, -1.0, 1.0, 901 + 2 * seed as u64);
                let op = dot(lb, rb, lc, rc);
                compare_ref(&be, &op, &op, &[&l, &r], tol, &format!("{pairs:?} DotGeneral {d:?} {ls:?} {rs:?}"));
            }
        }
    }
}

/// Without tensor cores (lavapipe, or the feature turned off) the precision option changes
/// nothing: F32 and BF16 products equal those of the exact default, bit for bit. Runs on every
/// adapter.
#[test]
fn reduced_precision_changes_nothing_without_tensor_cores() {
    let off = FeatureChoice { cooperative_matrix: false, ..FeatureChoice::default() };
    let exact = WgpuBackend::new(&WgpuOptions { features: off, ..WgpuOptions::default() }).expect("a wgpu adapter");
    let reduced =
        WgpuBackend::new(&WgpuOptions { features: off, ..options(&[], MatmulPrecision::F16) }).expect("adapter");
    for d in [DType::F32, DType::BF16] {
        let x = random(d, &[65, 64], -300.0, 300.0, 1000);
        let w = random(d, &[64, 72], -300.0, 300.0, 1001);
        let (a, b) = (run(&exact, &Op::MatMul, &[&x, &w]), run(&reduced, &Op::MatMul, &[&x, &w]));
        assert_eq!(a.bytes(), b.bytes(), "{d:?}: the option changed a product without tensor cores");
        let c = random(d, &[72], -1.0, 1.0, 1002);
        let op = Op::FusedMatMulBiasAct { activation: Some(UnaryOp::Relu) };
        let (a, b) = (run(&exact, &op, &[&x, &w, &c]), run(&reduced, &op, &[&x, &w, &c]));
        assert_eq!(a.bytes(), b.bytes(), "{d:?}: fused");
    }
    // The default adapter too, where it has no cooperative matrices (lavapipe).
    let default = WgpuBackend::new(&options(&[], MatmulPrecision::F16)).expect("a wgpu adapter");
    if coop_config(default.device_caps()).is_none() {
        let x = random(DType::F32, &[40, 32], -1.0, 1.0, 1003);
        let w = random(DType::F32, &[32, 24], -1.0, 1.0, 1004);
        let (a, b) = (run(&exact, &Op::MatMul, &[&x, &w]), run(&default, &Op::MatMul, &[&x, &w]));
        assert_eq!(a.bytes(), b.bytes(), "the option changed a product on an adapter without tensor cores");
    }
}
