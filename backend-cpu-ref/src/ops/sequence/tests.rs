//! `Scan` on hand-built graphs against hand-computed results: carries, a broadcast input, a
//! sequence input, stacked per-step values, `reverse`, `save_trajectory` and `length = 0`.

use crate::CpuRefBackend;
use backend_api::op::BinaryOp;
use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor};

/// The body: carry h F32 [2], broadcast b F32 [2], step x F32 [2] → h' = h + x + b, y = h' · h'.
fn body() -> Graph {
    let mut g = GraphBuilder::new();
    let h = g.input("h", DType::F32, vec![2]).unwrap();
    let b = g.input("b", DType::F32, vec![2]).unwrap();
    let x = g.input("x", DType::F32, vec![2]).unwrap();
    let hx = g.binary(BinaryOp::Add, h, x).unwrap();
    let h1 = g.binary(BinaryOp::Add, hx, b).unwrap();
    let y = g.binary(BinaryOp::Mul, h1, h1).unwrap();
    g.output(h1).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

/// Scan of [`body`] over `length` steps; outputs as f64.
fn scan(length: usize, reverse: bool, trajectory: bool, xs: &[f32]) -> Vec<Vec<f64>> {
    let mut g = GraphBuilder::new();
    let h = g.input("h0", DType::F32, vec![2]).unwrap();
    let b = g.input("b", DType::F32, vec![2]).unwrap();
    let x = g.input("xs", DType::F32, vec![length, 2]).unwrap();
    let outs = g.scan(body(), length as u64, reverse, (&[h], &[b], &[x]), trajectory).unwrap();
    for o in &outs {
        g.output(*o).unwrap();
    }
    let graph = g.build().unwrap();
    let mut exe = CpuRefBackend::new().compile(&graph, &Default::default()).unwrap();
    let h0 = Tensor::from_slice(&[2], &[1.0f32, 0.0]).unwrap();
    let bv = Tensor::from_slice(&[2], &[0.5f32, -1.0]).unwrap();
    let xv = Tensor::from_slice(&[length, 2], xs).unwrap();
    let got = exe.run(&[("h0", h0.view()), ("b", bv.view()), ("xs", xv.view())]).unwrap();
    got.iter().map(|t| t.view().to_f64_lossy()).collect()
}

const XS: [f32; 6] = [1.0, 2.0, 0.0, -1.0, 3.0, 1.0];

#[test]
fn scan_carries_and_stacks_per_step_values() {
    // h: [1, 0] → [2.5, 1] → [3, -1] → [6.5, -1]; y = h²
    let got = scan(3, false, true, &XS);
    assert_eq!(got[0], vec![6.5, -1.0]);
    assert_eq!(got[1], vec![6.25, 1.0, 9.0, 1.0, 42.25, 1.0]);
    // the trajectory: the carry after each step
    assert_eq!(got[2], vec![2.5, 1.0, 3.0, -1.0, 6.5, -1.0]);
}

#[test]
fn reversed_scans_put_row_t_at_step_t() {
    // steps 2, 1, 0: h: [1, 0] → [4.5, 0] → [5, -2] → [6.5, -1]
    let got = scan(3, true, true, &XS);
    assert_eq!(got[0], vec![6.5, -1.0]);
    // row t is step t's value: row 2 first computed
    assert_eq!(got[1], vec![42.25, 1.0, 25.0, 4.0, 20.25, 0.0]);
    assert_eq!(got[2], vec![6.5, -1.0, 5.0, -2.0, 4.5, 0.0]);
}

#[test]
fn an_empty_scan_returns_the_initial_carries_and_empty_stacks() {
    let got = scan(0, false, true, &[]);
    assert_eq!(got, vec![vec![1.0, 0.0], vec![], vec![]]);
    let mut g = GraphBuilder::new();
    let h = g.input("h0", DType::F32, vec![2]).unwrap();
    let b = g.input("b", DType::F32, vec![2]).unwrap();
    let x = g.input("xs", DType::F32, vec![0, 2]).unwrap();
    let outs = g.scan(body(), 0, false, (&[h], &[b], &[x]), false).unwrap();
    g.output(outs[1]).unwrap();
    let graph = g.build().unwrap();
    let mut exe = CpuRefBackend::new().compile(&graph, &Default::default()).unwrap();
    let z = Tensor::from_slice(&[2], &[0.0f32, 0.0]).unwrap();
    let xs = Tensor::from_bytes(DType::F32, &[0, 2], vec![]).unwrap();
    let y = exe.run(&[("h0", z.view()), ("b", z.view()), ("xs", xs.view())]).unwrap();
    assert_eq!(y[0].shape(), &[0, 2]);
}
