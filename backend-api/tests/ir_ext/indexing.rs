//! §2.4 indexing, §2.5.2–2.5.6 arg-reductions, TopK, Cumsum.

use crate::{dims, dt, fails, inp, sym};
use backend_api::op::{CumsumAttrs, Op};
use backend_api::{DType, Dim, ErrorKind, GraphBuilder};

#[test]
fn gather_embedding_and_errors() {
    let mut b = GraphBuilder::new();
    let data = inp(&mut b, "data", DType::F32, &[3, 4]);
    let idx = inp(&mut b, "idx", DType::I64, &[2, 5]);
    // data[:1] ++ indices.shape ++ data[2:]
    let y = b.gather(data, idx, -1).unwrap();
    assert_eq!(dims(&b, y), [3, 2, 5]);
    let y0 = b.gather(data, idx, 0).unwrap();
    assert_eq!(dims(&b, y0), [2, 5, 4]);
    let scalar_idx = inp(&mut b, "s", DType::U32, &[]);
    let g = b.gather(data, scalar_idx, 0).unwrap();
    assert_eq!(dims(&b, g), [4]);
    let fidx = inp(&mut b, "f", DType::F32, &[2]);
    fails(b.gather(data, fidx, 0), ErrorKind::DType);
    fails(b.gather(data, idx, 2), ErrorKind::Axis);
    let s = inp(&mut b, "scalar", DType::F32, &[]);
    fails(b.gather(s, idx, 0), ErrorKind::Axis);
}

#[test]
fn gather_keeps_symbolic_dims() {
    let mut b = GraphBuilder::new();
    let data = inp(&mut b, "data", DType::BF16, &[100, 8]);
    let idx = sym(&mut b, "idx", DType::I32, vec![Dim::from("batch"), Dim::Static(7)]);
    let y = b.gather(data, idx, 0).unwrap();
    let t = b.value_type(y).unwrap();
    assert_eq!(t.shape.0, vec![Dim::from("batch"), Dim::Static(7), Dim::Static(8)]);
}

#[test]
fn scatter_add_and_errors() {
    let mut b = GraphBuilder::new();
    let data = inp(&mut b, "data", DType::C64, &[4, 3]);
    let idx = inp(&mut b, "idx", DType::I32, &[5]);
    let upd = inp(&mut b, "upd", DType::C64, &[5, 3]);
    let y = b.scatter_add(data, idx, upd, 0).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![4, 3], DType::C64));
    let bad_upd = inp(&mut b, "bad", DType::C64, &[4, 3]);
    fails(b.scatter_add(data, idx, bad_upd, 0), ErrorKind::Shape);
    let f_upd = inp(&mut b, "fu", DType::F32, &[5, 3]);
    fails(b.scatter_add(data, idx, f_upd, 0), ErrorKind::DType);
    let bdata = inp(&mut b, "bd", DType::Bool, &[4, 3]);
    fails(b.scatter_add(bdata, idx, upd, 0), ErrorKind::DType);
    fails(b.scatter_add(data, idx, upd, -3), ErrorKind::Axis);
}

#[test]
fn gather_backward_and_errors() {
    let mut b = GraphBuilder::new();
    let dy = inp(&mut b, "dy", DType::F32, &[3, 2, 5]);
    let idx = inp(&mut b, "idx", DType::I64, &[2, 5]);
    let dx = b.gather_backward(dy, idx, -1, [3, 4]).unwrap();
    assert_eq!(dims(&b, dx), [3, 4]);
    fails(b.gather_backward(dy, idx, 0, [3, 4]), ErrorKind::Shape);
    fails(b.gather_backward(dy, idx, 2, [3, 4]), ErrorKind::Axis);
    let idy = inp(&mut b, "idy", DType::I32, &[3, 2, 5]);
    fails(b.gather_backward(idy, idx, 1, [3, 4]), ErrorKind::DType);
}

#[test]
fn arg_max_arg_min_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::Bool, &[2, 7, 3]);
    let a = b.arg_max(x, 1, false, DType::I64).unwrap();
    assert_eq!((dims(&b, a), dt(&b, a)), (vec![2, 3], DType::I64));
    let m = b.arg_min(x, -1, true, DType::I32).unwrap();
    assert_eq!((dims(&b, m), dt(&b, m)), (vec![2, 7, 1], DType::I32));
    fails(b.arg_max(x, 1, false, DType::U32), ErrorKind::Attribute);
    fails(b.arg_max(x, 3, false, DType::I32), ErrorKind::Axis);
    let empty = inp(&mut b, "e", DType::F32, &[2, 0]);
    fails(b.arg_min(empty, 1, false, DType::I32), ErrorKind::Shape);
    let c = inp(&mut b, "c", DType::C64, &[2]);
    fails(b.arg_max(c, 0, false, DType::I32), ErrorKind::DType);
}

#[test]
fn top_k_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::I32, &[4, 10]);
    let (v, i) = b.top_k(x, 3, -1, true, DType::I64).unwrap();
    assert_eq!((dims(&b, v), dt(&b, v)), (vec![4, 3], DType::I32));
    assert_eq!((dims(&b, i), dt(&b, i)), (vec![4, 3], DType::I64));
    let (v0, _) = b.top_k(x, 0, 0, false, DType::I32).unwrap();
    assert_eq!(dims(&b, v0), [0, 10]);
    fails(b.top_k(x, 11, -1, true, DType::I32), ErrorKind::Attribute);
    fails(b.top_k(x, 1, -1, true, DType::F32), ErrorKind::Attribute);
    fails(b.top_k(x, 1, 2, true, DType::I32), ErrorKind::Axis);
    let bx = inp(&mut b, "b", DType::Bool, &[4]);
    fails(b.top_k(bx, 1, 0, true, DType::I32), ErrorKind::DType);
}

#[test]
fn cumsum_and_backward() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::I64, &[3, 5]);
    let y = b.cumsum(x, -1, true, true).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![3, 5], DType::I64));
    fails(b.cumsum(x, 2, false, false), ErrorKind::Axis);
    let bx = inp(&mut b, "b", DType::Bool, &[3]);
    fails(b.cumsum(bx, 0, false, false), ErrorKind::DType);
    let dy = inp(&mut b, "dy", DType::F16, &[3, 5]);
    let dx = b.cumsum_backward(dy, 0, false, true).unwrap();
    assert_eq!((dims(&b, dx), dt(&b, dx)), (vec![3, 5], DType::F16));
    fails(b.cumsum_backward(x, 0, false, false), ErrorKind::DType);
    fails(b.cumsum_backward(dy, -3, false, false), ErrorKind::Axis);
    let n = b.add(Op::CumsumBackward(CumsumAttrs { axis: 1, exclusive: false, reverse: false }), &[dy]).unwrap();
    assert_eq!(n.len(), 1);
}
