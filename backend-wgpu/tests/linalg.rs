//! MatMul, FusedMatMulBiasAct and DotGeneral on wgpu against cpu-ref, with the spec's (M)
//! tolerance: |got − want| ≤ atol · Σ|a||b| (+|bias|) + rtol · |want|, Approx class.
//! Shapes straddle the 64 x 64 tile (1, 63, 64, 65, 127, 129), include K = 0, broadcast batch dims,
//! transposed DotGeneral layouts (in-place strided reads and the copy path), and grids that must
//! be split over several dispatches. Kept small: lavapipe is slow.

use backend_api::op::{DotGeneralAttrs, Op, UnaryOp};
use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref as _;
use backend_wgpu::{Tuning, WgpuBackend, WgpuOptions};
use half::{bf16, f16};

fn wgpu() -> WgpuBackend {
    WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)")
}

fn cpu() -> Box<dyn Backend> {
    backend_api::create("cpu-ref").expect("cpu-ref is linked")
}

/// Dtypes this device can run, of the four floats.
fn float_dtypes(be: &WgpuBackend) -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64].into_iter().filter(|d| be.device_caps().supports(*d)).collect()
}

/// Deterministic values in [-1, 1) as a tensor of `d`.
fn random(d: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    from_f64(d, shape, &v)
}

