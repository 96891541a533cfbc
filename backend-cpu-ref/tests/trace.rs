//! `backend_api::trace` on the reference backend: statistics of every value, checked by hand, and
//! the first node that produced a NaN or an infinity.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::trace::trace;
use backend_api::{DType, Dim, GraphBuilder, NodeId, Shape, Tensor};
use backend_cpu_ref::CpuRefBackend;

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-6 * b.abs().max(1.0))
}

/// x → x·2 (finite) → sqrt(x) (NaN at x = −1) → sqrt + x·w (inherits the NaN) → log(x·2) (−inf at 0).
#[test]
fn sqrt_of_a_negative_is_the_first_nan_and_later_nodes_inherit_it() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [4]).unwrap(); // node 0
    let two = b.constant(&Tensor::scalar(2.0f32)).unwrap(); // node 1
    let w = b.param("w", DType::F32, &[4]).unwrap(); // node 2
    let doubled = b.binary(BinaryOp::Mul, x, two).unwrap(); // node 3
    let root = b.unary(UnaryOp::Sqrt, x).unwrap(); // node 4
    let xw = b.binary(BinaryOp::Mul, x, w).unwrap(); // node 5
    let sum = b.binary(BinaryOp::Add, root, xw).unwrap(); // node 6
    let log = b.unary(UnaryOp::Log, doubled).unwrap(); // node 7
    b.output(sum).unwrap();
    b.output(log).unwrap();
    let graph = b.build().unwrap();

    let xs = Tensor::from_slice(&[4], &[4.0f32, -1.0, 0.0, 9.0]).unwrap();
    let ws = Tensor::from_slice(&[4], &[1.0f32, 1.0, 1.0, 0.5]).unwrap();
    let r = trace(&CpuRefBackend::new(), &graph, &[("w", ws.view())], &[("x", xs.view())]).unwrap();

    assert_eq!(r.values.len(), 8, "one entry per node output");
    let ops: Vec<&str> = r.values.iter().map(|s| s.op.as_str()).collect();
    assert_eq!(
        ops,
        ["Input", "Constant", "Param", "Binary.Mul", "Unary.Sqrt", "Binary.Mul", "Binary.Add", "Unary.Log"]
    );
    assert_eq!(r.first_non_finite, Some(4));
    let first = r.first_non_finite_value().unwrap();
    assert_eq!((first.node, first.output, first.nan, first.inf), (NodeId(4), 0, 1, 0));

    // Input: [4, -1, 0, 9].
    let s = &r.values[0];
    assert_eq!((s.dtype, s.shape.as_slice(), s.count, s.nan, s.inf), (DType::F32, &[4usize][..], 4, 0, 0));
    assert!(close(s.min, -1.0) && close(s.max, 9.0) && close(s.mean, 3.0));
    // Constant scalar 2.
    assert_eq!((r.values[1].shape.len(), r.values[1].count), (0, 1));
    assert!(close(r.values[1].mean, 2.0));
    // x·2 = [8, -2, 0, 18].
    let s = &r.values[3];
    assert!(close(s.min, -2.0) && close(s.max, 18.0) && close(s.mean, 6.0) && s.nan == 0);
    // sqrt(x) = [2, NaN, 0, 3]: statistics over the three numbers.
    let s = &r.values[4];
    assert!(close(s.min, 0.0) && close(s.max, 3.0) && close(s.mean, 5.0 / 3.0));
    // x·w = [4, -1, 0, 4.5] stays finite even after the NaN.
    assert_eq!(r.values[5].nan, 0);
    assert!(close(r.values[5].mean, 7.5 / 4.0));
    // sqrt + x·w = [6, NaN, 0, 7.5] inherits the NaN.
    let s = &r.values[6];
    assert_eq!((s.nan, s.inf), (1, 0));
    assert!(close(s.min, 0.0) && close(s.max, 7.5) && close(s.mean, 4.5));
    // log(x·2) = [ln 8, NaN, -inf, ln 18].
    let s = &r.values[7];
    assert_eq!((s.nan, s.inf), (1, 1));
    assert_eq!(s.min, Some(f64::NEG_INFINITY));
    assert!(close(s.max, 18f64.ln()) && close(s.mean, (8f64.ln() + 18f64.ln()) / 2.0));

    let text = r.to_string();
    assert!(text.ends_with("first non-finite value: node 4 (Unary.Sqrt) output 0"), "{text}");
    assert_eq!(text.lines().count(), 1 + 8 + 1, "{text}");
}

#[test]
fn finite_graph_reports_no_nan_and_binds_symbolic_dims() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::I32, Shape(vec![Dim::from("batch"), Dim::Static(2)])).unwrap();
    let y = b.binary(BinaryOp::Add, x, x).unwrap();
    let c = b.cast(y, DType::F32).unwrap();
    b.output(c).unwrap();
    let graph = b.build().unwrap();
    let xs = Tensor::from_slice(&[3, 2], &[1i32, 2, 3, 4, 5, -6]).unwrap();
    let r = trace(&CpuRefBackend::new(), &graph, &[], &[("x", xs.view())]).unwrap();
    assert_eq!(r.first_non_finite, None);
    assert_eq!(r.values[1].shape, vec![3, 2]);
    assert_eq!((r.values[1].dtype, r.values[1].min, r.values[1].max), (DType::I32, Some(-12.0), Some(10.0)));
    assert_eq!(r.values[2].dtype, DType::F32);
    assert!(r.to_string().ends_with("no NaN or inf"));
}

#[test]
fn errors_of_the_run_come_back_with_context() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2]).unwrap();
    let w = b.param("w", DType::F32, &[2]).unwrap();
    let y = b.binary(BinaryOp::Add, x, w).unwrap();
    b.output(y).unwrap();
    let graph = b.build().unwrap();
    let xs = Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
    let missing_input = trace(&CpuRefBackend::new(), &graph, &[("w", xs.view())], &[]).unwrap_err();
    assert!(missing_input.to_string().contains("trace: run"), "{missing_input}");
    let bad_param = trace(&CpuRefBackend::new(), &graph, &[("v", xs.view())], &[("x", xs.view())]).unwrap_err();
    assert!(bad_param.to_string().contains("set_param \"v\""), "{bad_param}");
}
