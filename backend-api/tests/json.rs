//! The JSON graph format (docs/GRAPH-FORMAT.md): hand-written graphs round-trip exactly, and every
//! error class says what and where. Run with `cargo test -p backend-api --features serde`.
#![cfg(feature = "serde")]

use backend_api::json::{from_json, to_json, FORMAT_NAME, FORMAT_VERSION};
use backend_api::op::{BinaryOp, CompareOp, DimSpec, Op, PadMode, UnaryOp};
use backend_api::{DType, Dim, Error, ErrorKind, Graph, GraphBuilder, Result, Shape, Tensor, Value};

/// Round-trips `g`, checks equality and that writing again gives the same text; returns the text.
#[track_caller]
fn round_trip(g: &Graph) -> String {
    let text = to_json(g).unwrap();
    let back = from_json(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&back, g);
    assert_eq!(to_json(&back).unwrap(), text);
    text
}

fn finish(mut b: GraphBuilder, outs: &[Value]) -> Graph {
    for &o in outs {
        b.output(o).unwrap();
    }
    b.build().unwrap()
}

/// The error of `r`, checked to be of `kind` and to mention every one of `needles`.
#[track_caller]
fn fails(r: Result<Graph>, kind: ErrorKind, needles: &[&str]) -> Error {
    let e = match r {
        Ok(g) => panic!("expected a {kind:?} error, got {g:?}"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), kind, "{e}");
    let text = e.to_string();
    for n in needles {
        assert!(text.contains(n), "{n:?} is not in the error: {text}");
    }
    e
}

/// `x: F32[batch, 4] → relu(x·w1 + b1)·w2` with params and a constant bias.
fn mlp() -> Graph {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, Shape(vec![Dim::from("batch"), Dim::Static(4)])).unwrap();
    let w1 = b.param("w1", DType::F32, &[4, 3]).unwrap();
    let b1 = b.constant(&Tensor::from_slice(&[3], &[0.5f32, -0.0, 1e-3]).unwrap()).unwrap();
    let w2 = b.param("w2", DType::F32, &[3, 2]).unwrap();
    let h = b.matmul(x, w1).unwrap();
    let h = b.binary(BinaryOp::Add, h, b1).unwrap();
    let h = b.unary(UnaryOp::Relu, h).unwrap();
    let y = b.matmul(h, w2).unwrap();
    let t = b.unary(UnaryOp::Tanh, y).unwrap();
    finish(b, &[y, t])
}

#[test]
fn mlp_round_trips() {
    let g = mlp();
    let text = round_trip(&g);
    assert!(
        text.starts_with(&format!("{{\n  \"format\": \"{FORMAT_NAME}\",\n  \"version\": {FORMAT_VERSION},")),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    // The constant's bytes as lowercase hex: 0.5f32, -0.0f32, 1e-3f32 little-endian.
    assert!(text.contains("\"data\": \"0000003f000000806f12833a\""), "{text}");
    assert!(text.contains("\"op\": \"MatMul\""), "{text}");
    assert!(text.contains("\"Unary\": \"Relu\""), "{text}");
    assert!(text.contains("\"batch\""), "{text}");
}

#[test]
fn reshape_with_symbols_and_infer() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, Shape(vec![Dim::from("batch"), Dim::Static(6)])).unwrap();
    let new_shape = vec![DimSpec::Sym("batch".into()), DimSpec::Static(2), DimSpec::Static(3)];
    let r = b.add1(Op::Reshape { new_shape }, &[x]).unwrap();
    let y = b.input("y", DType::I64, [4, 6]).unwrap();
    let ry = b.reshape(y, &[-1, 3]).unwrap();
    let p = b.pad(y, &[1, 0], &[0, 2], PadMode::Constant { value: -0.0 }).unwrap();
    let g = finish(b, &[r, ry, p]);
    let text = round_trip(&g);
    assert!(text.contains("{\"Reshape\": {\"new_shape\": [\"batch\", 2, 3]}}"), "{text}");
    assert!(text.contains("{\"Reshape\": {\"new_shape\": [-1, 3]}}"), "{text}");
    assert!(text.contains("\"value\": -0.0"), "{text}");
    let back = from_json(&text).unwrap();
    let Op::Pad(a) = &back.node(p.node).unwrap().op else { panic!("not a Pad") };
    let PadMode::Constant { value } = a.mode else { panic!("not a constant pad") };
    assert!(value == 0.0 && value.is_sign_negative());
}

