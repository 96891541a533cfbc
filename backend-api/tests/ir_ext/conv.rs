//! §2.9 convolution, pooling, unfolding, nearest resize.

use crate::{dims, dt, fails, finish, inp};
use backend_api::op::{ConvAttrs, ConvTransposeAttrs, Im2ColAttrs, Op, PoolAttrs, PoolKind};
use backend_api::spec::op_label;
use backend_api::{DType, ErrorKind, GraphBuilder};

fn conv(stride: &[usize], pads: &[usize], dilation: &[usize], groups: u32) -> ConvAttrs {
    ConvAttrs {
        stride: stride.to_vec(),
        pads_begin: pads.to_vec(),
        pads_end: pads.to_vec(),
        dilation: dilation.to_vec(),
        groups,
        has_bias: false,
    }
}

#[test]
fn conv_shapes() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[1, 3, 10, 10]);
    let w = inp(&mut b, "w", DType::F32, &[8, 3, 3, 3]);
    let bias = inp(&mut b, "bias", DType::F32, &[8]);
    // ⌊(10 + 1 + 1 − 3) / 2⌋ + 1 = 5 with the scalar shorthand expanded to both dims.
    let y = b.conv(x, w, Some(bias), &conv(&[2], &[1], &[], 1)).unwrap();
    assert_eq!(dims(&b, y), [1, 8, 5, 5]);
    // grouped, dilated 1-D: ke = 2·(3 − 1) + 1 = 5, out = 9 − 5 + 1 = 5
    let x1 = inp(&mut b, "x1", DType::F64, &[2, 4, 9]);
    let w1 = inp(&mut b, "w1", DType::F64, &[6, 2, 3]);
    let y1 = b.conv(x1, w1, None, &conv(&[], &[], &[2], 2)).unwrap();
    assert_eq!((dims(&b, y1), dt(&b, y1)), (vec![2, 6, 5], DType::F64));
    let g = finish(b, &[y, y1]);
    let Op::Conv(a) = &g.node(y.node).unwrap().op else { panic!("not a Conv") };
    assert_eq!(
        (a.stride.clone(), a.pads_end.clone(), a.dilation.clone(), a.has_bias),
        (vec![2, 2], vec![1, 1], vec![1, 1], true)
    );
}

#[test]
fn conv_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[1, 4, 6, 6]);
    let w = inp(&mut b, "w", DType::F32, &[6, 2, 3, 3]);
    let ok = conv(&[], &[], &[], 2);
    let y = b.conv(x, w, None, &ok).unwrap();
    assert_eq!(dims(&b, y), [1, 6, 4, 4]);
    fails(b.conv(x, w, None, &conv(&[], &[], &[], 1)), ErrorKind::Shape); // 2·1 ≠ Cin
    let w5 = inp(&mut b, "w5", DType::F32, &[5, 2, 3, 3]);
    fails(b.conv(x, w5, None, &ok), ErrorKind::Shape); // Cout mod G
    let w_rank = inp(&mut b, "wr", DType::F32, &[6, 2, 3]);
    fails(b.conv(x, w_rank, None, &ok), ErrorKind::Shape);
    let big = inp(&mut b, "big", DType::F32, &[6, 2, 7, 7]);
    fails(b.conv(x, big, None, &ok), ErrorKind::Shape); // 6 < ke = 7
    let bias = inp(&mut b, "bias", DType::F32, &[5]);
    fails(b.conv(x, w, Some(bias), &ok), ErrorKind::Shape);
    let x2 = inp(&mut b, "x2", DType::F32, &[4, 6]);
    fails(b.conv(x2, w, None, &ok), ErrorKind::Shape);
    fails(b.conv(x, w, None, &conv(&[1, 1, 1], &[], &[], 2)), ErrorKind::Attribute);
    fails(b.conv(x, w, None, &conv(&[0], &[], &[], 2)), ErrorKind::Attribute);
    fails(b.conv(x, w, None, &conv(&[], &[], &[], 0)), ErrorKind::Attribute);
    let xi = inp(&mut b, "xi", DType::I32, &[1, 4, 6, 6]);
    fails(b.conv(xi, w, None, &ok), ErrorKind::DType);
    let w16 = inp(&mut b, "w16", DType::F16, &[6, 2, 3, 3]);
    fails(b.conv(x, w16, None, &ok), ErrorKind::DType);
}

