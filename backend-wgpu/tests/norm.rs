//! Softmax, LogSoftmax (any axis), LayerNorm, RmsNorm (any first axis, with and without beta) and
//! SoftmaxCrossEntropy (any class axis) on the wgpu backend against cpu-ref: every float dtype,
//! rows straddling the workgroup size, size-0 dims, the spec's special values (all −∞, +∞, NaN,
//! eps = 0) and one long row.

use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{FeatureChoice, WgpuBackend, WgpuOptions};

// The harness (backends, data, comparison) is in tests/common.

mod common;
use common::*;

// ---------------------------------------------------------------- norm

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Softmax,
    LogSoftmax,
    LayerNorm,
    RmsNorm,
}

impl Kind {
    fn norm(self) -> bool {
        matches!(self, Kind::LayerNorm | Kind::RmsNorm)
    }
}

fn graph(kind: Kind, d: DType, shape: &[usize], axis: i64, beta: bool, eps: f32) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let y = if kind.norm() {
        let r = shape.len() as i64;
        let a = ((axis % r) + r) % r;
        let gshape = &shape[a as usize..];
        let gm = g.input("g", d, gshape).unwrap();
        let b = if beta { Some(g.input("b", d, gshape).unwrap()) } else { None };
        match kind {
            Kind::LayerNorm => g.layer_norm(x, gm, b, axis, eps).unwrap(),
            _ => g.rms_norm(x, gm, b, axis, eps).unwrap(),
        }
    } else if kind == Kind::Softmax {
        g.softmax(x, axis).unwrap()
    } else {
        g.log_softmax(x, axis).unwrap()
    };
    g.output(y).unwrap();
    g.build().unwrap()
}

/// Runs on both backends and compares with the Approx class; returns the worst relative error.
/// `x` is given; gamma in [0.5, 1.5) and beta in [-1, 1) are drawn from `seed`.
fn compare(kind: Kind, x: &Tensor, axis: i64, beta: bool, eps: f32, seed: u64) -> f64 {
    compare_on(wgpu(), kind, x, axis, beta, eps, seed)
}

/// [`compare`] with the GPU side run on `gpu`.
fn compare_on(gpu: &dyn Backend, kind: Kind, x: &Tensor, axis: i64, beta: bool, eps: f32, seed: u64) -> f64 {
    let (d, shape) = (x.dtype(), x.shape());
    let name = format!("{kind:?} {d} {shape:?} axis {axis} beta {beta} eps {eps}");
    let g = graph(kind, d, shape, axis, beta, eps);
    let r = shape.len() as i64;
    let gshape = &shape[(((axis % r) + r) % r) as usize..];
    let h: usize = gshape.iter().product();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let gm = tensor(d, gshape, &(0..h).map(|_| rng.uniform(0.5, 1.5)).collect::<Vec<_>>());
    let bt = tensor(d, gshape, &(0..h).map(|_| rng.uniform(-1.0, 1.0)).collect::<Vec<_>>());
    let mut inputs = vec![("x", x)];
    if kind.norm() {
        inputs.push(("g", &gm));
        if beta {
            inputs.push(("b", &bt));
        }
    }
    let got = &run(gpu, &g, &inputs)[0];
    let want = &run(cpu(), &g, &inputs)[0];
    check(&name, got, want, Some(approx(d)), None)
}

/// (shape, axis): rows straddling 256 and the single-pass limit `shaders::norm::MAX_HELD` (8192;
/// longer rows take the multi-pass kernels), non-trailing axes, size-0 dims.
const CASES: &[(&[usize], i64)] = &[
    (&[2, 8191], 1),
    (&[8192, 2], 0),
    (&[2, 8193], -1),
    (&[2, 8193, 2], 1),
    (&[2, 2, 4097], 1),
    (&[1], 0),
    (&[63], 0),
    (&[64], -1),
    (&[65], 0),
    (&[255], 0),
    (&[257], 0),
    (&[3, 257], 1),
    (&[257, 3], 0),
    (&[257, 3], 1),
    (&[4, 5, 6], 0),
    (&[4, 5, 6], 1),
    (&[4, 5, 6], 2),
    (&[2, 3, 300], 1),
    (&[5, 1, 7], 1),
    (&[4, 0], 1),
    (&[0, 4], 1),
    (&[4, 0], 0),
    (&[2, 0, 3], 1),
];

