//! Quantised weights and the QuantMatMul graph shared by the QuantMatMul and QuantGroupedMatMul
//! tests: bytes drawn over the whole code space (NaN and infinite codes and f16 scales included).

use super::{cpu, random, run, Rng};
use backend_api::op::QuantFormat;
use backend_api::{DType, GraphBuilder, Tensor};

/// Deterministic random bytes.
pub fn bytes(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed | 1);
    Tensor::from_bytes(DType::U8, shape, (0..n).map(|_| (r.next() >> 56) as u8).collect()).unwrap()
}

/// The same bytes as I8.
pub fn as_i8(t: Tensor) -> Tensor {
    Tensor::from_bytes(DType::I8, t.shape(), t.bytes().to_vec()).unwrap()
}

/// K for `format` and the weight inputs for `lead ++ [N, K]` (scale dtype `s` where the format
/// has one; a per-tensor scale is `lead`-shaped): `lead` is `[]` for QuantMatMul, `[E]` for
/// QuantGroupedMatMul.
pub fn weights(format: QuantFormat, lead: &[usize], n: usize, s: DType, seed: u64) -> (usize, Vec<Tensor>) {
    let sh = |tail: &[usize]| -> Vec<usize> { lead.iter().chain(tail).copied().collect() };
    let scales = |k: usize, b: u32| random(s, &sh(&[n, k.div_ceil(b as usize)]), -1.0, 1.0, seed + 1);
    match format {
        QuantFormat::Int8Block { block_size } => (37, vec![as_i8(bytes(&sh(&[n, 37]), seed)), scales(37, block_size)]),
        QuantFormat::Int8BlockAsym { block_size } => {
            let zero = random(s, &sh(&[n, 37usize.div_ceil(block_size as usize)]), -3.0, 200.0, seed + 2);
            (37, vec![bytes(&sh(&[n, 37]), seed), scales(37, block_size), zero])
        }
        QuantFormat::Int4Block { block_size } => (37, vec![bytes(&sh(&[n, 19]), seed), scales(37, block_size)]),
        QuantFormat::Fp8E4m3 => {
            (37, vec![bytes(&sh(&[n, 37]), seed), random(DType::F32, &sh(&[n]), -2.0, 2.0, seed + 1)])
        }
        QuantFormat::Fp8E5m2 => {
            (37, vec![bytes(&sh(&[n, 37]), seed), random(DType::F32, &sh(&[]), -2.0, 2.0, seed + 1)])
        }
        QuantFormat::Nvfp4 => {
            let global = random(DType::F32, &sh(&[]), 0.0, 0.01, seed + 2);
            (48, vec![bytes(&sh(&[n, 24]), seed), bytes(&sh(&[n, 3]), seed + 1), global])
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
            let blocks = if qk == 32 { 3 } else { 2 };
            let shape = sh(&[n, blocks * bb]);
            let mut w = bytes(&shape, seed).bytes().to_vec();
            if format == QuantFormat::Q8_K {
                // Q8_K's f32 scale from random bits reaches 1e38, where sums overflow in an
                // order-dependent way: draw it from [-1, 1) instead.
                let mut r = Rng(seed | 1);
                for block in w.chunks_exact_mut(bb) {
                    block[..4].copy_from_slice(&(r.uniform(-1.0, 1.0) as f32).to_le_bytes());
                }
            }
            (qk * blocks, vec![Tensor::from_bytes(DType::U8, &shape, w).unwrap()])
        }
    }
}

/// `QuantMatMul(x, ws)` on `be`.
pub fn quant_matmul(be: &dyn backend_api::Backend, format: QuantFormat, x: &Tensor, ws: &[Tensor]) -> Tensor {
    let mut g = GraphBuilder::new();
    let xv = g.input("x", x.dtype(), x.shape().to_vec()).unwrap();
    let names: Vec<String> = (0..ws.len()).map(|i| format!("w{i}")).collect();
    let wv: Vec<_> = ws.iter().zip(&names).map(|(w, n)| g.input(n, w.dtype(), w.shape().to_vec()).unwrap()).collect();
    let y = g.quant_matmul(xv, &wv, format).unwrap();
    g.output(y).unwrap();
    let graph = g.build().unwrap();
    let mut inputs = vec![("x", x)];
    inputs.extend(names.iter().map(|n| n.as_str()).zip(ws));
    run(be, &graph, &inputs).remove(0)
}

/// Every format of §2.6.7 once, with block sizes that leave K ragged (the 32-element formats
/// first, then the scale-tensor ones, FP8, Nvfp4 and the K-quants).
pub const EVERY_FORMAT: [QuantFormat; 17] = [
    QuantFormat::Q8_0,
    QuantFormat::Int8Block { block_size: 8 },
    QuantFormat::Int8BlockAsym { block_size: 5 },
    QuantFormat::Int4Block { block_size: 6 },
    QuantFormat::Q4_0,
    QuantFormat::Q4_1,
    QuantFormat::Q5_0,
    QuantFormat::Q5_1,
    QuantFormat::Fp8E4m3,
    QuantFormat::Fp8E5m2,
    QuantFormat::Nvfp4,
    QuantFormat::Q2_K,
    QuantFormat::Q3_K,
    QuantFormat::Q4_K,
    QuantFormat::Q5_K,
    QuantFormat::Q6_K,
    QuantFormat::Q8_K,
];

/// `Wᵀ` (`[K, N]`, as f64) decoded by cpu-ref, as `QuantMatMul(I_K, ws)`, and N.
pub fn decoded_t(format: QuantFormat, ws: &[Tensor], k: usize) -> (Vec<f64>, usize) {
    let eye: Vec<f64> = (0..k * k).map(|i| if i / k == i % k { 1.0 } else { 0.0 }).collect();
    let wt = quant_matmul(cpu(), format, &super::tensor(DType::F32, &[k, k], &eye), ws);
    (wt.view().to_f64_lossy(), wt.shape()[1])
}

/// `M = Σ_k |x[m, k]|·|W[n, k]|` for x `[M, K]` and `W` decoded by cpu-ref.
pub fn magnitudes(format: QuantFormat, x: &Tensor, ws: &[Tensor], k: usize) -> Vec<f64> {
    let (w, n) = decoded_t(format, ws, k);
    let xs = x.view().to_f64_lossy();
    let m = xs.len() / k;
    (0..m * n).map(|i| (0..k).map(|j| (xs[(i / n) * k + j] * w[j * n + i % n]).abs()).sum()).collect()
}
