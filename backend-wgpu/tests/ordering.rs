//! ArgMax/ArgMin, Cumsum/CumsumBackward, SoftmaxCrossEntropy(+Backward) and TopK on the wgpu
//! backend against cpu-ref: every dtype the spec allows (that the adapter supports), any axis,
//! rows straddling the workgroup size, size-0 dims, the spec's special values and one long axis
//! per op.

use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;

// The harness (backends, data, comparison) is in tests/common.

mod common;
use common::*;

// ---------------------------------------------------------------- ordering

fn numeric() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32, DType::I8, DType::U32, DType::U8]
        .into_iter()
        .filter(|&d| supported(d))
        .collect()
}

fn floats() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64].into_iter().filter(|&d| supported(d)).collect()
}

fn index_dtypes() -> Vec<DType> {
    [DType::I32, DType::I64].into_iter().filter(|&d| supported(d)).collect()
}

fn random(d: DType, shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    tensor(d, shape, &(0..n).map(|_| r.uniform(lo, hi)).collect::<Vec<_>>())
}

/// Values with many ties and, for floats, the special values (NaN, ±∞, ±0) at `rate`.
fn values(d: DType, shape: &[usize], rate: f64, seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0];
    let v: Vec<f64> = (0..n)
        .map(|_| {
            if d.is_float() && r.uniform(0.0, 1.0) < rate {
                specials[(r.next() % 5) as usize]
            } else if d.is_float() && r.uniform(0.0, 1.0) < 0.5 {
                r.uniform(-100.0, 100.0)
            } else if d == DType::Bool {
                (r.next() % 2) as f64
            } else if matches!(d, DType::U8 | DType::U32) {
                (r.next() % 7) as f64
            } else {
                (r.next() % 7) as f64 - 3.0
            }
        })
        .collect();
    tensor(d, shape, &v)
}

/// Runs `g` on both backends and compares every output.
fn both(name: &str, g: &Graph, inputs: &[(&str, &Tensor)], tol: Option<f64>, m: Option<&[f64]>) {
    let got = run(wgpu(), g, inputs);
    let want = run(cpu(), g, inputs);
    assert_eq!(got.len(), want.len(), "{name}: outputs");
    for (k, (gt, wt)) in got.iter().zip(&want).enumerate() {
        check(&format!("{name} output {k}"), gt, wt, tol, m);
    }
}

/// (shape, axis): rows straddling 256, non-trailing axes, size-0 dims.
const CASES: &[(&[usize], i64)] = &[
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

// ---------------------------------------------------------------- ArgMax / ArgMin

fn arg_graph(max: bool, d: DType, shape: &[usize], axis: i64, keep: bool, ix: DType) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let y = if max { g.arg_max(x, axis, keep, ix).unwrap() } else { g.arg_min(x, axis, keep, ix).unwrap() };
    g.output(y).unwrap();
    g.build().unwrap()
}

#[test]
fn arg_max_min_every_dtype_axis_and_index_dtype() {
    let mut dtypes = numeric();
    dtypes.push(DType::Bool);
    for (c, (shape, axis)) in CASES.iter().enumerate() {
        for &d in &dtypes {
            let x = values(d, shape, 0.05, c as u64 + 7);
            for max in [true, false] {
                for (k, &ix) in index_dtypes().iter().enumerate() {
                    let keep = (c + k) % 2 == 0;
                    let name = format!("arg max={max} {d} {shape:?} axis {axis} keep {keep} {ix}");
                    both(&name, &arg_graph(max, d, shape, *axis, keep, ix), &[("x", &x)], None, None);
                }
            }
        }
    }
}

