//! Every class of bad graph is an `Err` with the right kind and a message that names the node, the
//! op, the shapes and the reason.

use backend_api::op::{BinaryOp, CompareOp, PadMode, ReduceOp, UnaryOp};
use backend_api::{DType, ErrorKind, GraphBuilder, Tensor};

fn kind_and_msg<T: std::fmt::Debug>(r: backend_api::Result<T>) -> (ErrorKind, String) {
    let e = r.expect_err("must fail");
    (e.kind(), e.to_string())
}

#[test]
fn shape_mismatch_names_node_op_and_shapes() {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [2, 3]).unwrap();
    let b = g.input("b", DType::F32, [4, 3]).unwrap();
    let (k, m) = kind_and_msg(g.binary(BinaryOp::Add, a, b));
    assert_eq!(k, ErrorKind::Shape);
    assert!(m.contains("node 2") && m.contains("Binary.Add") && m.contains("[2, 3]") && m.contains("[4, 3]"), "{m}");
}

#[test]
fn dtype_errors() {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [2]).unwrap();
    let b = g.input("b", DType::F16, [2]).unwrap();
    let i = g.input("i", DType::I32, [2]).unwrap();
    assert_eq!(kind_and_msg(g.binary(BinaryOp::Add, a, b)).0, ErrorKind::DType);
    let (k, m) = kind_and_msg(g.unary(UnaryOp::Exp, i));
    assert_eq!(k, ErrorKind::DType);
    assert!(m.contains("Unary.Exp") && m.contains("I32"), "{m}");
    assert_eq!(kind_and_msg(g.binary(BinaryOp::And, a, a)).0, ErrorKind::DType);
    let c = g.input("c", DType::Bool, [2]).unwrap();
    assert_eq!(kind_and_msg(g.compare(CompareOp::Lt, c, a)).0, ErrorKind::DType);
    assert_eq!(kind_and_msg(g.matmul(i, i)).0, ErrorKind::DType);
}

#[test]
fn axis_errors() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 3]).unwrap();
    assert_eq!(kind_and_msg(g.softmax(x, 2)).0, ErrorKind::Axis);
    assert_eq!(kind_and_msg(g.reduce(ReduceOp::Sum, x, &[0, -2], false)).0, ErrorKind::Axis);
    assert_eq!(kind_and_msg(g.transpose(x, &[0, 0])).0, ErrorKind::Axis);
    let s = g.input("s", DType::F32, Vec::<usize>::new()).unwrap();
    assert_eq!(kind_and_msg(g.softmax(s, 0)).0, ErrorKind::Axis);
}

#[test]
fn attribute_errors() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [4, 3]).unwrap();
    assert_eq!(kind_and_msg(g.narrow(x, 0, 2, 3, 1)).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.narrow(x, 0, 0, 1, 0)).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.pad(x, &[4, 0], &[0, 0], PadMode::Reflect)).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.pad(x, &[1], &[1], PadMode::Edge)).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.pad(x, &[1, 1], &[1, 1], PadMode::Constant { value: f64::NAN })).0, ErrorKind::Attribute);
    let gamma = g.input("g", DType::F32, [3]).unwrap();
    assert_eq!(kind_and_msg(g.layer_norm(x, gamma, None, -1, -1.0)).0, ErrorKind::Attribute);
    let bad = Tensor::from_bytes(DType::Bool, &[1], vec![2]).unwrap();
    assert_eq!(kind_and_msg(g.constant(&bad)).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.reshape(x, &[-1, -1])).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.reshape(x, &[5, -1])).0, ErrorKind::Shape);
}

#[test]
fn arity_and_name_errors() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2]).unwrap();
    assert_eq!(kind_and_msg(g.add(backend_api::Op::Binary(BinaryOp::Add), &[x])).0, ErrorKind::Arity);
    assert_eq!(kind_and_msg(g.concat(&[], 0)).0, ErrorKind::Arity);
    assert_eq!(kind_and_msg(g.input("x", DType::F32, [2])).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.param("x", DType::F32, &[2])).0, ErrorKind::Attribute);
    g.param("w", DType::F32, &[2]).unwrap();
    assert_eq!(kind_and_msg(g.param("w", DType::F32, &[3])).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(g.input("", DType::F32, [2])).0, ErrorKind::Attribute);
    assert_eq!(kind_and_msg(GraphBuilder::new().build()).0, ErrorKind::Arity);
}