#[test]
fn conv_transpose_shapes_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[1, 4, 5, 5]);
    let w = inp(&mut b, "w", DType::F32, &[4, 3, 3, 3]);
    // (5 − 1)·2 − 1 − 1 + 1·(3 − 1) + 1 + 1 = 10; Cout = 3·G
    let a = ConvTransposeAttrs { conv: conv(&[2], &[1], &[], 2), output_padding: vec![1] };
    let y = b.conv_transpose(x, w, None, &a).unwrap();
    assert_eq!(dims(&b, y), [1, 6, 10, 10]);
    let bad_op = ConvTransposeAttrs { output_padding: vec![2], ..a.clone() };
    fails(b.conv_transpose(x, w, None, &bad_op), ErrorKind::Attribute);
    let w3 = inp(&mut b, "w3", DType::F32, &[3, 3, 3, 3]);
    fails(b.conv_transpose(x, w3, None, &a), ErrorKind::Shape);
    let g3 = ConvTransposeAttrs { conv: conv(&[2], &[1], &[], 3), output_padding: vec![1] };
    fails(b.conv_transpose(x, w, None, &g3), ErrorKind::Shape);
    let (x1, w1) = (inp(&mut b, "x1", DType::F32, &[1, 1, 1]), inp(&mut b, "w1", DType::F32, &[1, 1, 1]));
    let neg = ConvTransposeAttrs { conv: conv(&[], &[1], &[], 1), output_padding: vec![] };
    fails(b.conv_transpose(x1, w1, None, &neg), ErrorKind::Shape);
}

#[test]
fn pool_shapes_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::I32, &[1, 2, 7, 7]);
    let m = b.pool(x, &PoolAttrs::new(PoolKind::Max, &[3], &[2])).unwrap();
    assert_eq!(dims(&b, m), [1, 2, 3, 3]);
    let xf = inp(&mut b, "xf", DType::F32, &[1, 2, 5]);
    // ceil mode: ⌊(5 + 1 + 1 − 2 + 1) / 2⌋ + 1 = 4, then 3·2 ≥ 5 + 1 drops the last window.
    let a = PoolAttrs {
        pads_begin: vec![1],
        pads_end: vec![1],
        ceil_mode: true,
        ..PoolAttrs::new(PoolKind::Avg, &[2], &[2])
    };
    let avg = b.pool(xf, &a).unwrap();
    assert_eq!(dims(&b, avg), [1, 2, 3]);
    let ceil7 = PoolAttrs { ceil_mode: true, ..PoolAttrs::new(PoolKind::Max, &[2], &[2]) };
    let c7 = b.pool(x, &ceil7).unwrap();
    assert_eq!(dims(&b, c7), [1, 2, 4, 4]);
    fails(b.pool(x, &PoolAttrs::new(PoolKind::Avg, &[2], &[2])), ErrorKind::DType);
    let big_pad = PoolAttrs { pads_begin: vec![2], ..PoolAttrs::new(PoolKind::Max, &[2], &[1]) };
    fails(b.pool(x, &big_pad), ErrorKind::Attribute);
    fails(b.pool(x, &PoolAttrs::new(PoolKind::Max, &[0], &[1])), ErrorKind::Attribute);
    fails(b.pool(x, &PoolAttrs::new(PoolKind::Max, &[2, 2, 2], &[1])), ErrorKind::Attribute);
    fails(b.pool(x, &PoolAttrs::new(PoolKind::Max, &[8], &[1])), ErrorKind::Shape);
    let x2 = inp(&mut b, "x2", DType::F32, &[2, 7]);
    fails(b.pool(x2, &PoolAttrs::new(PoolKind::Max, &[2], &[1])), ErrorKind::Shape);
    let g = finish(b, &[m, avg]);
    assert_eq!(op_label(&g.node(m.node).unwrap().op), "Pool.Max");
    assert_eq!(op_label(&g.node(avg.node).unwrap().op), "Pool.Avg");
    assert!(backend_api::spec::op_entry("Pool.Max").is_some());
}

