//! The reduce family on the wgpu backend against cpu-ref. Reduce (§2.5.1): every op × dtype,
//! shapes straddling the workgroup size, size-0 dims, non-trailing and multiple axes, keep_dims,
//! special values, the two-pass path, and a 2-D workgroup grid. ArgMax/ArgMin, Cumsum/
//! CumsumBackward and TopK (§2.5.2–2.5.6): every dtype the spec allows (that the adapter
//! supports), any axis, rows straddling the workgroup size, size-0 dims, the spec's special values
//! and one long axis per op.

use backend_api::op::ReduceOp;
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;
use half::f16;

// The harness (backends, data, comparison) is in tests/common.

mod common;
use common::*;

// ---------------------------------------------------------------- reduce

fn reduce_graph(op: ReduceOp, d: DType, shape: &[usize], axes: &[i64], keep: bool) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let y = g.reduce(op, x, axes, keep).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

/// M = Σ|x| (÷|R| for Mean) over each output's reduced set, computed by cpu-ref in f64.
fn magnitude(op: ReduceOp, x: &Tensor, axes: &[i64], keep: bool) -> Vec<f64> {
    let mut g = GraphBuilder::new();
    let xi = g.input("x", x.dtype(), x.shape()).unwrap();
    let c = g.cast(xi, DType::F64).unwrap();
    let a = g.unary(backend_api::op::UnaryOp::Abs, c).unwrap();
    let mop = if op == ReduceOp::Mean { ReduceOp::Mean } else { ReduceOp::Sum };
    let y = g.reduce(mop, a, axes, keep).unwrap();
    g.output(y).unwrap();
    run(cpu(), &g.build().unwrap(), &[("x", x)])[0].view().to_f64_lossy()
}

/// Random input for `op` on `d`: floats in [-2, 2) (near ±1 for Prod, to stay finite), ints over
/// their whole range (so sums and products wrap), Bool mostly true for Min and mostly false for
/// Max (so both answers occur), with non-1 true bytes.
fn random_input(op: ReduceOp, d: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    if d == DType::Bool {
        let p_true = if op == ReduceOp::Min { 0.97 } else { 0.03 };
        let b: Vec<u8> =
            (0..n).map(|_| if r.uniform(0.0, 1.0) < p_true { 1 + (r.next() % 3) as u8 } else { 0 }).collect();
        return Tensor::from_bytes(d, shape, b).unwrap();
    }
    if d.is_int() {
        let b: Vec<u8> = (0..n * d.size()).map(|_| r.next() as u8).collect();
        return Tensor::from_bytes(d, shape, b).unwrap();
    }
    let v: Vec<f64> = (0..n)
        .map(|_| match op {
            ReduceOp::Prod => r.uniform(0.97, 1.03) * if r.next().is_multiple_of(2) { 1.0 } else { -1.0 },
            _ => r.uniform(-2.0, 2.0),
        })
        .collect();
    tensor(d, shape, &v)
}

/// Runs one reduction on both backends and compares; returns the worst relative error.
fn compare(op: ReduceOp, x: &Tensor, axes: &[i64], keep: bool) -> f64 {
    let name = format!("Reduce.{} {} {:?} axes {axes:?} keep {keep}", op.name(), x.dtype(), x.shape());
    let g = reduce_graph(op, x.dtype(), x.shape(), axes, keep);
    let got = &run(wgpu(), &g, &[("x", x)])[0];
    let want = &run(cpu(), &g, &[("x", x)])[0];
    let d = x.dtype();
    let (tol, m) = match op {
        _ if !d.is_float() => (None, None),
        ReduceOp::Max | ReduceOp::Min => (None, None),
        ReduceOp::Prod => (Some(approx(d)), None),
        ReduceOp::Sum | ReduceOp::Mean => (Some(approx(d)), Some(magnitude(op, x, axes, keep))),
    };
    check(&name, got, want, tol, m.as_deref())
}

type Case = (&'static [usize], &'static [i64], bool);

