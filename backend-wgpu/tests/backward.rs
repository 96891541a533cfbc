//! The backward family on the wgpu backend against cpu-ref: SoftmaxCrossEntropyBackward (any
//! class axis) on every float dtype, rows straddling the workgroup size, size-0 dims, the spec's
//! special values and one long row.

use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;

// The harness (backends, data, comparison) is in tests/common.

mod common;
use common::*;

// ---------------------------------------------------------------- SoftmaxCrossEntropyBackward

/// `shape` without the class axis: the shape of the loss and of its gradient `d_loss`.
fn loss_shape(shape: &[usize], axis: i64) -> Vec<usize> {
    let r = shape.len() as i64;
    let mut ds = shape.to_vec();
    ds.remove((((axis % r) + r) % r) as usize);
    ds
}

fn loss_backward_graph(d: DType, shape: &[usize], axis: i64) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let t = g.input("t", d, shape).unwrap();
    let dl = g.input("dl", d, loss_shape(shape, axis).as_slice()).unwrap();
    let y = g.softmax_cross_entropy_backward(x, t, dl, axis).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

/// Compares the gradient for logits `x` and targets `t`, with `d_loss` drawn from `seed`.
fn loss_backward_case(x: &Tensor, t: &Tensor, axis: i64, seed: u64) {
    let (d, shape) = (x.dtype(), x.shape());
    let dl = random(d, &loss_shape(shape, axis), -2.0, 2.0, seed);
    let name = format!("SoftmaxCrossEntropyBackward {d} {shape:?} axis {axis}");
    let g = loss_backward_graph(d, shape, axis);
    let inputs = [("x", x), ("t", t), ("dl", &dl)];
    check(&name, &run(wgpu(), &g, &inputs)[0], &run(cpu(), &g, &inputs)[0], Some(approx(d)), None);
}

#[test]
fn softmax_cross_entropy_backward_every_dtype_and_axis() {
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
        for d in floats() {
            let x = random(d, shape, -5.0, 5.0, c as u64 + 3);
            loss_backward_case(&x, &targets(d, shape, c as u64 + 4), *axis, c as u64 + 5);
        }
    }
}

#[test]
fn softmax_cross_entropy_backward_special_values() {
    for d in floats() {
        let x = tensor(d, &[4, 4], SPECIAL_LOGITS.as_flattened());
        let t = tensor(d, &[4, 4], SPECIAL_TARGETS.as_flattened());
        loss_backward_case(&x, &t, 1, 9);
    }
}

#[test]
fn softmax_cross_entropy_backward_nan_target_is_nan_like_cpu_ref() {
    // d_logits = (softmax(x) − t)·d_loss: NaN exactly where t is NaN, finite elsewhere.
    let nan = f64::NAN;
    let t = [[nan, 0.5, 0.25, 0.25], [0.0, 0.0, nan, 1.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, nan]];
    for d in floats() {
        let x = random(d, &[4, 4], -3.0, 3.0, 41);
        let tt = tensor(d, &[4, 4], t.as_flattened());
        loss_backward_case(&x, &tt, 1, 42);
        let dl = tensor(d, &[4], &[1.0, -1.0, 0.5, 2.0]);
        let g = loss_backward_graph(d, &[4, 4], 1);
        let y = run(wgpu(), &g, &[("x", &x), ("t", &tt), ("dl", &dl)])[0].view().to_f64_lossy();
        for (k, (y, t)) in y.iter().zip(t.as_flattened()).enumerate() {
            assert_eq!(y.is_nan(), t.is_nan(), "{d} element {k}: {y} for target {t}");
        }
    }
}

#[test]
fn softmax_cross_entropy_backward_long_axis() {
    let x = random(DType::F32, &[2, 100_000], -5.0, 5.0, 31);
    loss_backward_case(&x, &targets(DType::F32, &[2, 100_000], 32), -1, 34);
}
