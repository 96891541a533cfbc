//! End to end: a SwiGLU MLP block `down(silu(gate(x)) · up(x))` whose projections are
//! QuantMatMuls with GGUF-style weights (gate and up in Q4_K, down in Q8_0), run on wgpu and
//! compared with cpu-ref running the same graph and with the same block built from the
//! dequantised f32 weights (plain MatMuls). The blocks are valid data of their formats with
//! realistic magnitudes: small f16 super-scales and mins, every 6-bit sub-scale and every quant
//! code drawn at random. Row counts cover one token (decode) and a prompt of several tokens.

mod common;
use backend_api::op::{BinaryOp, QuantFormat, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;
use common::{check, cpu, random, run, wgpu, Rng};

/// Model width D and hidden width H (whole Q4_K super-blocks of 256).
const D: usize = 256;
const H: usize = 512;

/// `n` rows of `k / 256` Q4_K blocks: `d` and `dmin` f16 in [0, 2^-6), random scale bytes and
/// quants.
fn q4_k(n: usize, k: usize, r: &mut Rng) -> Tensor {
    let mut w = Vec::with_capacity(n * k / 256 * 144);
    for _ in 0..n * k / 256 {
        for _ in 0..2 {
            w.extend_from_slice(&half::f16::from_f64(r.uniform(0.0, 1.0 / 64.0)).to_le_bytes());
        }
        w.extend((0..140).map(|_| (r.next() >> 56) as u8));
    }
    Tensor::from_bytes(DType::U8, &[n, k / 256 * 144], w).unwrap()
}

/// `n` rows of `k / 32` Q8_0 blocks: `d` f16 in [0, 2^-9), random signed quants.
fn q8_0(n: usize, k: usize, r: &mut Rng) -> Tensor {
    let mut w = Vec::with_capacity(n * k / 32 * 34);
    for _ in 0..n * k / 32 {
        w.extend_from_slice(&half::f16::from_f64(r.uniform(0.0, 1.0 / 512.0)).to_le_bytes());
        w.extend((0..32).map(|_| (r.next() >> 56) as u8));
    }
    Tensor::from_bytes(DType::U8, &[n, k / 32 * 34], w).unwrap()
}

/// A projection of `x` by a weight input named `name`: quantised (`Some(format)`, the weight's
/// bytes) or dense (`None`, `Wᵀ` as f32 `[K, N]`).
fn project(
    g: &mut GraphBuilder,
    x: backend_api::Value,
    w: &Tensor,
    name: &str,
    q: Option<QuantFormat>,
) -> backend_api::Value {
    let wv = g.input(name, w.dtype(), w.shape().to_vec()).unwrap();
    match q {
        Some(f) => g.quant_matmul(x, &[wv], f).unwrap(),
        None => g.matmul(x, wv).unwrap(),
    }
}

/// The MLP graph over `x` of dtype `xd` and `rows` rows; quantised weights when `quant`.
fn mlp(xd: DType, rows: usize, ws: &[Tensor; 3], quant: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", xd, vec![rows, D]).unwrap();
    let fmt = |f| quant.then_some(f);
    let gate = project(&mut g, x, &ws[0], "gate", fmt(QuantFormat::Q4_K));
    let up = project(&mut g, x, &ws[1], "up", fmt(QuantFormat::Q4_K));
    let act = g.unary(UnaryOp::Silu, gate).unwrap();
    let h = g.binary(BinaryOp::Mul, act, up).unwrap();
    let y = project(&mut g, h, &ws[2], "down", fmt(QuantFormat::Q8_0));
    g.output(y).unwrap();
    g.build().unwrap()
}

/// `Wᵀ` `[K, N]` in f32 of a quantised weight of `format`, decoded by cpu-ref.
fn dequantised(format: QuantFormat, w: &Tensor, k: usize) -> Tensor {
    let (wt, n) = common::quant::decoded_t(format, std::slice::from_ref(w), k);
    common::tensor(DType::F32, &[k, n], &wt)
}

/// Runs the MLP on `be` with the weights `ws`.
fn forward(be: &dyn backend_api::Backend, x: &Tensor, ws: &[Tensor; 3], quant: bool) -> Tensor {
    let graph = mlp(x.dtype(), x.shape()[0], ws, quant);
    let inputs = [("x", x), ("gate", &ws[0]), ("up", &ws[1]), ("down", &ws[2])];
    run(be, &graph, &inputs).remove(0)
}

#[test]
fn swiglu_mlp_with_q4_k_and_q8_0_weights() {
    let mut r = Rng(0x5eed_1234);
    let quant = [q4_k(H, D, &mut r), q4_k(H, D, &mut r), q8_0(D, H, &mut r)];
    let dense = [
        dequantised(QuantFormat::Q4_K, &quant[0], D),
        dequantised(QuantFormat::Q4_K, &quant[1], D),
        dequantised(QuantFormat::Q8_0, &quant[2], H),
    ];
    // The decoded weights are finite and not all tiny: the check below can fail.
    let w0 = dense[0].view().to_f64_lossy();
    assert!(w0.iter().all(|v| v.is_finite()) && w0.iter().any(|v| v.abs() > 0.05));
    for (rows, xd, seed) in [(1, DType::F32, 1), (5, DType::F16, 2), (19, DType::F32, 3), (12, DType::BF16, 4)] {
        let x = random(xd, &[rows, D], -1.0, 1.0, seed);
        let got = forward(wgpu(), &x, &quant, true);
        let want = forward(cpu(), &x, &quant, true);
        let tol = 4.0 * common::approx(xd);
        let name = format!("quantised MLP, {rows} rows of {xd}");
        let scale = want.view().to_f64_lossy().iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(scale > 1e-3, "{name}: outputs too small to compare ({scale})");
        // Errors relative to the largest output: |got - want| <= tol * (scale + |want|).
        let m = vec![scale; want.view().to_f64_lossy().len()];
        check(&name, &got, &want, Some(tol), Some(&m));
        // The same block with the dequantised weights as dense f32 MatMuls on cpu-ref.
        let dense_out = forward(cpu(), &as_f32(&x), &dense, false);
        check(&format!("{name} vs dense f32 weights"), &as_f32(&got), &dense_out, Some(tol), Some(&m));
    }
}

/// `t` as f32 (exact from F16/BF16).
fn as_f32(t: &Tensor) -> Tensor {
    common::tensor(DType::F32, t.shape(), &t.view().to_f64_lossy())
}