/// Shapes straddling 256, size-0 dims, non-trailing / multiple / empty axes, keep_dims, and rows
/// long enough for the two-pass path (> 4096).
const CASES: &[Case] = &[
    (&[1], &[0], false),
    (&[63], &[0], false),
    (&[64], &[0], true),
    (&[65], &[0], false),
    (&[255], &[0], false),
    (&[257], &[-1], false),
    (&[3, 257], &[1], false),
    (&[257, 3], &[0], false),
    (&[5, 65], &[1], true),
    (&[65, 5], &[0], true),
    (&[4, 5, 6], &[1], false),
    (&[4, 5, 6], &[0, 2], true),
    (&[4, 5, 6], &[0, 1, 2], false),
    (&[4, 5, 6], &[], false),
    (&[2, 3, 4, 5], &[1, 3], false),
    (&[3, 1, 70], &[0, 1], false),
    (&[6, 1, 7], &[1], true),
    (&[2, 33, 3, 5], &[0, 1, 3], false),
    (&[0, 4], &[0], false),
    (&[3, 0], &[1], false),
    (&[0, 3], &[1], false),
    (&[2, 0, 3], &[0, 2], true),
    (&[5000], &[0], false),
    (&[3, 4500], &[1], false),
    (&[4500, 2], &[0], false),
    (&[2, 70, 3, 40], &[1, 3], true),
];

fn sweep(ops: &[ReduceOp]) {
    let mut worst: Vec<(String, f64)> = Vec::new();
    for &op in ops {
        for d in op.dtypes().iter().filter(|&d| supported(d)) {
            let mut w: f64 = 0.0;
            for (k, (shape, axes, keep)) in CASES.iter().enumerate() {
                let x = random_input(op, d, shape, k as u64 + 1);
                w = w.max(compare(op, &x, axes, *keep));
            }
            worst.push((format!("{}/{d}", op.name()), w));
        }
    }
    for (n, w) in worst {
        eprintln!("{n}: worst |got-want|/(M+|want|) = {w:.2e}");
    }
}

#[test]
fn sum_and_mean_every_dtype() {
    sweep(&[ReduceOp::Sum, ReduceOp::Mean]);
}

#[test]
fn prod_every_dtype() {
    sweep(&[ReduceOp::Prod]);
}

#[test]
fn max_and_min_every_dtype() {
    sweep(&[ReduceOp::Max, ReduceOp::Min]);
}

#[test]
fn empty_reductions_give_identities() {
    for d in floats() {
        let x = tensor(d, &[2, 0], &[]);
        let get = |op| run(wgpu(), &reduce_graph(op, d, &[2, 0], &[1], false), &[("x", &x)])[0].view().to_f64_lossy();
        assert_eq!(get(ReduceOp::Sum), [0.0, 0.0], "{d}");
        assert_eq!(get(ReduceOp::Prod), [1.0, 1.0], "{d}");
        assert!(get(ReduceOp::Mean).iter().all(|v| v.is_nan()), "{d}");
        assert_eq!(get(ReduceOp::Max), [f64::NEG_INFINITY; 2], "{d}");
        assert_eq!(get(ReduceOp::Min), [f64::INFINITY; 2], "{d}");
    }
    let ints = [DType::I64, DType::I32, DType::I8, DType::U32, DType::U8, DType::Bool];
    for d in ints.into_iter().filter(|&d| supported(d)) {
        let x = tensor(d, &[0, 3], &[]);
        for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min] {
            if op.dtypes().contains(d) {
                compare(op, &x, &[0], false);
            }
        }
    }
    let i8s = tensor(DType::I8, &[0, 2], &[]);
    let mx = run(wgpu(), &reduce_graph(ReduceOp::Max, DType::I8, &[0, 2], &[0], false), &[("x", &i8s)]);
    assert_eq!(mx[0].to_vec::<i8>().unwrap(), [i8::MIN; 2]);
    let u = tensor(DType::U32, &[0], &[]);
    let mn = run(wgpu(), &reduce_graph(ReduceOp::Min, DType::U32, &[0], &[0], false), &[("x", &u)]);
    assert_eq!(mn[0].to_vec::<u32>().unwrap(), [u32::MAX]);
}