#[test]
fn arg_max_min_special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // first NaN wins; ±∞ ordinary; −0 ties +0 (smallest index); all −∞ gives 0
    let rows: [[f64; 5]; 5] = [
        [1.0, nan, 3.0, nan, -inf],
        [-inf, -inf, -inf, -inf, -inf],
        [inf, 2.0, inf, -inf, -inf],
        [-0.0, 0.0, -0.0, 0.0, -1.0],
        [2.0, 1.0, 2.0, 1.0, 2.0],
    ];
    let v: Vec<f64> = rows.iter().flatten().copied().collect();
    for d in floats() {
        let x = tensor(d, &[5, 5], &v);
        for max in [true, false] {
            both(
                &format!("special {d} max={max}"),
                &arg_graph(max, d, &[5, 5], 1, false, DType::I32),
                &[("x", &x)],
                None,
                None,
            );
            let got = run(wgpu(), &arg_graph(max, d, &[5, 5], 1, false, DType::I32), &[("x", &x)]);
            let idx: Vec<i32> =
                got[0].bytes().chunks(4).map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            assert_eq!(idx[0], 1, "{d} max={max}: first NaN");
            assert_eq!(idx[3], if max { 0 } else { 4 }, "{d} max={max}: ±0 tie");
        }
    }
}

#[test]
fn arg_long_axis() {
    let x = values(DType::F32, &[2, 100_000], 0.0, 3);
    both("arg long", &arg_graph(true, DType::F32, &[2, 100_000], 1, false, DType::I32), &[("x", &x)], None, None);
    let x = values(DType::I32, &[100_000, 2], 0.0, 4);
    both(
        "arg long strided",
        &arg_graph(false, DType::I32, &[100_000, 2], 0, true, DType::I32),
        &[("x", &x)],
        None,
        None,
    );
}

// ---------------------------------------------------------------- Cumsum / CumsumBackward

fn cumsum_graph(backward: bool, d: DType, shape: &[usize], axis: i64, exclusive: bool, reverse: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let y = if backward {
        g.cumsum_backward(x, axis, exclusive, reverse).unwrap()
    } else {
        g.cumsum(x, axis, exclusive, reverse).unwrap()
    };
    g.output(y).unwrap();
    g.build().unwrap()
}

/// The magnitude of §2.5.5: the same scan of |x| (computed on the host in f64).
fn scan_magnitude(x: &Tensor, axis: usize, exclusive: bool, reverse: bool) -> Vec<f64> {
    let v: Vec<f64> = x.view().to_f64_lossy().iter().map(|a| a.abs()).collect();
    let dims = x.shape();
    let len = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let mut m = vec![0.0; v.len()];
    for o in 0..outer {
        for j in 0..inner {
            let mut s = 0.0;
            for q in 0..len {
                let p = if reverse { len - 1 - q } else { q };
                let e = (o * len + p) * inner + j;
                if exclusive {
                    m[e] = s;
                    s += v[e];
                } else {
                    s += v[e];
                    m[e] = s;
                }
            }
        }
    }
    m
}

fn cumsum_case(backward: bool, x: &Tensor, axis: i64, exclusive: bool, reverse: bool) {
    let (d, shape) = (x.dtype(), x.shape().to_vec());
    let a = ((axis + shape.len() as i64) % shape.len() as i64) as usize;
    let name = format!("cumsum backward={backward} {d} {shape:?} axis {axis} excl {exclusive} rev {reverse}");
    let g = cumsum_graph(backward, d, &shape, axis, exclusive, reverse);
    let m = scan_magnitude(x, a, exclusive, reverse != backward);
    let tol = d.is_float().then(|| approx(d));
    both(&name, &g, &[("x", x)], tol, Some(&m));
}

#[test]
fn cumsum_every_dtype_axis_and_direction() {
    for (c, (shape, axis)) in CASES.iter().enumerate() {
        for d in numeric() {
            let x =
                if d.is_float() { random(d, shape, -4.0, 4.0, c as u64 + 1) } else { values(d, shape, 0.0, c as u64) };
            for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
                cumsum_case(false, &x, *axis, exclusive, reverse);
            }
        }
    }
}

#[test]
fn cumsum_backward_every_float_dtype_and_direction() {
    for (c, (shape, axis)) in CASES.iter().enumerate() {
        for d in floats() {
            let x = random(d, shape, -4.0, 4.0, c as u64 + 11);
            for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
                cumsum_case(true, &x, *axis, exclusive, reverse);
            }
        }
    }
}

