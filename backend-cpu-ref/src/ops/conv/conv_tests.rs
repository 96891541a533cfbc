//! Conv and ConvTranspose against hand-computed cases, and the identities that tie them to each
//! other and to MatMul: the adjoint relation, 1×1 kernels as matrix products, and groups as
//! separate convolutions side by side.

use super::{conv, conv_transpose};
use crate::ops::linalg::matmul;
use backend_api::op::{ConvAttrs, ConvTransposeAttrs};
use backend_api::{DType, Tensor};
use half::{bf16, f16};

fn t(shape: &[usize], v: &[f64]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

fn attrs(stride: &[usize], dilation: &[usize], pb: &[usize], pe: &[usize], groups: u32) -> ConvAttrs {
    ConvAttrs {
        stride: stride.to_vec(),
        dilation: dilation.to_vec(),
        pads_begin: pb.to_vec(),
        pads_end: pe.to_vec(),
        groups,
        has_bias: false,
    }
}

fn with_bias(mut a: ConvAttrs) -> ConvAttrs {
    a.has_bias = true;
    a
}

fn tr(conv: ConvAttrs, output_padding: &[usize]) -> ConvTransposeAttrs {
    ConvTransposeAttrs { conv, output_padding: output_padding.to_vec() }
}

fn vals(y: &Tensor) -> Vec<f64> {
    y.to_vec::<f64>().unwrap()
}

/// Deterministic values in [−1, 1].
fn random(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn rand_t(seed: u64, shape: &[usize]) -> Tensor {
    t(shape, &random(seed, shape.iter().product()))
}

#[test]
fn conv_1d_by_hand() {
    let x = t(&[1, 1, 4], &[1., 2., 3., 4.]);
    let y = conv(&x, &t(&[1, 1, 2], &[1., -1.]), None, &attrs(&[1], &[1], &[0], &[0], 1)).unwrap();
    assert_eq!((y.shape(), vals(&y)), (&[1usize, 1, 3][..], vec![-1., -1., -1.]));
    let b = t(&[1], &[10.]);
    let a = with_bias(attrs(&[1], &[1], &[0], &[0], 1));
    assert_eq!(vals(&conv(&x, &t(&[1, 1, 2], &[1., -1.]), Some(&b), &a).unwrap()), [9., 9., 9.]);
    // stride 2, one leading pad: windows [pad, 1] and [2, 3]
    let y = conv(&x, &t(&[1, 1, 2], &[2., -1.]), None, &attrs(&[2], &[1], &[1], &[0], 1)).unwrap();
    assert_eq!(vals(&y), [-1., 1.]);
}

#[test]
fn conv_2d_dilation_and_two_channels_by_hand() {
    let x = t(&[1, 1, 3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.]);
    let w = t(&[2, 1, 2, 2], &[1., 0., 0., 1., 0., 1., 1., 0.]);
    let y = conv(&x, &w, None, &attrs(&[1, 1], &[2, 2], &[0, 0], &[0, 0], 1)).unwrap();
    // corners x[0,0] + x[2,2] and x[0,2] + x[2,0]
    assert_eq!((y.shape(), vals(&y)), (&[1usize, 2, 1, 1][..], vec![10., 10.]));
    let y = conv(&x, &w, None, &attrs(&[2, 1], &[1, 1], &[0, 1], &[0, 0], 1)).unwrap();
    assert_eq!(y.shape(), &[1, 2, 1, 3]);
    // channel 0 adds x[0, j − 1] + x[1, j]: [0+4, 1+5, 2+6]; channel 1 x[0, j] + x[1, j − 1]
    assert_eq!(vals(&y), [4., 6., 8., 1., 6., 8.]);
}

#[test]
fn windows_in_the_padding_give_the_bias_even_for_nan_weights() {
    let a = with_bias(attrs(&[1], &[1], &[2], &[2], 1));
    let y = conv(&t(&[1, 1, 1], &[0.]), &t(&[1, 1, 1], &[f64::NAN]), Some(&t(&[1], &[3.])), &a).unwrap();
    let v = vals(&y);
    assert_eq!(v.len(), 5);
    assert!(v[2].is_nan() && [v[0], v[1], v[3], v[4]] == [3.; 4], "{v:?}");
}

#[test]
fn conv_edge_cases() {
    let b = t(&[4], &[1., 2., 3., 4.]);
    let a = with_bias(attrs(&[1], &[1], &[0], &[0], 1));
    // Cin = 0: the bias
    let y = conv(&t(&[2, 0, 3], &[]), &t(&[4, 0, 2], &[]), Some(&b), &a).unwrap();
    assert_eq!((y.shape(), vals(&y)[..4].to_vec()), (&[2usize, 4, 2][..], vec![1., 1., 2., 2.]));
    // N = 0 and Cout = 0: empty
    assert_eq!(conv(&t(&[0, 2, 3], &[]), &t(&[4, 2, 2], &[0.; 16]), Some(&b), &a).unwrap().shape(), &[0, 4, 2]);
    let y = conv(&t(&[1, 2, 3], &[0.; 6]), &t(&[0, 2, 2], &[]), None, &attrs(&[1], &[1], &[0], &[0], 1));
    assert_eq!(y.unwrap().shape(), &[1, 0, 2]);
    // errors come from shape inference
    assert!(conv(&t(&[1, 3, 3], &[0.; 9]), &t(&[2, 2, 2], &[0.; 8]), None, &attrs(&[1], &[1], &[0], &[0], 2)).is_err());
}

#[test]
fn conv_transpose_by_hand() {
    let x = t(&[1, 1, 2], &[1., 2.]);
    let w = t(&[1, 1, 3], &[1., 10., 100.]);
    let y = conv_transpose(&x, &w, None, &tr(attrs(&[2], &[1], &[0], &[0], 1), &[0])).unwrap();
    assert_eq!(vals(&y), [1., 10., 102., 20., 200.]);
    let y = conv_transpose(&x, &w, None, &tr(attrs(&[2], &[1], &[1], &[1], 1), &[0])).unwrap();
    assert_eq!(vals(&y), [10., 102., 20.]);
    // the output_padding margin holds only the bias
    let a = tr(with_bias(attrs(&[2], &[1], &[0], &[0], 1)), &[1]);
    let y = conv_transpose(&x, &w, Some(&t(&[1], &[0.5])), &a).unwrap();
    assert_eq!(vals(&y), [1.5, 10.5, 102.5, 20.5, 200.5, 0.5]);
    // groups 2: each input channel feeds only its own output channel
    let x = t(&[1, 2, 1], &[1., 2.]);
    let w = t(&[2, 1, 2], &[1., 2., 3., 4.]);
    let y = conv_transpose(&x, &w, None, &tr(attrs(&[1], &[1], &[0], &[0], 2), &[0])).unwrap();
    assert_eq!((y.shape(), vals(&y)), (&[1usize, 2, 2][..], vec![1., 2., 6., 8.]));
}

#[test]
fn conv_transpose_includes_products_with_zero_inputs() {
    let a = tr(attrs(&[1], &[1], &[0], &[0], 1), &[0]);
    let x = t(&[1, 1, 2], &[0., 1.]);
    let y = vals(&conv_transpose(&x, &t(&[1, 1, 1], &[f64::INFINITY]), None, &a).unwrap());
    assert!(y[0].is_nan() && y[1] == f64::INFINITY, "{y:?}");
    // in_d = 0: the bias
    let a = tr(with_bias(attrs(&[1], &[1], &[0], &[0], 1)), &[0]);
    let y = conv_transpose(&t(&[1, 1, 0], &[]), &t(&[1, 2, 3], &[1.; 6]), Some(&t(&[2], &[5., 6.])), &a).unwrap();
    // out_d = (0 − 1)·1 + 1·(3 − 1) + 1 = 2
    assert_eq!((y.shape(), vals(&y)), (&[1usize, 2, 2][..], vec![5., 5., 6., 6.]));
    // Cin = 0
    let y = conv_transpose(&t(&[1, 0, 2], &[]), &t(&[0, 2, 1], &[]), Some(&t(&[2], &[5., 6.])), &a).unwrap();
    assert_eq!(vals(&y), [5., 5., 6., 6.]);
}

#[test]
fn every_float_dtype_rounds_once() {
    let a = attrs(&[1], &[1], &[0], &[0], 1);
    for (x, w, want) in [
        (Tensor::from_slice(&[1, 1, 2], &[f16::from_f32(1.0), f16::from_f32(2.0)]).unwrap(), DType::F16, 5.0),
        (Tensor::from_slice(&[1, 1, 2], &[bf16::from_f32(1.0), bf16::from_f32(2.0)]).unwrap(), DType::BF16, 5.0),
        (Tensor::from_slice(&[1, 1, 2], &[1.0f32, 2.0]).unwrap(), DType::F32, 5.0),
    ] {
        let wt = crate::ops::elementwise::cast::cast(&t(&[1, 1, 2], &[1., 2.]), w).unwrap();
        let y = conv(&x, &wt, None, &a).unwrap();
        assert_eq!(y.dtype(), w);
        assert_eq!(y.view().to_f64_lossy(), [want]);
        let y = conv_transpose(&x, &wt, None, &tr(a.clone(), &[0])).unwrap();
        assert_eq!(y.view().to_f64_lossy(), [1., 4., 4.]);
    }
}

fn dot(a: &Tensor, b: &Tensor) -> f64 {
    vals(a).iter().zip(vals(b)).map(|(x, y)| x * y).sum()
}

/// `<Conv(x, w), y> == <x, ConvTranspose(y, w)>`, with output_padding making the transpose's
/// output the shape of x.
#[test]
fn conv_transpose_is_the_adjoint_of_conv() {
    type Case = (Vec<usize>, usize, usize, usize, Vec<usize>, ConvAttrs);
    let cases: Vec<Case> = vec![
        (vec![7], 2, 3, 1, vec![3], attrs(&[2], &[1], &[1], &[2], 1)),
        (vec![9, 8], 4, 6, 2, vec![3, 2], attrs(&[2, 3], &[2, 1], &[0, 1], &[2, 0], 2)),
        (vec![5, 6], 3, 3, 3, vec![3, 3], attrs(&[1, 2], &[1, 2], &[1, 2], &[1, 0], 3)),
        (vec![4, 5, 6], 2, 4, 2, vec![2, 3, 2], attrs(&[1, 2, 3], &[2, 1, 1], &[1, 0, 1], &[0, 1, 1], 2)),
    ];
    for (k, (sp, cin, cout, g, ks, a)) in cases.into_iter().enumerate() {
        let x = rand_t(k as u64, &[2, cin, sp[0]].into_iter().chain(sp[1..].iter().copied()).collect::<Vec<_>>());
        let wshape: Vec<usize> = [cout, cin / g].into_iter().chain(ks.iter().copied()).collect();
        let w = rand_t(100 + k as u64, &wshape);
        let cx = conv(&x, &w, None, &a).unwrap();
        let y = rand_t(200 + k as u64, cx.shape());
        let op: Vec<usize> = (0..sp.len())
            .map(|d| (sp[d] + a.pads_begin[d] + a.pads_end[d] - (a.dilation[d] * (ks[d] - 1) + 1)) % a.stride[d])
            .collect();
        let ty = conv_transpose(&y, &w, None, &tr(a.clone(), &op)).unwrap();
        assert_eq!(ty.shape(), x.shape(), "case {k}");
        let (l, r) = (dot(&cx, &y), dot(&x, &ty));
        assert!((l - r).abs() <= 1e-12 * l.abs().max(1.0), "case {k}: {l} vs {r}");
    }
}

#[test]
fn a_one_by_one_conv_is_a_matmul() {
    let x = rand_t(1, &[2, 5, 3, 4]);
    let w = rand_t(2, &[6, 5, 1, 1]);
    let y = conv(&x, &w, None, &attrs(&[1, 1], &[1, 1], &[0, 0], &[0, 0], 1)).unwrap();
    let m = matmul(&w.clone().reshaped(&[6, 5]).unwrap(), &x.clone().reshaped(&[2, 5, 12]).unwrap()).unwrap();
    let (a, b) = (vals(&y), vals(&m));
    assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-14), "{a:?} vs {b:?}");
}

