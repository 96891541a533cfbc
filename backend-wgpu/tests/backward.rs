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

fn floats() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64].into_iter().filter(|&d| supported(d)).collect()
}

fn random(d: DType, shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    tensor(d, shape, &(0..n).map(|_| r.uniform(lo, hi)).collect::<Vec<_>>())
}

/// (shape, class axis): rows straddling 256, non-trailing axes, size-0 dims outside the class
/// axis (an empty class axis is a build error).
const LOSS_CASES: &[(&[usize], i64)] = &[
    (&[1], 0),
    (&[63], 0),
    (&[65], -1),
    (&[257], 0),
    (&[3, 257], 1),
    (&[257, 3], 0),
    (&[4, 5, 6], 1),
    (&[2, 3, 300], 2),
    (&[5, 1, 7], 1),
    (&[0, 4], 1),
    (&[2, 0, 3], 2),
];

/// Soft targets in [0, 1) with about a third exactly zero.
fn targets(d: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed | 1);
    tensor(
        d,
        shape,
        &(0..n).map(|_| if r.next().is_multiple_of(3) { 0.0 } else { r.uniform(0.0, 1.0) }).collect::<Vec<_>>(),
    )
}

/// Logits with the spec's special values, one row each: masked logits with zero targets (finite);
/// all −∞ (NaN); a +∞ (NaN); a NaN (NaN).
const SPECIAL_LOGITS: [[f64; 4]; 4] = [
    [1.0, f64::NEG_INFINITY, 2.0, f64::NEG_INFINITY],
    [f64::NEG_INFINITY; 4],
    [1.0, f64::INFINITY, 0.0, 0.0],
    [f64::NAN, 1.0, 2.0, 3.0],
];
/// Targets of [`SPECIAL_LOGITS`].
const SPECIAL_TARGETS: [[f64; 4]; 4] =
    [[0.5, 0.0, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];

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
    for (c, (shape, axis)) in LOSS_CASES.iter().enumerate() {
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
fn softmax_cross_entropy_backward_long_axis() {
    let x = random(DType::F32, &[2, 100_000], -5.0, 5.0, 31);
    loss_backward_case(&x, &targets(DType::F32, &[2, 100_000], 32), -1, 34);
}