#[test]
fn cumsum_special_values_and_wrapping() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let v = [1.0, inf, 2.0, -inf, 3.0, nan, 4.0, -0.0];
    for d in floats() {
        let x = tensor(d, &[8], &v);
        for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
            cumsum_case(false, &x, 0, exclusive, reverse);
        }
    }
    // integer sums wrap
    for (d, big) in [(DType::I32, 2_000_000_000.0), (DType::I8, 100.0), (DType::U8, 200.0), (DType::U32, 4e9)] {
        let x = tensor(d, &[600], &vec![big; 600]);
        cumsum_case(false, &x, 0, false, false);
        cumsum_case(false, &x, 0, true, true);
    }
}

#[test]
fn cumsum_long_axis() {
    // 200 000 elements along a long axis: the blocked tree scan stays within Approx (M)
    let x = random(DType::F32, &[200_000], -1.0, 1.0, 5);
    cumsum_case(false, &x, 0, false, false);
    cumsum_case(true, &x, 0, true, false);
    let x = random(DType::F32, &[100_000, 2], 0.0, 1.0, 6);
    cumsum_case(false, &x, 0, false, true);
}

// ---------------------------------------------------------------- SoftmaxCrossEntropy

fn loss_graph(backward: bool, d: DType, shape: &[usize], axis: i64) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let t = g.input("t", d, shape).unwrap();
    let y = if backward {
        let r = shape.len() as i64;
        let a = ((axis % r) + r) % r;
        let mut ds = shape.to_vec();
        ds.remove(a as usize);
        let dl = g.input("dl", d, ds.as_slice()).unwrap();
        g.softmax_cross_entropy_backward(x, t, dl, axis).unwrap()
    } else {
        g.softmax_cross_entropy(x, t, axis).unwrap()
    };
    g.output(y).unwrap();
    g.build().unwrap()
}

fn loss_case(backward: bool, x: &Tensor, t: &Tensor, axis: i64, seed: u64) {
    let (d, shape) = (x.dtype(), x.shape().to_vec());
    let r = shape.len() as i64;
    let mut ds = shape.clone();
    ds.remove((((axis % r) + r) % r) as usize);
    let dl = random(d, &ds, -2.0, 2.0, seed);
    let name = format!("loss backward={backward} {d} {shape:?} axis {axis}");
    let mut inputs = vec![("x", x), ("t", t)];
    if backward {
        inputs.push(("dl", &dl));
    }
    both(&name, &loss_graph(backward, d, &shape, axis), &inputs, Some(approx(d)), None);
}

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

#[test]
fn softmax_cross_entropy_every_dtype_and_axis() {
    for (c, (shape, axis)) in CASES.iter().enumerate() {
        if shape.contains(&0)
            && shape[(((*axis % shape.len() as i64) + shape.len() as i64) % shape.len() as i64) as usize] == 0
        {
            continue; // an empty class axis is a build error
        }
        for d in floats() {
            let x = random(d, shape, -5.0, 5.0, c as u64 + 3);
            let t = targets(d, shape, c as u64 + 4);
            for backward in [false, true] {
                loss_case(backward, &x, &t, *axis, c as u64 + 5);
            }
        }
    }
}

#[test]
fn softmax_cross_entropy_special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // masked logits with zero targets stay finite; all −∞ gives NaN; +∞ and NaN give NaN
    let x = [[1.0, -inf, 2.0, -inf], [-inf, -inf, -inf, -inf], [1.0, inf, 0.0, 0.0], [nan, 1.0, 2.0, 3.0]];
    let t = [[0.5, 0.0, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];
    for d in floats() {
        let xt = tensor(d, &[4, 4], &x.iter().flatten().copied().collect::<Vec<_>>());
        let tt = tensor(d, &[4, 4], &t.iter().flatten().copied().collect::<Vec<_>>());
        for backward in [false, true] {
            loss_case(backward, &xt, &tt, 1, 9);
        }
        let y = run(wgpu(), &loss_graph(false, d, &[4, 4], 1), &[("x", &xt), ("t", &tt)])[0].view().to_f64_lossy();
        assert!(y[0].is_finite() && y[1].is_nan() && y[2].is_nan() && y[3].is_nan(), "{d}: {y:?}");
    }
}

