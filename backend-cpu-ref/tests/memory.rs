//! Memory and empty tensors: a graph declaring more memory than the cap gets a `Capacity` error
//! naming the node (never an abort), and ops over empty tensors whose other dims are huge finish
//! at once with correct empty outputs.

use backend_api::op::ReduceOp;
use backend_api::{Backend, CompileOptions, DType, ErrorKind, Executable, GraphBuilder, Tensor};
use backend_cpu_ref::{CpuRefBackend, CpuRefOptions};
use std::time::{Duration, Instant};

/// Expand of a scalar input to [2^20, 2^20] F32 (4 TiB), then Reduce Sum over everything.
fn huge_intermediate(backend: &CpuRefBackend) -> Box<dyn Executable> {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [0usize; 0]).unwrap();
    let big = b.expand(x, [1usize << 20, 1 << 20]).unwrap();
    let s = b.reduce(ReduceOp::Sum, big, &[0, 1], false).unwrap();
    b.output(s).unwrap();
    backend.compile(&b.build().unwrap(), &CompileOptions::default()).unwrap()
}

fn assert_capacity(backend: &CpuRefBackend) {
    let mut exe = huge_intermediate(backend);
    let x = Tensor::from_slice(&[], &[1.0f32]).unwrap();
    let err = exe.run(&[("x", x.view())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Capacity, "{err}");
    assert_eq!(err.node_op(), Some("Expand"), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("1048576, 1048576") && msg.contains("max_memory_bytes"), "{msg}");
    assert!(msg.contains(&backend.options().max_memory_bytes.to_string()), "{msg}");
}

#[test]
fn a_huge_intermediate_is_refused_under_a_small_cap() {
    assert_capacity(&CpuRefBackend::with_options(&CpuRefOptions { max_memory_bytes: 1 << 20 }));
}

#[test]
fn a_huge_intermediate_is_refused_under_the_default_cap() {
    assert_capacity(&CpuRefBackend::new());
}

#[test]
fn inputs_count_against_the_cap() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [256usize]).unwrap();
    b.output(x).unwrap();
    let be = CpuRefBackend::with_options(&CpuRefOptions { max_memory_bytes: 512 });
    let mut exe = be.compile(&b.build().unwrap(), &CompileOptions::default()).unwrap();
    let err = exe.run(&[("x", Tensor::zeros(DType::F32, &[256]).view())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Capacity, "{err}");
    assert!(err.message().contains("input \"x\""), "{err}");
}

#[test]
fn small_graphs_run_under_a_small_cap() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [4usize]).unwrap();
    let s = b.reduce(ReduceOp::Sum, x, &[0], false).unwrap();
    b.output(s).unwrap();
    let be = CpuRefBackend::with_options(&CpuRefOptions { max_memory_bytes: 4096 });
    let mut exe = be.compile(&b.build().unwrap(), &CompileOptions::default()).unwrap();
    let x = Tensor::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let out = exe.run(&[("x", x.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![10.0]);
}

/// Builds a graph from one empty input of `dims` through `op`, runs it, and checks it finishes
/// quickly with empty outputs of the declared shapes.
fn runs_fast(dims: &[usize], op: impl Fn(&mut GraphBuilder, backend_api::Value) -> Vec<backend_api::Value>) {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, dims).unwrap();
    let outs = op(&mut b, x);
    let want: Vec<Vec<usize>> = outs.iter().map(|&v| b.value_type(v).unwrap().shape.as_static().unwrap()).collect();
    for v in outs {
        b.output(v).unwrap();
    }
    let mut exe = CpuRefBackend::new().compile(&b.build().unwrap(), &CompileOptions::default()).unwrap();
    let x = Tensor::from_bytes(DType::F32, dims, Vec::new()).unwrap();
    let t = Instant::now();
    let got = exe.run(&[("x", x.view())]).unwrap();
    assert!(t.elapsed() < Duration::from_millis(500), "{dims:?} took {:?}", t.elapsed());
    let shapes: Vec<Vec<usize>> = got.iter().map(|t| t.shape().to_vec()).collect();
    assert_eq!(shapes, want);
}

const G30: usize = 1 << 30;
const G62: usize = 1 << 62;

