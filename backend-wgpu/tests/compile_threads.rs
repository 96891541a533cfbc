//! Pipelines built in parallel at compile (`WgpuOptions::compile_threads`) give the same program
//! as pipelines built one after another.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{CompileOptions, DType, Executable, Graph, GraphBuilder, Tensor};
use backend_wgpu::{WgpuBackend, WgpuOptions};

/// A chain of distinct elementwise kernels (each op its own pipeline).
fn graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [3, 37]).unwrap();
    let mut h = x;
    for op in [UnaryOp::Exp, UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Sqrt, UnaryOp::Tanh, UnaryOp::Sigmoid] {
        h = g.unary(op, h).unwrap();
        h = g.binary(BinaryOp::Add, h, x).unwrap();
    }
    g.output(h).unwrap();
    g.build().unwrap()
}

fn run(threads: usize) -> (Vec<u8>, usize) {
    let be = WgpuBackend::new(&WgpuOptions { compile_threads: threads, ..Default::default() }).expect("a wgpu adapter");
    let mut exe = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    let x: Vec<f32> = (0..111).map(|i| (i as f32 - 55.0) / 20.0).collect();
    let x = Tensor::from_slice(&[3, 37], &x).unwrap();
    let y = exe.run(&[("x", x.view())]).unwrap();
    (y[0].bytes().to_vec(), exe.dispatch_count())
}

#[test]
fn parallel_pipeline_builds_give_the_same_program() {
    let (serial, n1) = run(1);
    let (parallel, n4) = run(4);
    assert_eq!(n1, n4);
    assert!(n1 >= 12, "{n1} dispatches");
    assert_eq!(serial, parallel);
}