fn branch(neg: bool) -> Graph {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [3]).unwrap();
    let y = if neg { b.unary(UnaryOp::Neg, x).unwrap() } else { b.unary(UnaryOp::Exp, x).unwrap() };
    finish(b, &[y])
}

/// Loop values `(i: I32[], x: F32[3])`: `while i < 10 { i += i; x = -x }`.
fn while_graphs() -> (Graph, Graph) {
    let mut c = GraphBuilder::new();
    let i = c.input("i", DType::I32, Shape::of(&[])).unwrap();
    c.input("x", DType::F32, [3]).unwrap();
    let ten = c.constant(&Tensor::scalar(10i32)).unwrap();
    let lt = c.compare(CompareOp::Lt, i, ten).unwrap();
    let cond = finish(c, &[lt]);
    let mut bb = GraphBuilder::new();
    let i = bb.input("i", DType::I32, Shape::of(&[])).unwrap();
    let x = bb.input("x", DType::F32, [3]).unwrap();
    let i2 = bb.binary(BinaryOp::Add, i, i).unwrap();
    let nx = bb.unary(UnaryOp::Neg, x).unwrap();
    (cond, finish(bb, &[i2, nx]))
}

/// `(h, w, x) → (h + w·x, h)`.
fn scan_body() -> Graph {
    let mut b = GraphBuilder::new();
    let h = b.input("h", DType::F32, [3]).unwrap();
    let w = b.input("w", DType::F32, [3]).unwrap();
    let x = b.input("x", DType::F32, [3]).unwrap();
    let wx = b.binary(BinaryOp::Mul, w, x).unwrap();
    let h2 = b.binary(BinaryOp::Add, h, wx).unwrap();
    finish(b, &[h2, h])
}

/// An `If` whose else branch holds a `While`, a `While` and a `Scan`: subgraphs two levels deep.
fn control_flow() -> Graph {
    let (cond, body) = while_graphs();
    let mut e = GraphBuilder::new();
    let ex = e.input("x", DType::F32, [3]).unwrap();
    let zero = e.constant(&Tensor::scalar(1i32)).unwrap();
    let w = e.while_(&[zero, ex], cond.clone(), body.clone(), 5).unwrap();
    let else_graph = finish(e, &[w[1]]);

    let mut b = GraphBuilder::new();
    let c = b.input("cond", DType::Bool, [1]).unwrap();
    let x = b.input("x", DType::F32, [3]).unwrap();
    let i = b.input("i", DType::I32, Shape::of(&[])).unwrap();
    let xs = b.input("xs", DType::F32, [7, 3]).unwrap();
    let if_out = b.if_(c, &[x], branch(true), else_graph).unwrap();
    let loop_out = b.while_(&[i, x], cond, body, 1000).unwrap();
    let scan_out = b.scan(scan_body(), 7, true, (&[x], &[x], &[xs]), true).unwrap();
    let outs: Vec<Value> = if_out.into_iter().chain(loop_out).chain(scan_out).collect();
    finish(b, &outs)
}

#[test]
fn control_flow_round_trips() {
    let g = control_flow();
    let text = round_trip(&g);
    for key in
        ["\"then_graph\"", "\"else_graph\"", "\"cond_graph\"", "\"body_graph\"", "\"body\"", "\"max_iterations\": 1000"]
    {
        assert!(text.contains(key), "{key} missing:\n{text}");
    }
}