#[test]
fn im2col_and_resize() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::Bool, &[2, 3, 4, 4]);
    // L = 2·2 windows, rows C·Πk = 3·4
    let y = b.im2col(x, &Im2ColAttrs { stride: vec![2], ..Im2ColAttrs::new(&[2]) }).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![2, 12, 4], DType::Bool));
    fails(b.im2col(x, &Im2ColAttrs::new(&[5])), ErrorKind::Shape);
    fails(b.im2col(x, &Im2ColAttrs::new(&[])), ErrorKind::Attribute);
    fails(b.im2col(x, &Im2ColAttrs { stride: vec![0], ..Im2ColAttrs::new(&[2]) }), ErrorKind::Attribute);

    let r = b.resize_nearest(x, &[2, 3]).unwrap();
    assert_eq!(dims(&b, r), [2, 3, 8, 12]);
    fails(b.resize_nearest(x, &[2]), ErrorKind::Attribute);
    fails(b.resize_nearest(x, &[2, 0]), ErrorKind::Attribute);
    let x2 = inp(&mut b, "x2", DType::F32, &[3, 4]);
    fails(b.resize_nearest(x2, &[]), ErrorKind::Shape);
}

#[test]
fn conv_symbolic_batch_and_overflow() {
    let mut b = GraphBuilder::new();
    let x = crate::sym(&mut b, "x", DType::F32, vec![backend_api::Dim::from("n"), 3.into(), 8.into()]);
    let w = inp(&mut b, "w", DType::F32, &[4, 3, 3]);
    let y = b.conv(x, w, None, &ConvAttrs::default()).unwrap();
    assert_eq!(b.value_type(y).unwrap().shape.0, vec![backend_api::Dim::from("n"), 4.into(), 6.into()]);
    // huge attributes give errors, never an arithmetic overflow
    fails(b.conv(x, w, None, &conv(&[], &[], &[usize::MAX], 1)), ErrorKind::Attribute);
    fails(b.conv(x, w, None, &conv(&[], &[usize::MAX], &[], 1)), ErrorKind::Attribute);
    let big = ConvTransposeAttrs { conv: conv(&[usize::MAX], &[], &[], 1), output_padding: vec![] };
    let wt = inp(&mut b, "wt", DType::F32, &[3, 4, 3]);
    fails(b.conv_transpose(x, wt, None, &big), ErrorKind::Attribute);
    let ceil = PoolAttrs { ceil_mode: true, ..PoolAttrs::new(PoolKind::Max, &[1], &[usize::MAX]) };
    let pooled = b.pool(x, &ceil);
    assert_eq!(dims_sym_last(&b, pooled), 1);
    let x4 = inp(&mut b, "x4", DType::F32, &[1, 2, 3, 4, 5, 6]);
    fails(b.im2col(x4, &Im2ColAttrs::new(&[1])), ErrorKind::Shape);
    // symbolic spatial dims need static sizes for the window arithmetic
    let xs = crate::sym(&mut b, "xs", DType::F32, vec![1.into(), 3.into(), backend_api::Dim::from("len")]);
    fails(b.conv(xs, w, None, &ConvAttrs::default()), ErrorKind::Shape);
    let r = b.resize_nearest(xs, &[1]).unwrap();
    assert_eq!(b.value_type(r).unwrap().shape.0[2], backend_api::Dim::from("len"));
    fails(b.resize_nearest(xs, &[2]), ErrorKind::Shape);
}

fn dims_sym_last(b: &GraphBuilder, v: backend_api::Result<backend_api::Value>) -> usize {
    let t = b.value_type(v.unwrap()).unwrap();
    t.shape.0.last().unwrap().as_static().unwrap()
}