#[test]
fn max_min_propagate_nan_and_order_signed_zeros() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    for d in floats() {
        // rows: [1, NaN, 3], [-0, +0, -1], [+0, -0, -1], [-inf x3], [inf, 1, NaN]
        let v = [1.0, nan, 3.0, -0.0, 0.0, -1.0, 0.0, -0.0, -1.0, -inf, -inf, -inf, inf, 1.0, nan];
        let x = tensor(d, &[5, 3], &v);
        for op in [ReduceOp::Max, ReduceOp::Min] {
            compare(op, &x, &[1], false);
        }
        let g = |op| run(wgpu(), &reduce_graph(op, d, &[5, 3], &[1], false), &[("x", &x)])[0].view().to_f64_lossy();
        let (mx, mn) = (g(ReduceOp::Max), g(ReduceOp::Min));
        assert!(mx[0].is_nan() && mn[0].is_nan() && mx[4].is_nan() && mn[4].is_nan(), "{d}");
        // max(−0, +0) = +0 and min(−0, +0) = −0 in either order (§1.7), checked by sign.
        assert!(mx[1] == 0.0 && mx[1].is_sign_positive() && mx[2].is_sign_positive(), "{d}: {mx:?}");
        assert_eq!((mn[1], mn[2]), (-1.0, -1.0), "{d}");
        assert_eq!((mx[3], mn[3]), (-inf, -inf), "{d}");
        // Long rows (tree path): one NaN deep inside; signed zeros only.
        let mut long = vec![0.5; 3 * 700];
        long[1234] = nan;
        for (i, z) in long[1400..].iter_mut().enumerate() {
            *z = if i % 3 == 0 { 0.0 } else { -0.0 };
        }
        let x = tensor(d, &[3, 700], &long);
        let gl = |op| run(wgpu(), &reduce_graph(op, d, &[3, 700], &[1], false), &[("x", &x)])[0].view().to_f64_lossy();
        let (mx, mn) = (gl(ReduceOp::Max), gl(ReduceOp::Min));
        assert!(mx[1].is_nan() && mn[1].is_nan() && !mx[0].is_nan(), "{d}: {mx:?}");
        assert!(mx[2] == 0.0 && mx[2].is_sign_positive(), "{d}: {mx:?}");
        assert!(mn[2] == 0.0 && mn[2].is_sign_negative(), "{d}: {mn:?}");
        // Strided (non-trailing) with specials, both layouts.
        compare(ReduceOp::Max, &x, &[0], false);
        compare(ReduceOp::Min, &x, &[0], true);
    }
}

#[test]
fn bool_max_is_any_and_min_is_all() {
    let x = Tensor::from_bytes(DType::Bool, &[3, 2], vec![1, 0, 0, 0, 5, 1]).unwrap();
    let g =
        |op, axes: &[i64]| run(wgpu(), &reduce_graph(op, DType::Bool, &[3, 2], axes, false), &[("x", &x)])[0].clone();
    assert_eq!(g(ReduceOp::Max, &[1]).to_vec::<bool>().unwrap(), [true, false, true]);
    assert_eq!(g(ReduceOp::Min, &[1]).to_vec::<bool>().unwrap(), [false, false, true]);
    assert_eq!(g(ReduceOp::Max, &[0]).to_vec::<bool>().unwrap(), [true, true]);
    assert_eq!(g(ReduceOp::Min, &[0]).to_vec::<bool>().unwrap(), [false, false]);
    assert_eq!(g(ReduceOp::Min, &[0, 1]).bytes(), [0]);
    // long rows: a single false / true at the end
    let mut v = vec![1u8; 2 * 1000];
    v[999] = 0;
    let x = Tensor::from_bytes(DType::Bool, &[2, 1000], v).unwrap();
    let all = run(wgpu(), &reduce_graph(ReduceOp::Min, DType::Bool, &[2, 1000], &[1], false), &[("x", &x)]);
    assert_eq!(all[0].to_vec::<bool>().unwrap(), [false, true]);
}

