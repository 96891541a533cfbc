//! Pipelines built in parallel at compile (`WgpuOptions::compile_threads`) give the same program
//! as pipelines built one after another, from the pruned modules as from the whole ones
//! (`Tuning::compile_prune`); the compile's breakdown (`CompileStats`) counts what was built.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{CompileOptions, DType, Executable, Graph, GraphBuilder, Tensor};
use backend_wgpu::{Tuning, WgpuBackend, WgpuOptions};

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
    run_with(WgpuOptions { compile_threads: threads, ..Default::default() })
}

fn run_with(opts: WgpuOptions) -> (Vec<u8>, usize) {
    let be = WgpuBackend::new(&opts).expect("a wgpu adapter");
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

#[test]
fn whole_modules_give_the_same_results_as_pruned_ones() {
    let mut tuning = Tuning::default();
    tuning.compile_prune = Some(false);
    let whole = run_with(WgpuOptions { tuning, compile_threads: 2, ..Default::default() });
    assert_eq!(whole, run(2));
}

#[test]
fn compile_stats_count_kernels_and_the_pipelines_built() {
    let be = WgpuBackend::new(&WgpuOptions { compile_threads: 2, ..Default::default() }).expect("a wgpu adapter");
    let exe = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    let s = exe.compile_stats().unwrap().clone();
    println!("{s}");
    assert_eq!(s.kernels, exe.dispatch_count());
    assert_eq!(s.nodes, 12);
    assert!(s.distinct_kernels >= 7 && s.distinct_kernels <= s.kernels, "{s:?}");
    assert_eq!(s.pipelines_built, s.distinct_kernels, "{s:?}");
    assert!(s.wgsl_bytes_built > 0 && s.wgsl_bytes_built < s.wgsl_bytes, "{s:?}");
    assert!(s.lower + s.pipelines + s.dispatches <= s.total, "{s:?}");
    // The same graph again on the same device: every pipeline is found, none built.
    let again = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    let s2 = again.compile_stats().unwrap();
    assert_eq!((s2.pipelines_built, s2.distinct_kernels), (0, s.distinct_kernels), "{s2:?}");
}