#[test]
fn custom_op_round_trips() {
    let mut b = GraphBuilder::new();
    let d = b.input("d", DType::F32, [10, 10]).unwrap();
    let attrs: Vec<u8> = [5u32, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    let outs = b.custom("umap.knn", &attrs, &[d]).unwrap();
    let g = finish(b, &outs);
    let text = round_trip(&g);
    assert!(text.contains("\"name\": \"umap.knn\""), "{text}");
    assert!(text.contains("\"attrs\": \"0500000001000000\""), "{text}");
}

#[cfg(feature = "splat")]
#[test]
fn splat_round_trips() {
    use backend_api::op::SplatAttrs;
    let mut b = GraphBuilder::new();
    let shapes: [&[usize]; 6] = [&[9, 3], &[9, 3], &[9, 4], &[9], &[9, 16, 3], &[20]];
    let s: Vec<Value> =
        shapes.iter().enumerate().map(|(i, d)| b.input(&format!("s{i}"), DType::F32, *d).unwrap()).collect();
    let a = SplatAttrs { alpha_cutoff: 0.1, ..SplatAttrs::new(8, 6, 100) };
    let prep = b.gaussian_splat_prepare(&s, a).unwrap();
    let img = b.gaussian_splat_rasterize(&prep, s[5], a).unwrap();
    let img2 = b.gaussian_splat_render(&s, a).unwrap();
    let grads = b.gaussian_splat_render_backward(&s, img2, a).unwrap();
    let outs: Vec<Value> = [img, img2].into_iter().chain(grads).collect();
    round_trip(&finish(b, &outs));
}

/// Replaces the one occurrence of `from` in `text`.
#[track_caller]
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} is not in the text exactly once:\n{text}");
    text.replacen(from, to, 1)
}

#[test]
fn type_errors_name_the_path_and_position() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [4, 6]).unwrap();
    let r = b.reshape(x, &[6, 4]).unwrap();
    let text = to_json(&finish(b, &[r])).unwrap();
    let bad = edit(&text, "\"new_shape\": [6, 4]", "\"new_shape\": [6.5, 4]");
    let e = fails(
        from_json(&bad),
        ErrorKind::Input,
        &["graph file: at graph.nodes[1].op.Reshape.new_shape[0] (line ", "column "],
    );
    assert!(e.message().contains("Reshape entry"), "{e}");
    let bad = edit(&text, "\"new_shape\": [6, 4]", "\"new_shape\": [6, -2]");
    fails(from_json(&bad), ErrorKind::Input, &["graph.nodes[1].op.Reshape.new_shape[1]", "-1 (inferred)"]);
    let bad = edit(
        &text,
        "{\"Input\": {\"name\": \"x\", \"dtype\": \"F32\"",
        "{\"Input\": {\"name\": \"x\", \"dtype\": \"F31\"",
    );
    fails(
        from_json(&bad),
        ErrorKind::Input,
        &["graph.nodes[0].op.Input.dtype", "unknown variant `F31`, expected one of `F32`, `F16`"],
    );
    let bad = edit(&text, "{\"node\": 1, \"output\": 0}", "{\"node\": 1, \"output\": \"0\"}");
    fails(from_json(&bad), ErrorKind::Input, &["graph.outputs[0].output", "invalid type"]);
    let bad = edit(&text, "\"outputs\": [{\"node\"", "\"outputz\": [{\"node\"");
    fails(from_json(&bad), ErrorKind::Input, &["unknown field `outputz`"]);
    let bad = edit(&text, "\"name\": \"x\",", "\"name\": \"x\", \"typo\": 1,");
    fails(from_json(&bad), ErrorKind::Input, &["graph.nodes[0].op.Input", "unknown field `typo`"]);
}