#[test]
fn integer_sums_and_products_wrap() {
    let x = Tensor::from_slice(&[3], &[100i8, 100, 100]).unwrap();
    let g = |op, x: &Tensor| run(wgpu(), &reduce_graph(op, x.dtype(), x.shape(), &[0], false), &[("x", x)])[0].clone();
    assert_eq!(g(ReduceOp::Sum, &x).to_vec::<i8>().unwrap(), [44]);
    // 100³ = 1 000 000 = 0x0f4240: low byte 0x40
    assert_eq!(g(ReduceOp::Prod, &x).to_vec::<i8>().unwrap(), [64]);
    let u = Tensor::from_slice(&[2], &[u32::MAX, 2]).unwrap();
    assert_eq!(g(ReduceOp::Sum, &u).to_vec::<u32>().unwrap(), [1]);
    let u8s = Tensor::from_slice(&[300], &vec![200u8; 300]).unwrap();
    assert_eq!(g(ReduceOp::Sum, &u8s).to_vec::<u8>().unwrap(), [(200u32 * 300 % 256) as u8]);
    let i32s = Tensor::from_slice(&[2], &[i32::MAX, 1]).unwrap();
    assert_eq!(g(ReduceOp::Sum, &i32s).to_vec::<i32>().unwrap(), [i32::MIN]);
    if supported(DType::I64) {
        let big = Tensor::from_slice(&[3], &[i64::MAX, i64::MAX, 3]).unwrap();
        let want = i64::MAX.wrapping_mul(i64::MAX).wrapping_mul(3);
        assert_eq!(g(ReduceOp::Prod, &big).to_vec::<i64>().unwrap(), [want]);
        assert_eq!(g(ReduceOp::Sum, &big).to_vec::<i64>().unwrap(), [i64::MAX.wrapping_add(i64::MAX).wrapping_add(3)]);
        let mm = Tensor::from_slice(&[2], &[i64::MIN, i64::MAX]).unwrap();
        assert_eq!(g(ReduceOp::Max, &mm).to_vec::<i64>().unwrap(), [i64::MAX]);
        assert_eq!(g(ReduceOp::Min, &mm).to_vec::<i64>().unwrap(), [i64::MIN]);
    }
}

#[test]
fn half_sums_accumulate_in_f32() {
    // 2048 + 1 + 1 in f16 step by step stays 2048; accumulated in f32 it is 2050.
    let x = Tensor::from_slice(&[3], &[f16::from_f32(2048.0), f16::ONE, f16::ONE]).unwrap();
    let y = run(wgpu(), &reduce_graph(ReduceOp::Sum, DType::F16, &[3], &[0], false), &[("x", &x)]);
    assert_eq!(y[0].to_vec::<f16>().unwrap(), [f16::from_f32(2050.0)]);
}

#[test]
fn many_rows_use_a_2d_grid() {
    // > 65535 output rows: invocation-per-row (short rows) and workgroup-per-row (rows of 65).
    let x = random_input(ReduceOp::Sum, DType::I32, &[70000, 3], 7);
    compare(ReduceOp::Sum, &x, &[1], false);
    let x = random_input(ReduceOp::Max, DType::U8, &[65537, 65], 8);
    compare(ReduceOp::Max, &x, &[1], false);
}

/// The long-row test: 2 rows of 150 000 (two passes, 37 chunks each), values 1 + noise so that
/// a serial f32 sum would drift; the error is measured against M = Σ|x|.
#[test]
fn long_rows_stay_accurate() {
    let n = 150_000;
    let mut r = Rng(99);
    let v: Vec<f64> =
        (0..2 * n).map(|i| if i < n { 1.0 + r.uniform(0.0, 1e-3) } else { r.uniform(-1.0, 1.0) }).collect();
    for d in floats() {
        let x = tensor(d, &[2, n], &v);
        for op in [ReduceOp::Sum, ReduceOp::Mean] {
            let w = compare(op, &x, &[1], false);
            eprintln!("long row {} {d}: worst relative error {w:.2e}", op.name());
        }
    }
    // strided long reduction (axis 0 of [150000, 2]) and an integer sum
    let x = tensor(DType::F32, &[n, 2], &v);
    eprintln!("long strided Sum F32: {:.2e}", compare(ReduceOp::Sum, &x, &[0], false));
    let x = random_input(ReduceOp::Sum, DType::I32, &[n], 3);
    compare(ReduceOp::Sum, &x, &[0], false);
}

// ---------------------------------------------------------------- ops along one axis

fn numeric() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32, DType::I8, DType::U32, DType::U8]
        .into_iter()
        .filter(|&d| supported(d))
        .collect()
}

fn index_dtypes() -> Vec<DType> {
    [DType::I32, DType::I64].into_iter().filter(|&d| supported(d)).collect()
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
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
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
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
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
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
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
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
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