fn from_f64(d: DType, shape: &[usize], v: &[f64]) -> Tensor {
    match d {
        DType::F32 => Tensor::from_slice(shape, &v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        DType::F16 => Tensor::from_slice(shape, &v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>()),
        DType::BF16 => Tensor::from_slice(shape, &v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>()),
        DType::F64 => Tensor::from_slice(shape, v),
        other => panic!("not a float dtype: {other}"),
    }
    .unwrap()
}

fn abs(t: &Tensor) -> Tensor {
    let v: Vec<f64> = t.view().to_f64_lossy().iter().map(|x| x.abs()).collect();
    from_f64(t.dtype(), t.shape(), &v)
}

fn approx(d: DType) -> f64 {
    match d {
        DType::F16 => 2e-3,
        DType::BF16 => 1.6e-2,
        _ => 1e-4,
    }
}

/// A graph of one node `op` over inputs named x0, x1, ….
fn graph(op: Op, ins: &[&Tensor]) -> Graph {
    let mut g = GraphBuilder::new();
    let vals: Vec<Value> = ins
        .iter()
        .enumerate()
        .map(|(k, t)| g.input(&format!("x{k}"), t.dtype(), t.shape().to_vec()).unwrap())
        .collect();
    let y = g.add1(op, &vals).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn run(be: &dyn Backend, op: &Op, ins: &[&Tensor]) -> Tensor {
    let mut exe =
        be.compile(&graph(op.clone(), ins), &Default::default()).unwrap_or_else(|e| panic!("compile {op:?}: {e}"));
    let names: Vec<String> = (0..ins.len()).map(|k| format!("x{k}")).collect();
    let inputs: Vec<(&str, _)> = names.iter().zip(ins).map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs).unwrap_or_else(|e| panic!("run {op:?}: {e}")).remove(0)
}

/// Runs `op` on wgpu and cpu-ref and checks the (M) tolerance; `mag_op` is the op whose result
/// on |inputs| is the magnitude M (the op itself without activation).
fn check(be: &WgpuBackend, op: Op, mag_op: Op, ins: &[&Tensor], what: &str) {
    let got = run(be, &op, ins);
    let reference = cpu();
    let want = run(reference.as_ref(), &op, ins);
    let abs_ins: Vec<Tensor> = ins.iter().map(|t| abs(t)).collect();
    let mag = run(reference.as_ref(), &mag_op, &abs_ins.iter().collect::<Vec<_>>());
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let tol = approx(got.dtype());
    let (g, w, m) = (got.view().to_f64_lossy(), want.view().to_f64_lossy(), mag.view().to_f64_lossy());
    for i in 0..g.len() {
        let ok =
            (g[i] - w[i]).abs() <= tol * m[i] + tol * w[i].abs() || (g[i].is_nan() && w[i].is_nan()) || g[i] == w[i];
        assert!(ok, "{what}: element {i} of {:?}: got {} want {} (M = {})", got.shape(), g[i], w[i], m[i]);
    }
}

fn check_matmul(be: &WgpuBackend, d: DType, a_shape: &[usize], b_shape: &[usize], seed: u64) {
    let a = random(d, a_shape, seed);
    let b = random(d, b_shape, seed + 1);
    check(be, Op::MatMul, Op::MatMul, &[&a, &b], &format!("MatMul {d} {a_shape:?} x {b_shape:?}"));
}

#[test]
fn matmul_sizes_straddling_the_tile() {
    let be = wgpu();
    eprintln!("adapter: {}", be.device_caps().description);
    let sizes = [(1, 1, 1), (63, 65, 64), (64, 64, 64), (65, 63, 127), (127, 129, 65), (129, 1, 33), (1, 127, 129)];
    for d in float_dtypes(&be) {
        for (seed, &(m, n, k)) in sizes.iter().enumerate() {
            check_matmul(&be, d, &[m, k], &[k, n], seed as u64);
        }
    }
}

#[test]
fn matmul_k_zero_gives_zeros_and_empty_outputs() {
    let be = wgpu();
    for d in float_dtypes(&be) {
        check_matmul(&be, d, &[3, 0], &[0, 5], 1);
        check_matmul(&be, d, &[2, 65, 0], &[2, 0, 3], 2);
        let a = random(d, &[0, 4], 3);
        let b = random(d, &[4, 5], 4);
        let out = run(&be, &Op::MatMul, &[&a, &b]);
        assert_eq!(out.shape(), &[0, 5]);
    }
}

#[test]
fn matmul_broadcast_batch_dims() {
    let be = wgpu();
    for d in [DType::F32, DType::F16, DType::BF16] {
        check_matmul(&be, d, &[2, 1, 9, 7], &[3, 7, 11], 5);
        check_matmul(&be, d, &[5, 8], &[4, 8, 66], 6);
        check_matmul(&be, d, &[4, 65, 3], &[1, 3, 2], 7);
        check_matmul(&be, d, &[2, 3, 1, 4, 5], &[3, 2, 5, 6], 8);
    }
}

#[test]
fn matmul_large_tile_path() {
    // 2 x 2 tiles of 128 over 64 batches: enough work for the 128 x 128 tile, with edges.
    let be = wgpu();
    for d in [DType::F32, DType::F16] {
        check_matmul(&be, d, &[64, 130, 20], &[1, 20, 129], 9);
    }
}

#[test]
fn matmul_split_k_and_skinny_paths() {
    let be = wgpu();
    for d in float_dtypes(&be) {
        // Few rows: the skinny kernel, without and with K split (partial sums + reduction).
        check_matmul(&be, d, &[3, 200], &[200, 70], 12);
        check_matmul(&be, d, &[3, 1100], &[1100, 70], 13);
        check_matmul(&be, d, &[2, 8, 600], &[600, 5], 14);
        // Few tiles and a long K: the tiled kernel with K split.
        check_matmul(&be, d, &[65, 1030], &[1030, 65], 15);
    }
}

#[test]
fn matmul_gemv_paths() {
    let be = wgpu();
    for d in float_dtypes(&be) {
        // N a multiple of 8: the wide skinny kernel (vector loads of B) for F32/F16/BF16, over
        // 1, 2 and 4 rows per workgroup, two row blocks, batches, K = 1 and short K.
        check_matmul(&be, d, &[1, 256], &[256, 256], 50);
        check_matmul(&be, d, &[2, 100], &[100, 64], 51);
        check_matmul(&be, d, &[3, 37], &[37, 8], 52);
        check_matmul(&be, d, &[7, 33], &[33, 24], 53);
        check_matmul(&be, d, &[3, 1, 40], &[3, 40, 16], 54);
        check_matmul(&be, d, &[1, 1], &[1, 8], 55);
        check_matmul(&be, d, &[1, 5], &[5, 2048], 56);
        // Few workgroups and a long K: K split over partial sums.
        check_matmul(&be, d, &[1, 9000], &[9000, 16], 57);
        // N not a multiple of the vector: the per-element skinny kernel (F16/BF16), or the wide
        // one with 4-column vectors (F32).
        check_matmul(&be, d, &[1, 64], &[64, 12], 58);
    }
}

#[test]
fn matmul_grid_split_over_dispatches() {
    let be = wgpu();
    let max = be.device_caps().limits.max_compute_workgroups_per_dimension as usize;
    // More batches than one grid axis takes, and more column tiles than one axis takes.
    check_matmul(&be, DType::F32, &[max + 3, 1, 2], &[max + 3, 2, 1], 10);
    check_matmul(&be, DType::F16, &[1, 1], &[1, 64 * max + 65], 11);
}

fn fused(act: Option<UnaryOp>) -> Op {
    Op::FusedMatMulBiasAct { activation: act }
}

#[test]
fn fused_bias_and_activation() {
    let be = wgpu();
    let acts: Vec<Option<UnaryOp>> = vec![None, Some(UnaryOp::Relu), Some(UnaryOp::Exp)];
    let cases: [(&[usize], &[usize], &[usize]); 8] = [
        (&[65, 33], &[33, 63], &[63]),
        (&[64, 3], &[3, 64], &[64, 1]),
        (&[2, 1, 5, 0], &[3, 0, 7], &[2, 1, 1, 7]),
        (&[2, 9, 10], &[10, 129], &[1, 1, 129]),
        // skinny with split K, and tiled with split K: the bias is added by the reduction
        (&[2, 1100], &[1100, 9], &[2, 1]),
        (&[66, 1040], &[1040, 3], &[66, 3]),
        // the wide skinny kernel: bias broadcast along rows, and per row
        (&[1, 300], &[300, 64], &[64]),
        (&[5, 70], &[70, 16], &[5, 1]),
    ];
    for d in float_dtypes(&be) {
        for &act in &acts {
            if act.is_some_and(|u| {
                shaders::elementwise::expr(shaders::elementwise::ElemKind::Unary(u), &[d], d).is_none()
            }) {
                continue;
            }
            for (seed, (a_s, b_s, bias_s)) in cases.iter().enumerate() {
                let a = random(d, a_s, 20 + seed as u64);
                let b = random(d, b_s, 30 + seed as u64);
                let bias = random(d, bias_s, 40 + seed as u64);
                let what = format!("Fused {act:?} {d} {a_s:?} {b_s:?} + {bias_s:?}");
                check(&be, fused(act), fused(None), &[&a, &b, &bias], &what);
            }
        }
    }
}

#[test]
fn fused_activation_without_gpu_expression_is_unsupported() {
    let be = wgpu();
    let missing = UnaryOp::ALL.iter().copied().find(|&u| {
        u.dtypes().contains(DType::F32)
            && shaders::elementwise::expr(shaders::elementwise::ElemKind::Unary(u), &[DType::F32], DType::F32).is_none()
    });
    let Some(u) = missing else {
        eprintln!("every float activation has a GPU expression: nothing to check");
        return;
    };
    let (a, b, bias) = (random(DType::F32, &[2, 3], 1), random(DType::F32, &[3, 4], 2), random(DType::F32, &[4], 3));
    let err = be.compile(&graph(fused(Some(u)), &[&a, &b, &bias]), &Default::default()).err().expect("must fail");
    assert_eq!(err.kind(), backend_api::ErrorKind::Unsupported, "{err}");
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
fn dot_general_layouts() {
    let be = wgpu();
    type Case = (&'static [usize], &'static [usize], [&'static [usize]; 4]);
    let cases: [Case; 10] = [
        // plain, A^T·B, A·B^T, A^T·B^T
        (&[65, 63], &[63, 64], [&[], &[], &[1], &[0]]),
        // few rows with B^T (skinny kernel reading along K), and with A^T
        (&[3, 300], &[129, 300], [&[], &[], &[1], &[1]]),
        (&[300, 2], &[300, 65], [&[], &[], &[0], &[0]]),
        (&[63, 65], &[63, 64], [&[], &[], &[0], &[0]]),
        (&[65, 63], &[129, 63], [&[], &[], &[1], &[1]]),
        (&[63, 65], &[1, 63], [&[], &[], &[0], &[1]]),
        // batch in the middle of lhs and last in rhs (attention-like layouts)
        (&[5, 3, 8], &[8, 6, 3], [&[1], &[2], &[2], &[0]]),
        // two contracting axes listed against memory order: lhs needs the copy path
        (&[4, 6, 5], &[5, 6, 7], [&[], &[], &[2, 1], &[0, 1]]),
        // free axes split by the contracting axis: copy path; and an outer product
        (&[2, 9, 3], &[9, 65], [&[], &[], &[1], &[0]]),
        (&[7], &[66], [&[], &[], &[], &[]]),
    ];
    for d in float_dtypes(&be) {
        for (seed, (ls, rs, [lb, rb, lc, rc])) in cases.iter().enumerate() {
            let l = random(d, ls, 50 + seed as u64);
            let r = random(d, rs, 60 + seed as u64);
            let op = dot(lb, rb, lc, rc);
            check(&be, op.clone(), op, &[&l, &r], &format!("DotGeneral {d} {ls:?} {rs:?} {lb:?} {rb:?} {lc:?} {rc:?}"));
        }
    }
}

#[test]
fn dot_general_zero_contraction_and_batched_copy_path() {
    let be = wgpu();
    for d in [DType::F32, DType::BF16] {
        let op = dot(&[0], &[0], &[2], &[1]);
        let (l, r) = (random(d, &[2, 3, 0], 1), random(d, &[2, 0, 4], 2));
        check(&be, op.clone(), op, &[&l, &r], &format!("DotGeneral K=0 {d}"));
        // batch axis last in lhs and contracting axes out of order on both sides
        let op = dot(&[3], &[0], &[2, 0], &[2, 1]);
        let (l, r) = (random(d, &[3, 10, 4, 2], 3), random(d, &[2, 3, 4, 9], 4));
        check(&be, op.clone(), op, &[&l, &r], &format!("DotGeneral batched copy {d}"));
    }
}

/// A backend with `tune` (`KEY=VALUE` pairs) and subgroups on or off.
fn tuned(subgroups: bool, tune: &[&str]) -> WgpuBackend {
    let mut tuning = Tuning::default();
    for pair in tune {
        tuning.set_pair(pair).expect("a tuning key");
    }
    let features = backend_wgpu::FeatureChoice { subgroups, ..backend_wgpu::FeatureChoice::default() };
    WgpuBackend::new(&WgpuOptions { features, tuning, ..WgpuOptions::default() }).expect("a wgpu adapter")
}

/// `x · Wᵀ` with W stored `[.., N, K]` (rows of W contiguous), as a DotGeneral contracting the
/// last axes: the K-contiguous GEMV kernel where K is whole vectors.
fn check_kdot(be: &WgpuBackend, d: DType, x_shape: &[usize], w_shape: &[usize], seed: u64) {
    let x = random(d, x_shape, seed);
    let w = random(d, w_shape, seed + 1);
    let (xr, wr) = (x_shape.len(), w_shape.len());
    let batch: Vec<usize> = (0..xr - 2).collect();
    let op = dot(&batch, &batch, &[xr - 1], &[wr - 1]);
    check(be, op.clone(), op, &[&x, &w], &format!("x·Wᵀ {d} {x_shape:?} {w_shape:?}"));
}

#[test]
fn gemv_kernels_with_and_without_subgroups_and_every_unroll() {
    for subgroups in [true, false] {
        for tune in [&[][..], &["gemv.unroll=1", "gemv.ct=4"][..], &["gemv.unroll=16", "gemv.ct=64"][..]] {
            let be = tuned(subgroups, tune);
            for d in [DType::F32, DType::F16, DType::BF16] {
                if !be.device_caps().supports(d) {
                    continue;
                }
                let what = format!("subgroups {subgroups} {tune:?}");
                eprintln!("{what} {d}");
                // N-contiguous B: K not a multiple of the unroll, N not a multiple of the columns
                // per workgroup, M 1..8, batched.
                for (seed, (m, k, n)) in [(1, 333, 200), (3, 40, 136), (8, 97, 16), (5, 1, 8)].into_iter().enumerate() {
                    check_matmul(&be, d, &[m, k], &[k, n], 70 + seed as u64);
                }
                check_matmul(&be, d, &[2, 2, 72], &[2, 72, 24], 75);
                // K-contiguous B (W [N, K]): ragged N, K not a multiple of the unroll's reach.
                for (seed, (m, n, k)) in [(1, 70, 264), (2, 9, 40), (4, 33, 8), (7, 130, 1000)].into_iter().enumerate()
                {
                    check_kdot(&be, d, &[m, k], &[n, k], 80 + seed as u64);
                }
                check_kdot(&be, d, &[3, 2, 48], &[3, 17, 48], 85);
            }
        }
    }
}

/// F16/BF16 GEMV outputs stored as whole words without a zeroing pass (N even) and through the
/// zeroed fallback (N odd, one column per workgroup, K split, `gemv.zero`), at ragged sizes: each
/// executable runs twice on different inputs, so a stale word of the first run's output would
/// show in the second.
#[test]
fn packed_gemv_outputs_with_and_without_the_zeroing_pass() {
    let tunes: [&[&str]; 5] =
        [&[], &["gemv.ct=1"], &["gemv.ct=2", "gemv.subgroups=0"], &["gemv.split=3"], &["gemv.zero=1"]];
    for tune in tunes {
        let be = tuned(true, tune);
        for d in [DType::F16, DType::BF16] {
            if !be.device_caps().supports(d) {
                continue;
            }
            // (x shape, w shape, w stored [N, K]): N even and odd, batched, M up to 7.
            let cases: [(&[usize], &[usize], bool); 8] = [
                (&[1, 264], &[264, 136], false),
                (&[3, 40], &[40, 2056], false),
                (&[2, 2, 72], &[2, 72, 24], false),
                (&[1, 264], &[70, 264], true),
                (&[5, 40], &[38, 40], true),
                (&[1, 48], &[33, 48], true),
                (&[7, 1000], &[130, 1000], true),
                (&[3, 2, 48], &[3, 17, 48], true),
            ];
            for (seed, (xs, ws, kdot)) in cases.into_iter().enumerate() {
                let r = xs.len();
                let batch: Vec<usize> = (0..r - 2).collect();
                let op = if kdot { dot(&batch, &batch, &[r - 1], &[r - 1]) } else { Op::MatMul };
                let ins = |s: u64| (random(d, xs, s), random(d, ws, s + 1));
                let (x0, w0) = ins(200 + 2 * seed as u64);
                let (x1, w1) = ins(300 + 2 * seed as u64);
                let graph = graph(op.clone(), &[&x0, &w0]);
                let mut exe = be.compile(&graph, &Default::default()).unwrap();
                let mut want = cpu().compile(&graph, &Default::default()).unwrap();
                for (x, w) in [(&x0, &w0), (&x1, &w1)] {
                    let ins = [("x0", x.view()), ("x1", w.view())];
                    let got = exe.run(&ins).unwrap().remove(0);
                    let want = want.run(&ins).unwrap().remove(0);
                    let (g, w) = (got.view().to_f64_lossy(), want.view().to_f64_lossy());
                    let k = xs[r - 1] as f64;
                    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                        let tol = approx(d) * (1.0 + b.abs() + k.sqrt());
                        assert!((a - b).abs() <= tol, "{tune:?} {d} {xs:?} {ws:?} element {i}: {a} vs {b}");
                    }
                }
            }
        }
    }
}

/// The F32 vector-load GEMM (`linalg_tiled_vec.wgsl`) over its tiles, K steps and operand
/// layouts, each forced where the automatic choice would need large shapes: M and N straddle
/// every tile edge, K is a multiple of 4 but not of 16 or 32, batches broadcast, operands are
/// transposed (DotGeneral views) and K is split. lavapipe has 32 KiB of workgroup memory: the
/// forced 128 x 128 tile runs there with BK 8 only (BK 16 and 32 fall back to the automatic
/// tile, which the shaders' naga tests cover) or single-buffered, A is staged k-major or as
/// loaded, loads come before or after the arithmetic, and the scalar kernel runs for
/// comparison.
#[test]
fn vector_load_gemm_tiles_layouts_and_ragged_edges() {
    let configs: [&[&str]; 11] = [
        &[],
        &["gemm.tile=128x128"],
        &["gemm.tile=128x64", "gemm.bk=32"],
        &["gemm.tile=64x128", "gemm.split=3"],
        &["gemm.tile=128x128", "gemm.bk=8"],
        &["gemm.tile=128x128", "gemm.buffers=1", "gemm.prefetch=off"],
        &["gemm.tile=64x128", "gemm.bk=32", "gemm.buffers=1", "gemm.split=3"],
        &["gemm.tile=128x64", "gemm.prefetch=off"],
        &["gemm.tile=128x128", "gemm.astage=rows", "gemm.buffers=1"],
        &["gemm.tile=128x64", "gemm.astage=rows", "gemm.split=3"],
        &["gemm.vec=off", "gemm.tile=128x128"],
    ];
    let d = DType::F32;
    for cfg in configs {
        let be = tuned(true, cfg);
        check_matmul(&be, d, &[67, 36], &[36, 132], 70);
        check_matmul(&be, d, &[130, 52], &[52, 68], 71);
        check_matmul(&be, d, &[3, 20, 12], &[12, 68], 72);
        check_matmul(&be, d, &[2, 1, 12, 44], &[3, 44, 16], 73);
        // A^T·B (A M-contiguous), A·B^T (B K-contiguous), A^T·B^T.
        type Layout = (&'static [usize], &'static [usize], [&'static [usize]; 4]);
        let layouts: [Layout; 3] = [
            (&[44, 68], &[44, 72], [&[], &[], &[0], &[0]]),
            (&[68, 44], &[132, 44], [&[], &[], &[1], &[1]]),
            (&[28, 132], &[20, 28], [&[], &[], &[0], &[1]]),
        ];
        for (seed, (ls, rs, [lb, rb, lc, rc])) in layouts.iter().enumerate() {
            let l = random(d, ls, 80 + seed as u64);
            let r = random(d, rs, 90 + seed as u64);
            let op = dot(lb, rb, lc, rc);
            check(&be, op.clone(), op, &[&l, &r], &format!("{cfg:?} DotGeneral {ls:?} {rs:?} {lc:?} {rc:?}"));
        }
        // The fused epilogue, and a K split by the automatic choice (few tiles, long K).
        let (a, b, bias) = (random(d, &[66, 40], 74), random(d, &[40, 36], 75), random(d, &[36], 76));
        let act = Some(UnaryOp::Gelu);
        check(&be, fused(act), fused(None), &[&a, &b, &bias], &format!("{cfg:?} fused"));
        check_matmul(&be, d, &[12, 1040], &[1040, 20], 77);
    }
}

/// F16/BF16 outputs of the tiled kernels stored as whole words without a zeroing pass (N a
/// multiple of 4, K not split) and through the zeroed fallback (N = 66, K split): each executable
/// runs twice on different inputs, so a stale word of the first run's output would show.
#[test]
fn packed_tiled_outputs_with_and_without_the_zeroing_pass() {
    for tune in [&[][..], &["gemm.split=2"][..]] {
        let be = tuned(true, tune);
        for d in [DType::F16, DType::BF16] {
            let cases: [(&[usize], &[usize]); 4] =
                [(&[37, 40], &[40, 68]), (&[70, 24], &[24, 132]), (&[2, 20, 36], &[36, 44]), (&[19, 40], &[40, 66])];
            for (seed, (xs, ws)) in cases.into_iter().enumerate() {
                let ins = |s: u64| (random(d, xs, s), random(d, ws, s + 1));
                let (x0, w0) = ins(400 + 2 * seed as u64);
                let (x1, w1) = ins(500 + 2 * seed as u64);
                let graph = graph(Op::MatMul, &[&x0, &w0]);
                let mut exe = be.compile(&graph, &Default::default()).unwrap();
                let mut want = cpu().compile(&graph, &Default::default()).unwrap();
                for (x, w) in [(&x0, &w0), (&x1, &w1)] {
                    let ins = [("x0", x.view()), ("x1", w.view())];
                    let (g, w) = (exe.run(&ins).unwrap().remove(0), want.run(&ins).unwrap().remove(0));
                    let (g, w) = (g.view().to_f64_lossy(), w.view().to_f64_lossy());
                    let k = xs[xs.len() - 1] as f64;
                    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                        let tol = approx(d) * (1.0 + b.abs() + k.sqrt());
                        assert!((a - b).abs() <= tol, "{tune:?} {d} {xs:?} {ws:?} element {i}: {a} vs {b}");
                    }
                }
            }
        }
    }
}

/// Operands that live at non-zero offsets of an arena (the results of earlier nodes) and a
/// batched DotGeneral operand copied into scratch: the vector-load kernel's windows.
#[test]
fn vector_load_gemm_reads_windows_at_offsets() {
    let be = wgpu();
    let mut g = GraphBuilder::new();
    let x = g.input("x0", DType::F32, vec![2, 36, 20]).unwrap();
    let w = g.input("x1", DType::F32, vec![20, 44]).unwrap();
    let xs = g.add1(Op::Unary(UnaryOp::Neg), &[x]).unwrap();
    let ws = g.add1(Op::Unary(UnaryOp::Abs), &[w]).unwrap();
    let y = g.add1(Op::MatMul, &[xs, ws]).unwrap();
    let z = g.add1(Op::MatMul, &[x, ws]).unwrap();
    g.output(y).unwrap();
    g.output(z).unwrap();
    let graph = g.build().unwrap();
    let (xt, wt) = (random(DType::F32, &[2, 36, 20], 100), random(DType::F32, &[20, 44], 101));
    let ins = [("x0", xt.view()), ("x1", wt.view())];
    let got = be.compile(&graph, &Default::default()).unwrap().run(&ins).unwrap();
    let want = cpu().compile(&graph, &Default::default()).unwrap().run(&ins).unwrap();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let (g, w) = (g.view().to_f64_lossy(), w.view().to_f64_lossy());
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()) * 20.0, "output {k} element {i}: {a} vs {b}");
        }
    }
}
