//! Impossible sizes (the hostile examples) are clear errors at build, never an overflow:
//! a `Shape` error naming the node, the op and the shapes.

use backend_api::op::{ConstantAttrs, Op, PadMode};
use backend_api::{
    check_feeds, DType, ErrorKind, Feed, Graph, GraphBuilder, Node, Signature, Tensor, TensorType, Value,
};
use std::sync::Arc;

fn err<T: std::fmt::Debug>(r: backend_api::Result<T>) -> backend_api::Error {
    r.expect_err("must fail")
}

#[test]
fn from_bytes_refuses_a_shape_whose_size_overflows() {
    let e = err(Tensor::from_bytes(DType::F32, &[1 << 62, 4], vec![]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("[4611686018427387904, 4]"), "{e}");
    let e = err(Tensor::from_slice::<f32>(&[1 << 62, 4], &[]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let e = err(Tensor::try_zeros(DType::F32, &[1 << 62, 1 << 2]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert_eq!(Tensor::try_zeros(DType::F16, &[2, 3]).unwrap().bytes().len(), 12);
    let e = err(Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap().reshaped(&[1 << 62, 4]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    // Sizes that fit isize::MAX elements but not bytes.
    let e = err(Tensor::from_bytes(DType::F64, &[1 << 61], vec![]));
    assert!(e.to_string().contains("bytes"), "{e}");
}

#[test]
fn pad_by_usize_max_is_a_shape_error() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [4]).unwrap();
    let e = err(g.pad(x, &[0], &[usize::MAX], PadMode::Constant { value: 0.0 }));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(
        e.to_string().contains("node 1") && e.to_string().contains("Pad") && e.to_string().contains("overflows"),
        "{e}"
    );
    // Fits usize, but not as F32 bytes.
    let e = err(g.pad(x, &[0], &[1 << 62], PadMode::Constant { value: 0.0 }));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("larger than any tensor"), "{e}");
}

#[test]
fn reshape_to_an_overflowing_target_is_a_shape_error() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [4]).unwrap();
    let e = err(g.reshape(x, &[(1 << 62) + 1, 4]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("Reshape") && e.to_string().contains("overflows"), "{e}");
    let e = err(g.reshape(x, &[1 << 40, 1 << 40, -1]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let e = err(g.reshape(x, &[i64::MAX, 2]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
}

#[test]
fn concat_and_narrow_overflows_are_errors() {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::U8, [0, usize::MAX]).unwrap();
    let e = err(g.concat(&[a, a], 1));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("Concat") && e.to_string().contains("overflow"), "{e}");
    let b = g.input("b", DType::U8, [1 << 62]).unwrap();
    let e = err(g.concat(&[b, b], 0));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let x = g.input("x", DType::F32, [8]).unwrap();
    let e = err(g.narrow(x, 0, 1, usize::MAX, usize::MAX));
    assert_eq!(e.kind(), ErrorKind::Attribute, "{e}");
    assert!(e.to_string().contains("Narrow") && e.to_string().contains("past"), "{e}");
    let e = err(g.narrow(x, 0, 7, 2, 1 << 63));
    assert_eq!(e.kind(), ErrorKind::Attribute, "{e}");
}

#[test]
fn a_huge_declared_input_or_constant_is_a_shape_error() {
    let mut g = GraphBuilder::new();
    let e = err(g.input("x", DType::F32, [1 << 62, 4]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("node 0") && e.to_string().contains("Input"), "{e}");
    let e = err(g.param("w", DType::F64, &[1 << 61]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    // A Constant cannot come from a Tensor this large; a graph made of parts (a file) can say it.
    let op = Op::Constant(ConstantAttrs { dtype: DType::F32, shape: vec![1 << 62, 4], data: Arc::from(vec![]) });
    let node = Node { op, inputs: vec![], outputs: vec![TensorType::new(DType::F32, &[1 << 62, 4])] };
    let e = err(Graph::from_parts(vec![node], vec![Value { node: backend_api::NodeId(0), output: 0 }]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("Constant") && e.to_string().contains("larger than any tensor"), "{e}");
}

#[test]
fn expand_to_a_huge_shape_is_a_shape_error() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [1]).unwrap();
    let e = err(g.expand(x, [1 << 40, 1 << 40]));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("Expand"), "{e}");
}

#[test]
fn a_duplicated_input_name_in_run_is_refused() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2]).unwrap();
    let y = g.unary(backend_api::op::UnaryOp::Neg, x).unwrap();
    g.output(y).unwrap();
    let sig = Signature::of(&g.build().unwrap());
    let (a, b) = (Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap(), Tensor::from_slice(&[2], &[3.0f32, 4.0]).unwrap());
    let e = err(check_feeds(&sig, &[("x", Feed::Host(a.view())), ("x", Feed::Host(b.view()))]));
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    assert!(e.to_string().contains("\"x\" is given more than once"), "{e}");
    assert!(check_feeds(&sig, &[("x", Feed::Host(a.view()))]).is_ok());
}

#[test]
fn a_symbol_bound_to_a_size_that_overflows_is_a_shape_error_at_bind() {
    let mut g = GraphBuilder::new();
    let shape = backend_api::Shape(vec![backend_api::Dim::from("b"), backend_api::Dim::from(1usize << 40)]);
    let x = g.input("x", DType::F32, shape).unwrap();
    let y = g.unary(backend_api::op::UnaryOp::Neg, x).unwrap();
    g.output(y).unwrap();
    let graph = g.build().unwrap();
    let sig = Signature::of(&graph);
    let b = backend_api::Bindings::from_inputs(&sig, &[&[1 << 30, 1 << 40]]).unwrap();
    let e = err(graph.bind_symbols(&b));
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("node 0") && e.to_string().contains("larger than any tensor"), "{e}");
    let small = backend_api::Bindings::from_inputs(&sig, &[&[2, 1 << 40]]).unwrap();
    assert!(graph.bind_symbols(&small).is_ok());
}