/// Channels `[from, from + len)` of a `[N, C, *sp]` tensor.
fn channels(x: &Tensor, from: usize, len: usize) -> Tensor {
    let d = x.shape();
    let inner: usize = d[2..].iter().product();
    let v = vals(x);
    let mut out = Vec::new();
    for n in 0..d[0] {
        out.extend_from_slice(&v[(n * d[1] + from) * inner..(n * d[1] + from + len) * inner]);
    }
    t(&[d[0], len].into_iter().chain(d[2..].iter().copied()).collect::<Vec<_>>(), &out)
}

/// Entries `[from, from + len)` of dim 0 (output channels of a weight).
fn rows(w: &Tensor, from: usize, len: usize) -> Tensor {
    let inner: usize = w.shape()[1..].iter().product();
    let shape: Vec<usize> = [len].into_iter().chain(w.shape()[1..].iter().copied()).collect();
    t(&shape, &vals(w)[from * inner..(from + len) * inner])
}

#[test]
fn groups_are_separate_convolutions_side_by_side() {
    let (g, cgi, cgo) = (3, 2, 4);
    let x = rand_t(5, &[2, g * cgi, 6, 5]);
    let w = rand_t(6, &[g * cgo, cgi, 3, 2]);
    let a = attrs(&[2, 1], &[1, 2], &[1, 0], &[1, 1], g as u32);
    let y = conv(&x, &w, None, &a).unwrap();
    let one = ConvAttrs { groups: 1, ..a.clone() };
    for k in 0..g {
        let part = conv(&channels(&x, k * cgi, cgi), &rows(&w, k * cgo, cgo), None, &one).unwrap();
        assert_eq!(vals(&channels(&y, k * cgo, cgo)), vals(&part), "group {k}");
    }
    // the same for the transpose (weights [Cin, Cout/G, *k], grouped by input channel)
    let ta = tr(a, &[0, 0]);
    let y = conv_transpose(&x, &w.clone().reshaped(&[g * cgi, cgo, 3, 2]).unwrap(), None, &ta).unwrap();
    let one = tr(one, &[0, 0]);
    let wt = w.reshaped(&[g * cgi, cgo, 3, 2]).unwrap();
    for k in 0..g {
        let part = conv_transpose(&channels(&x, k * cgi, cgi), &rows(&wt, k * cgi, cgi), None, &one).unwrap();
        assert_eq!(vals(&channels(&y, k * cgo, cgo)), vals(&part), "transpose group {k}");
    }
}