#[test]
fn syntax_errors_give_line_and_column() {
    let text = to_json(&mlp()).unwrap();
    let cut = &text[..text.len() / 2];
    fails(from_json(cut), ErrorKind::Input, &["graph file: at ", "EOF while parsing"]);
    // A syntax error deep in the body is reported with the full path of the strict pass.
    let bad = text.replacen("\"op\": \"MatMul\"", "\"op\": MatMul", 1);
    fails(
        from_json(&bad),
        ErrorKind::Input,
        &["graph file: at graph.nodes[4].op (line 27, column 15)", "expected value"],
    );
    fails(from_json(&format!("{text}x")), ErrorKind::Input, &["at the top level (line ", "trailing characters"]);
    fails(from_json("[1, 2]"), ErrorKind::Input, &["at the top level (line 1", "expected a graph file"]);
    fails(from_json(""), ErrorKind::Input, &["EOF"]);
}

#[test]
fn unknown_op_is_an_input_error() {
    let text = to_json(&mlp()).unwrap();
    let bad = edit(&text, "\"Unary\": \"Relu\"", "\"Unary\": \"Relux\"");
    fails(
        from_json(&bad),
        ErrorKind::Input,
        &["graph.nodes[6].op.Unary", "unknown variant `Relux`; did you mean `Relu`?"],
    );
    let bad = text.replacen("\"op\": \"MatMul\"", "\"op\": \"MatMull\"", 1);
    fails(
        from_json(&bad),
        ErrorKind::Input,
        &["graph.nodes[4].op", "unknown variant `MatMull`; did you mean `MatMul`?"],
    );
}

#[test]
fn bad_hex_is_an_input_error() {
    let text = to_json(&mlp()).unwrap();
    let bad = edit(&text, "0000003f000000806f12833a", "0000003f000000806f12833");
    fails(from_json(&bad), ErrorKind::Input, &["graph.nodes[2].op.Constant.data", "odd length 23"]);
    let bad = edit(&text, "0000003f000000806f12833a", "0000003f0000008x6f12833a");
    fails(from_json(&bad), ErrorKind::Input, &["graph.nodes[2].op.Constant.data", "bad hex digit 'x' at position 15"]);
    // Upper-case digits are read; the writer writes lower case.
    let upper = edit(&text, "0000003f000000806f12833a", "0000003F000000806F12833A");
    assert_eq!(from_json(&upper).unwrap(), mlp());
    // Well-formed hex of the wrong length is a validation error of the constant.
    let short = edit(&text, "0000003f000000806f12833a", "0000003f00000080");
    fails(from_json(&short), ErrorKind::Attribute, &["at node 2 (Constant)", "needs 12 bytes of data, got 8"]);
}