#[test]
fn softmax_cross_entropy_long_axis() {
    let x = random(DType::F32, &[2, 100_000], -5.0, 5.0, 31);
    let t = targets(DType::F32, &[2, 100_000], 32);
    loss_case(false, &x, &t, 1, 33);
    loss_case(true, &x, &t, -1, 34);
}

// ---------------------------------------------------------------- TopK

fn topk_graph(d: DType, shape: &[usize], k: usize, axis: i64, largest: bool, ix: DType) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let (v, i) = g.top_k(x, k, axis, largest, ix).unwrap();
    g.output(v).unwrap();
    g.output(i).unwrap();
    g.build().unwrap()
}

#[test]
fn top_k_every_dtype_axis_and_k() {
    for (c, (shape, axis)) in CASES.iter().enumerate() {
        let r = shape.len() as i64;
        let n = shape[(((*axis % r) + r) % r) as usize];
        for d in numeric() {
            let x = values(d, shape, 0.1, c as u64 + 21);
            for (j, k) in [0, 1, n / 2, n].into_iter().filter(|&k| k <= n).enumerate() {
                for largest in [true, false] {
                    let ix = index_dtypes()[(c + j) % index_dtypes().len()];
                    let name = format!("topk {d} {shape:?} axis {axis} k {k} largest {largest} {ix}");
                    both(&name, &topk_graph(d, shape, k, *axis, largest, ix), &[("x", &x)], None, None);
                }
            }
        }
    }
}

#[test]
fn top_k_special_values_and_ties() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let v = [1.0, nan, -0.0, inf, 0.0, -inf, nan, 1.0, -1.0, 0.0];
    for d in floats() {
        let x = tensor(d, &[10], &v);
        for largest in [true, false] {
            for k in [1, 4, 10] {
                both(
                    &format!("topk special {d} k {k} largest {largest}"),
                    &topk_graph(d, &[10], k, 0, largest, DType::I32),
                    &[("x", &x)],
                    None,
                    None,
                );
            }
        }
    }
}

#[test]
fn top_k_longest_supported_row() {
    let x = values(DType::F32, &[3, 2048], 0.01, 41);
    both("topk 2048", &topk_graph(DType::F32, &[3, 2048], 700, 1, true, DType::I32), &[("x", &x)], None, None);
    let x = values(DType::I32, &[1000, 3], 0.0, 42);
    both("topk strided", &topk_graph(DType::I32, &[1000, 3], 1000, 0, false, DType::I32), &[("x", &x)], None, None);
}

#[test]
fn top_k_long_rows_every_dtype() {
    // rows longer than the workgroup-memory sort (2048, 1024 for 64-bit keys): global bitonic
    for (c, d) in numeric().into_iter().enumerate() {
        let x = values(d, &[2, 3000], 0.05, c as u64 + 51);
        for (k, largest) in [(1, true), (2999, false), (1500, true)] {
            let ix = index_dtypes()[c % index_dtypes().len()];
            let name = format!("topk long {d} k {k} largest {largest}");
            both(&name, &topk_graph(d, &[2, 3000], k, 1, largest, ix), &[("x", &x)], None, None);
        }
    }
    let x = values(DType::I8, &[4500, 2], 0.0, 52);
    both("topk long strided", &topk_graph(DType::I8, &[4500, 2], 300, 0, true, DType::I64), &[("x", &x)], None, None);
}

#[test]
fn top_k_long_axis() {
    let x = values(DType::F32, &[100_000], 0.01, 53);
    both("topk 100000 k 5", &topk_graph(DType::F32, &[100_000], 5, 0, true, DType::I32), &[("x", &x)], None, None);
    both(
        "topk 100000 k 60000",
        &topk_graph(DType::F32, &[100_000], 60_000, 0, false, DType::I32),
        &[("x", &x)],
        None,
        None,
    );
}