fn sweep(kinds: &[Kind]) {
    for &kind in kinds {
        for d in floats() {
            let mut worst: f64 = 0.0;
            for (k, (shape, axis)) in CASES.iter().enumerate() {
                let x = random(d, shape, -4.0, 4.0, k as u64 + 1);
                for beta in if kind.norm() { vec![false, true] } else { vec![false] } {
                    worst = worst.max(compare(kind, &x, *axis, beta, 1e-5, k as u64 + 100));
                }
            }
            eprintln!("{kind:?}/{d}: worst |got-want|/(1+|want|) = {worst:.2e}");
        }
    }
}

#[test]
fn softmax_and_log_softmax_every_dtype_and_axis() {
    sweep(&[Kind::Softmax, Kind::LogSoftmax]);
}

#[test]
fn layer_norm_and_rms_norm_every_dtype_and_axis() {
    sweep(&[Kind::LayerNorm, Kind::RmsNorm]);
}

#[test]
fn softmax_special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    // rows: all −∞; one +∞; a NaN; one −∞ among finite values; huge finite values; −0/+0
    let rows: [[f64; 4]; 6] = [
        [-inf, -inf, -inf, -inf],
        [1.0, inf, 2.0, 3.0],
        [1.0, 2.0, nan, 3.0],
        [1.0, -inf, 2.0, 3.0],
        [1000.0, 999.0, -1000.0, 1000.0],
        [0.0, -0.0, 0.0, -0.0],
    ];
    let v: Vec<f64> = rows.iter().flatten().copied().collect();
    for d in floats() {
        let x = tensor(d, &[6, 4], &v);
        for kind in [Kind::Softmax, Kind::LogSoftmax] {
            compare(kind, &x, 1, false, 0.0, 1);
            let y = run(wgpu(), &graph(kind, d, &[6, 4], 1, false, 0.0), &[("x", &x)])[0].view().to_f64_lossy();
            assert!(y[..12].iter().all(|v| v.is_nan()), "{kind:?} {d}: all −∞, +∞ and NaN rows are NaN: {y:?}");
            let minus_inf_out = y[13];
            if kind == Kind::Softmax {
                assert_eq!(minus_inf_out, 0.0, "{d}");
            } else {
                assert_eq!(minus_inf_out, -inf, "{kind:?} {d}: a −∞ element in a finite row gives −∞");
            }
            assert!(y[12..].iter().enumerate().all(|(i, v)| i == 1 || v.is_finite()), "{kind:?} {d}: {y:?}");
        }
        // the same rows along axis 0 (strided)
        let xt = tensor(d, &[4, 6], &(0..24).map(|i| v[(i % 6) * 4 + i / 6]).collect::<Vec<_>>());
        for kind in [Kind::Softmax, Kind::LogSoftmax] {
            compare(kind, &xt, 0, false, 0.0, 1);
        }
    }
}