#[test]
fn unknown_backend_lists_available() {
    let e = backend_api::create("nope").err().expect("unknown");
    assert_eq!(e.kind(), ErrorKind::UnknownBackend);
    assert!(e.to_string().contains("registered"), "{e}");
}

#[test]
fn rank_limit() {
    let mut g = GraphBuilder::new();
    assert_eq!(kind_and_msg(g.input("x", DType::F32, [1usize; 9])).0, ErrorKind::Shape);
}

/// A graph put together by hand (not by the builder) whose node has more inputs than its kind
/// admits fails validation with `Arity`, from the op table's bound, before inference looks at it.
#[test]
fn validation_checks_arity_against_the_op_table() {
    use backend_api::{Graph, Node, NodeId, Op, TensorType, Value};
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [2]).unwrap();
    let b = g.input("b", DType::F32, [2]).unwrap();
    let y = g.unary(UnaryOp::Exp, a).unwrap();
    g.output(y).unwrap();
    let good = g.build().unwrap();
    let mut nodes = good.nodes().to_vec();
    nodes[2] =
        Node { op: Op::Unary(UnaryOp::Exp), inputs: vec![a, b], outputs: vec![TensorType::new(DType::F32, &[2])] };
    let e = Graph::from_parts(nodes.clone(), good.outputs().to_vec()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Arity);
    assert!(e.to_string().contains("Unary.Exp takes exactly 1 inputs, got 2") && e.node_id() == Some(2), "{e}");
    // Concat's bound is "at least 1": none is an Arity error too, and so is a leaf with an input.
    nodes[2] = Node { op: Op::Concat { axis: 0 }, inputs: vec![], outputs: vec![TensorType::new(DType::F32, &[2])] };
    let e = Graph::from_parts(nodes.clone(), good.outputs().to_vec()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Arity, "{e}");
    let mut g = GraphBuilder::new();
    let e = g.add(
        Op::Input(backend_api::op::InputAttrs { name: "x".into(), dtype: DType::F32, shape: [1].into() }),
        &[Value::first(NodeId(0))],
    );
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Arity);
}

#[test]
fn a_stored_type_mismatch_prints_types_as_the_spec_writes_them() {
    use backend_api::op::{InputAttrs, Op};
    use backend_api::{Graph, Node, NodeId, Shape, TensorType, Value};
    let op = Op::Input(InputAttrs { name: "x".into(), dtype: DType::F32, shape: Shape::of(&[2, 3]) });
    let node = Node { op, inputs: vec![], outputs: vec![TensorType::new(DType::F16, &[2, 3])] };
    let e = Graph::from_parts(vec![node], vec![Value { node: NodeId(0), output: 0 }]).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("stored output types [F16[2, 3]] differ from inferred [F32[2, 3]]"), "{m}");
    assert!(!m.contains("TensorType") && !m.contains("Static"), "{m}");
}

#[test]
fn a_while_condition_mismatch_names_the_condition_graph() {
    let cond = {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [3]).unwrap();
        let y = b.reduce(ReduceOp::Sum, x, &[0], true).unwrap();
        let z = b.input("z", DType::F32, [1]).unwrap();
        let c = b.compare(CompareOp::Lt, y, z).unwrap();
        b.output(c).unwrap();
        b.build().unwrap()
    };
    let body = {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [2]).unwrap();
        b.output(x).unwrap();
        b.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2]).unwrap();
    let (k, m) = kind_and_msg(g.while_(&[x], cond, body, 4));
    assert_eq!(k, ErrorKind::Subgraph);
    assert!(m.contains("the condition graph has 2 value(s), expected 1"), "{m}");
    assert!(!m.contains("the body"), "{m}");
}