#[test]
fn concat_of_empty() {
    runs_fast(&[0, G30], |b, x| vec![b.concat(&[x, x], 1).unwrap()]);
    runs_fast(&[G30, 0], |b, x| vec![b.concat(&[x, x], 0).unwrap()]);
}

#[test]
fn top_k_of_empty() {
    runs_fast(&[0, G30], |b, x| {
        let (v, i) = b.top_k(x, 1, 1, true, DType::I32).unwrap();
        vec![v, i]
    });
}

#[test]
fn softmaxes_of_empty() {
    runs_fast(&[0, G62], |b, x| vec![b.log_softmax(x, 1).unwrap()]);
    runs_fast(&[G62, 0], |b, x| vec![b.softmax(x, 0).unwrap()]);
}

#[test]
fn cumsum_of_empty() {
    runs_fast(&[0, G62], |b, x| vec![b.cumsum(x, 1, false, false).unwrap()]);
}

#[test]
fn reduce_of_empty() {
    runs_fast(&[0, G62], |b, x| vec![b.reduce(ReduceOp::Sum, x, &[1], false).unwrap()]);
    runs_fast(&[G62, 0], |b, x| vec![b.reduce(ReduceOp::Max, x, &[0], true).unwrap()]);
}

#[test]
fn an_impossible_declared_size_is_a_shape_error() {
    // Max over the empty axis of [2^62, 0] keeps 2^62 rows: 2^64 bytes of F32, refused when the
    // node is built (before cpu-ref sees it).
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [G62, 0]).unwrap();
    let err = b.reduce(ReduceOp::Max, x, &[1], true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Shape, "{err}");
    assert_eq!(err.node_op(), Some("Reduce.Max"), "{err}");
}

#[test]
fn gather_of_empty() {
    runs_fast(&[0, G62], |b, x| {
        let i = b.constant(&Tensor::from_slice(&[2], &[0i32, 1]).unwrap()).unwrap();
        vec![b.gather(x, i, 1).unwrap()]
    });
}

#[test]
fn matmul_argmax_cross_entropy_of_empty() {
    runs_fast(&[G62, 0, 3], |b, x| {
        let w = b.constant(&Tensor::from_slice(&[3, 2], &[1.0f32; 6]).unwrap()).unwrap();
        vec![b.matmul(x, w).unwrap()]
    });
    runs_fast(&[G62, 0, 3], |b, x| vec![b.arg_max(x, 2, false, DType::I64).unwrap()]);
    runs_fast(&[G62, 0, 3], |b, x| vec![b.softmax_cross_entropy(x, x, 2).unwrap()]);
    runs_fast(&[0, G62], |b, x| vec![b.cumsum_backward(x, 0, true, true).unwrap()]);
}

#[test]
fn values_are_released_after_their_last_reader() {
    // 30 negations of an F32[64] (256 bytes each): kept to the end they would pass an 8 KiB cap
    // (with each node's working-memory estimate); released after use they stay far below it.
    let mut b = GraphBuilder::new();
    let mut v = b.input("x", DType::F32, [64usize]).unwrap();
    for _ in 0..30 {
        v = b.unary(backend_api::op::UnaryOp::Neg, v).unwrap();
    }
    b.output(v).unwrap();
    let be = CpuRefBackend::with_options(&CpuRefOptions { max_memory_bytes: 8192 });
    let mut exe = be.compile(&b.build().unwrap(), &CompileOptions::default()).unwrap();
    let x = Tensor::from_slice(&[64], &[1.5f32; 64]).unwrap();
    let out = exe.run(&[("x", x.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![1.5f32; 64]);
}

#[test]
fn empty_tensors_whose_other_dims_overflow() {
    // [2^62, 2^62, 0] has no element although 2^62 · 2^62 overflows.
    runs_fast(&[G62, G62, 0], |b, x| vec![b.transpose(x, &[2, 1, 0]).unwrap()]);
    runs_fast(&[G62, G62, 0], |b, x| vec![b.log_softmax(x, 1).unwrap()]);
    runs_fast(&[G62, G62, 0], |b, x| vec![b.unary(backend_api::op::UnaryOp::Neg, x).unwrap()]);
}