#[test]
fn norms_with_zero_eps_and_constant_rows() {
    for d in floats() {
        // row 0 constant (LayerNorm: 0/0 = NaN with eps = 0), row 1 all zero (RmsNorm: NaN),
        // row 2 ordinary, row 3 with a NaN.
        let mut v = vec![2.5; 300];
        v.extend(vec![0.0; 300]);
        let mut r = Rng(5);
        v.extend((0..300).map(|_| r.uniform(-3.0, 3.0)));
        v.extend((0..300).map(|i| if i == 17 { f64::NAN } else { 1.0 }));
        let x = tensor(d, &[4, 300], &v);
        for kind in [Kind::LayerNorm, Kind::RmsNorm] {
            for beta in [false, true] {
                compare(kind, &x, 1, beta, 0.0, 3);
                compare(kind, &x, -1, beta, 1e-5, 4);
            }
        }
        let g = tensor(d, &[300], &[1.0; 300]);
        let ln = run(wgpu(), &graph(Kind::LayerNorm, d, &[4, 300], 1, false, 0.0), &[("x", &x), ("g", &g)]);
        let y = ln[0].view().to_f64_lossy();
        assert!(y[..600].iter().all(|v| v.is_nan()) && y[600..900].iter().all(|v| v.is_finite()), "{d}");
        let rms = run(wgpu(), &graph(Kind::RmsNorm, d, &[4, 300], 1, false, 0.0), &[("x", &x), ("g", &g)]);
        let y = rms[0].view().to_f64_lossy();
        assert!(y[..300].iter().all(|v| v.is_finite()) && y[300..600].iter().all(|v| v.is_nan()), "{d}");
        assert!(y[900..].iter().all(|v| v.is_nan()), "{d}");
        // an offset mean (two-pass variance keeps the precision)
        let x = random(d, &[3, 500], 10.0, 11.0, 9);
        compare(Kind::LayerNorm, &x, 1, true, 1e-5, 5);
    }
}

#[test]
fn layer_norm_of_nearly_equal_values_stays_exact() {
    // Rows [c, c·(1 + 2^-13)] with eps = 0 normalise to exactly [-1, 1]; computed around the
    // rounded mean, the deviation d = c·2^-13 would carry the mean's rounding error (~2^-24·c,
    // i.e. 5e-4 of d in F32, beyond the Approx class).
    let v: Vec<f64> = (0..64)
        .flat_map(|r| {
            let c = 1.6 + 0.37 * r as f64;
            [c, c * (1.0 + 2f64.powi(-13))]
        })
        .collect();
    let x = tensor(DType::F32, &[64, 2], &v);
    compare(Kind::LayerNorm, &x, 1, false, 0.0, 6);
    compare(Kind::LayerNorm, &x, 1, true, 0.0, 7);
}

#[test]
fn single_pass_rows_with_and_without_subgroups() {
    // The single-pass kernels reduce with subgroup operations where the device has them (lavapipe
    // does) and in workgroup memory otherwise: both forms, on rows straddling the workgroup size
    // and the single-pass limit, with specials, against cpu-ref.
    let on = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter");
    if on.device_caps().subgroups.is_none() {
        eprintln!("the adapter has no subgroups: only the workgroup-memory form is tested");
    }
    let opts = WgpuOptions { features: FeatureChoice::none(), ..WgpuOptions::default() };
    let off = WgpuBackend::new(&opts).expect("a wgpu adapter");
    assert!(off.device_caps().subgroups.is_none());
    let (on, off): (&dyn Backend, &dyn Backend) = (&on, &off);
    let mut v: Vec<f64> = (0..3 * 300).map(|i| ((i * 37) % 101) as f64 / 10.0 - 5.0).collect();
    v[7] = f64::NEG_INFINITY;
    v[310] = f64::NAN;
    v[650] = f64::INFINITY;
    let special = tensor(DType::F32, &[3, 300], &v);
    for (k, (shape, axis)) in
        [(&[5, 255][..], 1), (&[3, 257], -1), (&[2, 4097], 1), (&[4, 3, 2], 1), (&[2, 8193], 1)].into_iter().enumerate()
    {
        for d in floats() {
            let x = random(d, shape, -4.0, 4.0, k as u64 + 40);
            for gpu in [on, off] {
                for kind in [Kind::Softmax, Kind::LogSoftmax, Kind::LayerNorm, Kind::RmsNorm] {
                    compare_on(gpu, kind, &x, axis, kind.norm(), 1e-5, k as u64 + 50);
                }
            }
        }
    }
    for gpu in [on, off] {
        for kind in [Kind::Softmax, Kind::LogSoftmax] {
            compare_on(gpu, kind, &special, 1, false, 0.0, 60);
        }
    }
}