#[test]
fn version_and_format_checks() {
    let text = to_json(&mlp()).unwrap();
    let v = format!("\"version\": {FORMAT_VERSION}");
    let e = fails(from_json(&edit(&text, &v, "\"version\": 2")), ErrorKind::Unsupported, &[]);
    assert_eq!(e.message(), format!("graph file version 2; this build reads versions 1..={FORMAT_VERSION}"));
    fails(from_json(&edit(&text, &v, "\"version\": 0")), ErrorKind::Unsupported, &["graph file version 0"]);
    fails(from_json(&edit(&text, &v, "\"version\": 99999999999")), ErrorKind::Unsupported, &["version 99999999999"]);
    // A future file is recognised before its body, which this build may not understand.
    let future = r#"{"graph": {"blocks": [{"op": "Warp"}]}, "version": 7, "format": "wgml-graph", "meta": 1}"#;
    fails(from_json(future), ErrorKind::Unsupported, &["graph file version 7"]);
    fails(from_json(&edit(&text, &v, "\"version\": -1")), ErrorKind::Input, &["at version", "invalid value"]);
    fails(from_json(&edit(&text, &format!("{v},"), "")), ErrorKind::Input, &["no `version`"]);
    let f = format!("\"format\": \"{FORMAT_NAME}\",");
    fails(from_json(&edit(&text, &f, "")), ErrorKind::Input, &["no `format`"]);
    fails(from_json(&edit(&text, &f, "\"format\": \"onnx\",")), ErrorKind::Input, &["\"onnx\"", "not a graph file"]);
    fails(from_json(&edit(&text, &f, "\"format\": 1,")), ErrorKind::Input, &["at format", "invalid type"]);
    fails(from_json(r#"{"format": "wgml-graph", "version": 1}"#), ErrorKind::Input, &["missing field `graph`"]);
    fails(from_json(&edit(&text, &f, &format!("{f} \"extra\": true,"))), ErrorKind::Input, &["unknown field `extra`"]);
}

#[test]
fn invalid_graphs_give_the_validation_error() {
    let text = to_json(&mlp()).unwrap();
    // w1 declared (and typed) [5, 3]: the MatMul at node 4 no longer matches x's 4 columns.
    assert_eq!(text.matches("[4, 3]").count(), 2, "{text}");
    let bad = text.replace("[4, 3]", "[5, 3]");
    let e = fails(from_json(&bad), ErrorKind::Shape, &["at node 4 (MatMul)"]);
    assert_eq!(e.node_id(), Some(4));
    assert!(!e.message().starts_with("graph file"), "validation errors are not prefixed: {e}");
    // A stored output type that differs from inference (the Relu's).
    let relu = "\"op\": {\"Unary\": \"Relu\"},\n        \"inputs\": [{\"node\": 5, \"output\": 0}],\n        \"outputs\": [{\"dtype\": \"F";
    let bad = edit(&text, &format!("{relu}32\""), &format!("{relu}16\""));
    let e = fails(from_json(&bad), ErrorKind::Shape, &["at node 6 (Unary.Relu)", "differ from inferred"]);
    assert_eq!(e.node_id(), Some(6));
    // An input that refers to a later node.
    let bad = edit(&text, "\"outputs\": [{\"node\": 7,", "\"outputs\": [{\"node\": 70,");
    fails(from_json(&bad), ErrorKind::Arity, &["graph output %70.0 does not exist"]);
}

#[test]
fn invalid_subgraphs_keep_their_kind_and_name_the_path() {
    let g = control_flow();
    let text = to_json(&g).unwrap();
    // The then branch's Neg gets a Bool output type.
    let then_at = text.find("\"then_graph\"").unwrap();
    let neg_at = then_at + text[then_at..].find("\"Unary\": \"Neg\"").unwrap();
    let dtype_at = neg_at + text[neg_at..].find("\"dtype\": \"F32\"").unwrap();
    let bad = format!("{}\"dtype\": \"Bool\"{}", &text[..dtype_at], &text[dtype_at + "\"dtype\": \"F32\"".len()..]);
    let e = fails(
        from_json(&bad),
        ErrorKind::Shape,
        &["graph file: subgraph at graph.nodes[4].op.If.then_graph (line ", "node 1: "],
    );
    assert_eq!(e.node_id(), None);
}

/// The example file of docs/GRAPH-FORMAT.md reads, and writing it back gives the same text.
#[test]
fn docs_example_round_trips() {
    let doc = include_str!("../../docs/GRAPH-FORMAT.md");
    let example = doc.split("## Example").nth(1).expect("docs/GRAPH-FORMAT.md has an Example section");
    let text = example.split("```json\n").nth(1).and_then(|t| t.split("```").next()).expect("a json block");
    let g = from_json(text).unwrap_or_else(|e| panic!("the docs example does not read: {e}"));
    assert_eq!(to_json(&g).unwrap(), text);
    assert_eq!(g.nodes().len(), 10);
}

#[test]
fn invalid_graphs_are_not_written() {
    let e = backend_api::json::to_json(&backend_api::Graph::default()).unwrap_err();
    assert_eq!(e.kind(), backend_api::ErrorKind::Arity, "{e}");
}
