//! The demo: a small transformer-style block built from core ops, with deterministic weights,
//! run on the backend named on the command line (default `wgpu`) and compared with `cpu-ref`.
//!
//! Usage: `cargo run --release -p demo [-- BACKEND]`

// Link the plugin crates so that their registrations are kept (see backend_api::registry).
use backend_cpu_ref as _;
use backend_wgpu as _;

use anyhow::{Context, Result};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use std::time::Instant;

const BATCH: usize = 16;
const WIDTH: usize = 96;
const HIDDEN: usize = 256;
const CLASSES: usize = 10;

/// Deterministic pseudo-random values in [-scale, scale) (64-bit LCG; no dependency needed).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// x → LayerNorm → Linear+GELU → Linear → residual add → RmsNorm → Linear → Softmax.
fn build() -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [BATCH, WIDTH])?;
    let ln_g = g.param("ln.gamma", DType::F32, &[WIDTH])?;
    let ln_b = g.param("ln.beta", DType::F32, &[WIDTH])?;
    let w1 = g.param("fc1.w", DType::F32, &[WIDTH, HIDDEN])?;
    let b1 = g.param("fc1.b", DType::F32, &[HIDDEN])?;
    let w2 = g.param("fc2.w", DType::F32, &[HIDDEN, WIDTH])?;
    let rms_g = g.param("rms.gamma", DType::F32, &[WIDTH])?;
    let head = g.param("head.w", DType::F32, &[WIDTH, CLASSES])?;
    let h = g.layer_norm(x, ln_g, Some(ln_b), -1, 1e-5)?;
    let h = g.fused_matmul_bias_act(h, w1, b1, Some(UnaryOp::Gelu))?;
    let h = g.matmul(h, w2)?;
    let h = g.binary(BinaryOp::Add, h, x)?;
    let h = g.rms_norm(h, rms_g, None, -1, 1e-6)?;
    let logits = g.matmul(h, head)?;
    let probs = g.softmax(logits, -1)?;
    g.output(probs)?;
    Ok(g.build()?)
}

fn params() -> Result<Vec<(&'static str, Tensor)>> {
    let t = |shape: &[usize], seed, scale| Tensor::from_slice(shape, &values(shape.iter().product(), seed, scale));
    Ok(vec![
        ("ln.gamma", t(&[WIDTH], 1, 0.5)?),
        ("ln.beta", t(&[WIDTH], 2, 0.1)?),
        ("fc1.w", t(&[WIDTH, HIDDEN], 3, 0.1)?),
        ("fc1.b", t(&[HIDDEN], 4, 0.1)?),
        ("fc2.w", t(&[HIDDEN, WIDTH], 5, 0.06)?),
        ("rms.gamma", t(&[WIDTH], 6, 1.0)?),
        ("head.w", t(&[WIDTH, CLASSES], 7, 0.3)?),
    ])
}

fn run_on(name: &str, graph: &Graph, x: &Tensor, iters: usize) -> Result<(Tensor, f64, String)> {
    let backend = backend_api::create(name).with_context(|| format!("creating backend {name:?}"))?;
    let device = backend.capabilities().device;
    let mut exe = backend.compile(graph, &Default::default())?;
    for (n, t) in params()? {
        exe.set_param(n, t.view())?;
    }
    let mut out = exe.run(&[("x", x.view())])?; // warm-up
    let start = Instant::now();
    for _ in 0..iters {
        out = exe.run(&[("x", x.view())])?;
    }
    let per_run = start.elapsed().as_secs_f64() / iters as f64;
    let first = out.into_iter().next().context("graph has one output")?;
    Ok((first, per_run, device))
}

fn main() -> Result<()> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "wgpu".to_string());
    let names: Vec<&str> = backend_api::available().into_iter().map(|(n, _)| n).collect();
    println!("registered backends: {names:?}");
    let graph = build()?;
    let x = Tensor::from_slice(&[BATCH, WIDTH], &values(BATCH * WIDTH, 42, 2.0))?;
    let (got, per_run, device) = run_on(&name, &graph, &x, 20)?;
    let (want, _, _) = run_on("cpu-ref", &graph, &x, 1)?;
    let (g, w) = (got.to_vec::<f32>()?, want.to_vec::<f32>()?);
    let checksum: f64 = g.iter().enumerate().map(|(i, v)| (i % 7 + 1) as f64 * *v as f64).sum();
    let max_diff = g.iter().zip(&w).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    println!("backend:   {name}");
    println!("adapter:   {device}");
    println!("output:    {:?} {}", got.shape(), got.dtype());
    println!("checksum:  {checksum:.6}");
    println!("max |{name} - cpu-ref|: {max_diff:.3e}");
    println!(
        "time/run:  {:.3} ms (graph of {} nodes; input upload, kernels and readback)",
        per_run * 1e3,
        graph.nodes().len()
    );
    anyhow::ensure!(max_diff <= 1e-4, "{name} differs from cpu-ref by {max_diff}");
    Ok(())
}