#[test]
fn many_rows_use_a_2d_grid() {
    // 70 000 rows of 2 (softmax along axis 0 of [2, 70000]: strided rows) and LayerNorm rows of 1.
    let x = random(DType::F32, &[2, 70000], -3.0, 3.0, 11);
    compare(Kind::Softmax, &x, 0, false, 0.0, 1);
    let x = random(DType::F32, &[70000, 1], -3.0, 3.0, 12);
    compare(Kind::LayerNorm, &x, 1, true, 1e-5, 2);
}

#[test]
fn long_rows() {
    for d in floats() {
        let x = random(d, &[2, 50_000], -6.0, 6.0, 21);
        for kind in [Kind::Softmax, Kind::LogSoftmax, Kind::LayerNorm, Kind::RmsNorm] {
            let w = compare(kind, &x, 1, kind.norm(), 1e-5, 22);
            eprintln!("long row {kind:?} {d}: worst relative error {w:.2e}");
        }
    }
}

// ---------------------------------------------------------------- SoftmaxCrossEntropy

fn loss_graph(d: DType, shape: &[usize], axis: i64) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape).unwrap();
    let t = g.input("t", d, shape).unwrap();
    let y = g.softmax_cross_entropy(x, t, axis).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn loss_case(x: &Tensor, t: &Tensor, axis: i64) {
    let (d, shape) = (x.dtype(), x.shape());
    let name = format!("SoftmaxCrossEntropy {d} {shape:?} axis {axis}");
    let g = loss_graph(d, shape, axis);
    let inputs = [("x", x), ("t", t)];
    check(&name, &run(wgpu(), &g, &inputs)[0], &run(cpu(), &g, &inputs)[0], Some(approx(d)), None);
}

#[test]
fn softmax_cross_entropy_every_dtype_and_axis() {
    for (c, (shape, axis)) in AXIS_CASES.iter().enumerate() {
        for d in floats() {
            let x = random(d, shape, -5.0, 5.0, c as u64 + 3);
            loss_case(&x, &targets(d, shape, c as u64 + 4), *axis);
        }
    }
}

#[test]
fn softmax_cross_entropy_special_values() {
    for d in floats() {
        let x = tensor(d, &[4, 4], SPECIAL_LOGITS.as_flattened());
        let t = tensor(d, &[4, 4], SPECIAL_TARGETS.as_flattened());
        loss_case(&x, &t, 1);
        let y = run(wgpu(), &loss_graph(d, &[4, 4], 1), &[("x", &x), ("t", &t)])[0].view().to_f64_lossy();
        assert!(y[0].is_finite() && y[1].is_nan() && y[2].is_nan() && y[3].is_nan(), "{d}: {y:?}");
    }
}

#[test]
fn softmax_cross_entropy_nan_target_is_nan_like_cpu_ref() {
    // §2.7.3: loss = lse − Σ_{t ≠ 0} t·x, and NaN ≠ 0, so a NaN target makes the slice's loss NaN
    // (wgpu used to skip it as if it were 0). One NaN per row, at each position, plus a clean row.
    let logits = [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0], [3.0, 1.0, -2.0, 1.5], [0.0, 0.0, 1.0, 2.0]];
    let nan = f64::NAN;
    let t = [[nan, 0.5, 0.25, 0.25], [0.0, 0.0, nan, 1.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, nan]];
    for d in floats() {
        let x = tensor(d, &[4, 4], logits.as_flattened());
        let tt = tensor(d, &[4, 4], t.as_flattened());
        loss_case(&x, &tt, 1);
        let y = run(wgpu(), &loss_graph(d, &[4, 4], 1), &[("x", &x), ("t", &tt)])[0].view().to_f64_lossy();
        assert!(y[0].is_nan() && y[1].is_nan() && y[2].is_finite() && y[3].is_nan(), "{d}: {y:?}");
    }
}

#[test]
fn softmax_cross_entropy_long_axis() {
    let x = random(DType::F32, &[2, 100_000], -5.0, 5.0, 31);
    loss_case(&x, &targets(DType::F32, &[2, 100_000], 32), 1);
}
