//! Symbolic dims in the IR: Reshape's inferred dim next to symbols, binding from run inputs, and
//! `Graph::bind_symbols` (deferred checks fail with the build's error).

use backend_api::op::DimSpec;
use backend_api::{Bindings, DType, Dim, ErrorKind, GraphBuilder, Shape, Signature};

fn shape(dims: &[Dim]) -> Shape {
    Shape(dims.to_vec())
}

fn b() -> Dim {
    Dim::from("b")
}

#[test]
fn reshape_infers_a_size_or_a_single_symbol() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, shape(&[b(), 4.into(), 8.into()])).unwrap();
    let flat = g.reshape(x, &[-1, 32]).unwrap();
    assert_eq!(g.value_type(flat).unwrap().shape, shape(&[b(), 32.into()]));
    let rows = g.reshape_to(x, &["b".into(), DimSpec::Infer]).unwrap();
    assert_eq!(g.value_type(rows).unwrap().shape, shape(&[b(), 32.into()]));
    let split = g.reshape_to(x, &["b".into(), 2.into(), DimSpec::Infer]).unwrap();
    assert_eq!(g.value_type(split).unwrap().shape, shape(&[b(), 2.into(), 16.into()]));
    // Not a size or a single symbol: 3·b/2, b·c; a target symbol the input lacks.
    let y = g.input("y", DType::F32, shape(&[b(), 3.into()])).unwrap();
    let e = g.reshape(y, &[-1, 2]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let z = g.input("z", DType::F32, shape(&[b(), Dim::from("c")])).unwrap();
    assert_eq!(g.reshape(z, &[-1]).unwrap_err().kind(), ErrorKind::Shape);
    let e = g.reshape_to(y, &["c".into(), DimSpec::Infer]).unwrap_err();
    assert!(e.to_string().contains("symbol c"), "{e}");
    // An empty input infers 0.
    let w = g.input("w", DType::F32, shape(&[0.into(), b()])).unwrap();
    let r = g.reshape(w, &[-1, 5]).unwrap();
    assert_eq!(g.value_type(r).unwrap().shape, Shape::of(&[0, 5]));
}

#[test]
fn binding_substitutes_and_rechecks() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, shape(&[b(), 6.into()])).unwrap();
    let r = g.reshape_to(x, &["b".into(), 2.into(), DimSpec::Infer]).unwrap();
    let s = g.reshape(x, &[12]).unwrap();
    g.output(r).unwrap();
    g.output(s).unwrap();
    let g = g.build().unwrap();
    assert!(g.has_symbols());
    let sig = Signature::of(&g);
    let two = Bindings::from_inputs(&sig, &[&[2, 6]]).unwrap();
    assert_eq!(two.get("b"), Some(2));
    let bound = g.bind_symbols(&two).unwrap();
    assert!(!bound.has_symbols());
    let out: Vec<_> = bound.outputs().iter().map(|v| bound.value_type(*v).unwrap().shape.clone()).collect();
    assert_eq!(out, [Shape::of(&[2, 2, 3]), Shape::of(&[12])]);
    // b = 3: Reshape to [12] of 18 elements fails now, with the build's kind, node and op.
    let three = Bindings::from_inputs(&sig, &[&[3, 6]]).unwrap();
    let e = g.bind_symbols(&three).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    assert!(e.to_string().contains("node 2") && e.to_string().contains("Reshape"), "{e}");
}

#[test]
fn inconsistent_bindings_name_symbol_sizes_and_inputs() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, shape(&[b()])).unwrap();
    let y = g.input("y", DType::F32, shape(&[2.into(), b()])).unwrap();
    g.output(x).unwrap();
    g.output(y).unwrap();
    let sig = Signature::of(&g.build().unwrap());
    let e = Bindings::from_inputs(&sig, &[&[3], &[2, 4]]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeBinding);
    let m = e.to_string();
    assert!(m.contains("symbol b is 3 from input \"x\" but 4 from input \"y\""), "{m}");
}
