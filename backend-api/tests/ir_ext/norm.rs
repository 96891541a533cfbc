//! §2.7.3, §2.7.6–2.7.9 normalisation and §2.16.1–2.16.3 backward ops.

use crate::{dims, dt, fails, inp};
use backend_api::op::NormGrad;
use backend_api::{DType, ErrorKind, GraphBuilder};

#[test]
fn softmax_cross_entropy_and_backward() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[4, 10, 3]);
    let t = inp(&mut b, "t", DType::F32, &[4, 10, 3]);
    let loss = b.softmax_cross_entropy(x, t, 1).unwrap();
    assert_eq!(dims(&b, loss), [4, 3]);
    let t_bad = inp(&mut b, "tb", DType::F32, &[4, 10]);
    fails(b.softmax_cross_entropy(x, t_bad, 1), ErrorKind::Shape);
    let t16 = inp(&mut b, "t16", DType::F16, &[4, 10, 3]);
    fails(b.softmax_cross_entropy(x, t16, 1), ErrorKind::DType);
    fails(b.softmax_cross_entropy(x, t, 3), ErrorKind::Axis);
    let e = inp(&mut b, "e", DType::F32, &[4, 0]);
    fails(b.softmax_cross_entropy(e, e, -1), ErrorKind::Shape);
    let ix = inp(&mut b, "ix", DType::I32, &[4]);
    fails(b.softmax_cross_entropy(ix, ix, 0), ErrorKind::DType);

    let dl = inp(&mut b, "dl", DType::F32, &[4, 3]);
    let dx = b.softmax_cross_entropy_backward(x, t, dl, -2).unwrap();
    assert_eq!(dims(&b, dx), [4, 10, 3]);
    fails(b.softmax_cross_entropy_backward(x, t, dl, 0), ErrorKind::Shape);
    let dl16 = inp(&mut b, "dl16", DType::F16, &[4, 3]);
    fails(b.softmax_cross_entropy_backward(x, t, dl16, 1), ErrorKind::DType);
}

#[test]
fn group_norm_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[2, 6, 5, 5]);
    let g = inp(&mut b, "g", DType::F32, &[6]);
    let y = b.group_norm(x, g, Some(g), 3, 1e-5).unwrap();
    assert_eq!(dims(&b, y), [2, 6, 5, 5]);
    fails(b.group_norm(x, g, None, 4, 1e-5), ErrorKind::Attribute);
    fails(b.group_norm(x, g, None, 0, 1e-5), ErrorKind::Attribute);
    fails(b.group_norm(x, g, None, 3, -1.0), ErrorKind::Attribute);
    let g5 = inp(&mut b, "g5", DType::F32, &[5]);
    fails(b.group_norm(x, g5, None, 3, 1e-5), ErrorKind::Shape);
    let v = inp(&mut b, "v", DType::F32, &[6]);
    let x1 = inp(&mut b, "x1", DType::F32, &[6]);
    fails(b.group_norm(x1, v, None, 3, 1e-5), ErrorKind::Shape);
    let g16 = inp(&mut b, "g16", DType::F16, &[6]);
    fails(b.group_norm(x, g16, None, 3, 1e-5), ErrorKind::DType);
}

#[test]
fn layer_norm_2d_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::BF16, &[1, 4, 8, 8]);
    let g = inp(&mut b, "g", DType::BF16, &[4]);
    let y = b.layer_norm_2d(x, g, None, 1e-6).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![1, 4, 8, 8], DType::BF16));
    let g8 = inp(&mut b, "g8", DType::BF16, &[8]);
    fails(b.layer_norm_2d(x, g, Some(g8), 1e-6), ErrorKind::Shape);
    let x1 = inp(&mut b, "x1", DType::BF16, &[4]);
    fails(b.layer_norm_2d(x1, g, None, 1e-6), ErrorKind::Shape);
}

#[test]
fn fused_residual_norms_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F16, &[2, 5, 16]);
    let r = inp(&mut b, "r", DType::F16, &[2, 5, 16]);
    let bias = inp(&mut b, "bias", DType::F16, &[16]);
    let g = inp(&mut b, "g", DType::F16, &[16]);
    let (y, s) = b.fused_residual_layer_norm(x, (r, Some(bias)), (g, Some(g)), -1, 1e-5, true).unwrap();
    assert_eq!(dims(&b, y), [2, 5, 16]);
    assert_eq!(dims(&b, s.unwrap()), [2, 5, 16]);
    let (y2, s2) = b.fused_residual_rms_norm(x, (r, None), (g, None), 2, 1e-6, false).unwrap();
    assert_eq!((dims(&b, y2), s2), (vec![2, 5, 16], None));
    let g2 = inp(&mut b, "g2", DType::F16, &[5, 16]);
    let (y3, _) = b.fused_residual_rms_norm(x, (r, None), (g2, None), 1, 1e-6, false).unwrap();
    assert_eq!(dims(&b, y3), [2, 5, 16]);
    let big_bias = inp(&mut b, "bb", DType::F16, &[3, 2, 5, 16]);
    fails(b.fused_residual_layer_norm(x, (r, Some(big_bias)), (g, None), -1, 1e-5, false), ErrorKind::Shape);
    let r_bad = inp(&mut b, "rb", DType::F16, &[2, 16]);
    fails(b.fused_residual_layer_norm(x, (r_bad, None), (g, None), -1, 1e-5, false), ErrorKind::Shape);
    fails(b.fused_residual_layer_norm(x, (r, None), (g2, None), -1, 1e-5, false), ErrorKind::Shape);
    fails(b.fused_residual_layer_norm(x, (r, None), (g, None), 3, 1e-5, false), ErrorKind::Axis);
    fails(b.fused_residual_layer_norm(x, (r, None), (g, None), -1, f32::NAN, false), ErrorKind::Attribute);
    let r32 = inp(&mut b, "r32", DType::F32, &[2, 5, 16]);
    fails(b.fused_residual_rms_norm(x, (r32, None), (g, None), -1, 1e-5, false), ErrorKind::DType);
}

#[test]
fn norm_backward_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F64, &[3, 4, 5]);
    let g = inp(&mut b, "g", DType::F64, &[4, 5]);
    let dy = inp(&mut b, "dy", DType::F64, &[3, 4, 5]);
    let dx = b.layer_norm_backward(x, g, dy, 1, 1e-5, NormGrad::Input).unwrap();
    assert_eq!(dims(&b, dx), [3, 4, 5]);
    let dg = b.rms_norm_backward(x, g, dy, -2, 1e-6, NormGrad::Gamma).unwrap();
    assert_eq!(dims(&b, dg), [4, 5]);
    let db = b.layer_norm_backward(x, g, dy, 1, 1e-5, NormGrad::Beta).unwrap();
    assert_eq!(dims(&b, db), [4, 5]);
    fails(b.layer_norm_backward(x, g, dy, 2, 1e-5, NormGrad::Input), ErrorKind::Shape);
    fails(b.layer_norm_backward(x, g, g, 1, 1e-5, NormGrad::Input), ErrorKind::Shape);
    fails(b.rms_norm_backward(x, g, dy, 1, f32::INFINITY, NormGrad::Input), ErrorKind::Attribute);
    fails(b.rms_norm_backward(x, g, dy, 3, 1e-5, NormGrad::Input), ErrorKind::Axis);
    let dy32 = inp(&mut b, "dy32", DType::F32, &[3, 4, 5]);
    fails(b.rms_norm_backward(x, g, dy32, 1, 1e-5, NormGrad::Input), ErrorKind::DType);
}
