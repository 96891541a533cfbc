//! The toy composite op: proof that the family builders compose. A MatMul node is lowered as
//! "GEMM then softmax" — `linalg::matmul` into a scratch operand, `norm::softmax` of it into the
//! node's output — through the real compile and run path (`WgpuExecutable::compile_lowered` with
//! a test [`LowerFn`]), and compared with cpu-ref running the graph MatMul → Softmax.
//!
//! Shapes straddle the 64 x 64 tile and cover the skinny kernel and split K (whose partial sums
//! are a second scratch buffer of the same node). A second lowering puts the product in a window
//! at a non-zero offset of a larger scratch buffer and zeroes the window before it afterwards, so
//! a binding that ignored the offset would feed the softmax zeros.

use super::{linalg, norm, Lower, LowerFn, NodeIo};
use crate::device::{DeviceContext, WgpuOptions};
use crate::exec::WgpuExecutable;
use backend_api::op::Op;
use backend_api::{Backend, DType, Executable, Graph, GraphBuilder, Result, Tensor};
use backend_cpu_ref::CpuRefBackend;
use std::sync::Arc;

/// (m, k, n): tiled with edges on every side, skinny (m <= 8), skinny with K split, tiled with K
/// split.
const SHAPES: [(usize, usize, usize); 4] = [(65, 33, 70), (5, 40, 70), (3, 1100, 70), (65, 1030, 65)];

/// Every node as in the product, except MatMul: softmax(x · w) along the last axis.
fn gemm_then_softmax(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    if !matches!(io.node.op, Op::MatMul) {
        return super::lower(b, io);
    }
    let out = io.output(0)?;
    let t = b.temp(out.dtype, out.dims.clone())?;
    linalg::matmul(b, io.input(0)?, io.input(1)?, &t)?;
    norm::softmax(b, 1, &t, out)
}

/// [`gemm_then_softmax`] with the product in a window of a larger scratch buffer, at an offset
/// aligned to the device's storage offset alignment and past a first window of the same size,
/// which is zeroed between the GEMM and the softmax.
fn gemm_then_softmax_in_window(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    if !matches!(io.node.op, Op::MatMul) {
        return super::lower(b, io);
    }
    let out = io.output(0)?;
    let align = b.caps().limits.min_storage_buffer_offset_alignment.max(4) as usize;
    let bytes = out.numel() * out.dtype.size();
    let offset = bytes.next_multiple_of(align).max(align);
    let elems = offset / out.dtype.size();
    let big = b.temp(out.dtype, vec![elems + out.numel()])?;
    let first = big.slice(0, out.dims.clone())?;
    let t = big.slice(elems, out.dims.clone())?;
    assert_eq!(t.window.offset % align as u64, 0);
    assert!(t.window.offset > 0);
    linalg::matmul(b, io.input(0)?, io.input(1)?, &t)?;
    b.zero(&first)?;
    norm::softmax(b, 1, &t, out)
}

/// Deterministic values in [-1, 1).
fn random(shape: &[usize], seed: u64) -> Tensor {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect();
    Tensor::from_slice(shape, &v).unwrap()
}

/// `x[m,k], w[k,n] -> MatMul`, followed by Softmax along the last axis when `softmax`.
fn graph(m: usize, k: usize, n: usize, softmax: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, vec![m, k]).unwrap();
    let w = g.input("w", DType::F32, vec![k, n]).unwrap();
    let mut y = g.add1(Op::MatMul, &[x, w]).unwrap();
    if softmax {
        y = g.add1(Op::Softmax { axis: 1 }, &[y]).unwrap();
    }
    g.output(y).unwrap();
    g.build().unwrap()
}

fn run(exe: &mut dyn Executable, x: &Tensor, w: &Tensor) -> Vec<f32> {
    let out = exe.run(&[("x", x.view()), ("w", w.view())]).unwrap().remove(0);
    out.view().to_f64_lossy().iter().map(|&v| v as f32).collect()
}

/// Compiles the one-MatMul graph with `lower` and checks it against cpu-ref's MatMul → Softmax.
fn check(lower: LowerFn, what: &str) {
    let ctx = Arc::new(DeviceContext::open(&WgpuOptions::default()).expect("a wgpu adapter"));
    for (seed, &(m, k, n)) in SHAPES.iter().enumerate() {
        let (x, w) = (random(&[m, k], 2 * seed as u64 + 1), random(&[k, n], 2 * seed as u64 + 2));
        let mut exe = WgpuExecutable::compile_lowered(&ctx, &graph(m, k, n, false), &Default::default(), lower)
            .unwrap_or_else(|e| panic!("{what} {m}x{k}x{n}: {e}"));
        assert!(exe.dispatch_count() >= 2, "{what}: a GEMM and a softmax");
        let got = run(&mut exe, &x, &w);
        let mut reference = CpuRefBackend::new().compile(&graph(m, k, n, true), &Default::default()).unwrap();
        let want = run(reference.as_mut(), &x, &w);
        assert_eq!(got.len(), m * n);
        for (i, (g, r)) in got.iter().zip(&want).enumerate() {
            assert!((g - r).abs() <= 1e-6 + 2e-4 * r.abs(), "{what} {m}x{k}x{n}: element {i}: got {g}, want {r}");
        }
    }
}

#[test]
fn gemm_then_softmax_matches_cpu_ref() {
    check(gemm_then_softmax, "GEMM → softmax");
}

#[test]
fn gemm_into_a_window_of_scratch_matches_cpu_ref() {
    check(gemm_then_softmax_in_window, "GEMM → softmax in a window");
}
