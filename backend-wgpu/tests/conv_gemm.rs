//! Conv in its implicit-GEMM form (`W · im2col(x)` on the dense product kernels), and depthwise
//! Conv in its staged tile form, on wgpu against cpu-ref, with the (M) tolerance `M = Σ |w|·|x| + |bias|` per output: shapes with at least 16
//! output channels per group and 16 products per output (so the GEMM form is chosen), output
//! channels, output positions and K that are not multiples of the tiles, stride 2, dilation 2,
//! asymmetric padding, two groups, 1-D, 2-D and 3-D, with and without a bias, F32, F16 and BF16.
//!
//! Each case runs on the default device (F16 on tensor cores where the adapter has cooperative
//! matrices; else the scalar tiled kernel) and under `MatmulPrecision::F16` (BF16 on tensor
//! cores too, rounded to f16). lavapipe has no cooperative matrices: there both runs take the
//! scalar kernel. Small convolutions with padding taps take the masked scalar kernel; a large one
//! checks its weight on the GPU and runs the fast kernel (finite weight) or the masked one (NaN
//! or ±∞ in the weight, whose padding taps must still contribute nothing) behind gates.

mod common;
use backend_api::op::ConvAttrs;
use backend_api::{Backend, DType, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{MatmulPrecision, WgpuBackend, WgpuOptions};
use common::{approx, check, cpu, random, run, tensor, wgpu};

/// One convolution: x `[n, cin, spatial…]`, w `[cout, cin/groups, kernel…]`.
struct Case {
    name: &'static str,
    n: usize,
    cin: usize,
    cout: usize,
    input: &'static [usize],
    kernel: &'static [usize],
    stride: &'static [usize],
    dilation: &'static [usize],
    pads: (&'static [usize], &'static [usize]),
    groups: usize,
    bias: bool,
}

const CASES: &[Case] = &[
    // no padding taps (the tensor-core form's condition): 65 output channels, 6·5 positions,
    // K = 24·9 = 216
    Case {
        name: "2-D 3x3 valid, stride 2",
        n: 2,
        cin: 24,
        cout: 65,
        input: &[13, 12],
        kernel: &[3, 3],
        stride: &[2, 2],
        dilation: &[1, 1],
        pads: (&[0, 0], &[0, 0]),
        groups: 1,
        bias: true,
    },
    // 70 output channels (a partial second 64-row tile), 9·8 = 72 positions (partial second
    // column tile), K = 20·9 = 180 (not a multiple of the K steps), two batch items
    Case {
        name: "2-D 3x3 same padding",
        n: 2,
        cin: 20,
        cout: 70,
        input: &[9, 8],
        kernel: &[3, 3],
        stride: &[1, 1],
        dilation: &[1, 1],
        pads: (&[1, 1], &[1, 1]),
        groups: 1,
        bias: true,
    },
    // two groups of 18 output channels over 4 input channels, stride 2, dilation 2, padding
    // before and after unequal; K = 4·3·2 = 24
    Case {
        name: "2-D grouped, stride 2, dilation 2, asymmetric padding",
        n: 2,
        cin: 8,
        cout: 36,
        input: &[11, 10],
        kernel: &[3, 2],
        stride: &[2, 2],
        dilation: &[2, 2],
        pads: (&[2, 0], &[1, 3]),
        groups: 2,
        bias: true,
    },
    Case {
        name: "1-D stride 2, asymmetric padding, no bias",
        n: 1,
        cin: 17,
        cout: 33,
        input: &[70],
        kernel: &[5],
        stride: &[2],
        dilation: &[1],
        pads: (&[3], &[1]),
        groups: 1,
        bias: false,
    },
    Case {
        name: "3-D dilated, strided, padded",
        n: 1,
        cin: 4,
        cout: 20,
        input: &[4, 5, 6],
        kernel: &[2, 3, 3],
        stride: &[1, 1, 2],
        dilation: &[1, 2, 1],
        pads: (&[1, 0, 2], &[0, 1, 1]),
        groups: 1,
        bias: false,
    },
    Case {
        name: "2-D grouped 1x1, bias",
        n: 3,
        cin: 32,
        cout: 40,
        input: &[5, 7],
        kernel: &[1, 1],
        stride: &[1, 1],
        dilation: &[1, 1],
        pads: (&[0, 0], &[0, 0]),
        groups: 2,
        bias: true,
    },
];

/// Large enough (2·64·32·9·34·34 = 2^25.3 products) for the gated pair of kernels; padding of 3
/// around a 3x3 kernel puts whole windows in the padding.
const GATED: Case = Case {
    name: "gated 3x3, padding 3",
    n: 2,
    cin: 32,
    cout: 64,
    input: &[30, 30],
    kernel: &[3, 3],
    stride: &[1, 1],
    dilation: &[1, 1],
    pads: (&[3, 3], &[3, 3]),
    groups: 1,
    bias: true,
};

/// Depthwise 2-D cases for the staged tile form (one workgroup per 32 x 64 outputs): planes
/// that straddle tiles both ways, a 5-row kernel dilated by 2 with asymmetric padding, and padding
/// wider than the kernel (whole windows in the padding).
const DEPTHWISE: &[Case] = &[
    Case {
        name: "depthwise 3x3 same, 37 x 70",
        n: 2,
        cin: 3,
        cout: 3,
        input: &[37, 70],
        kernel: &[3, 3],
        stride: &[1, 1],
        dilation: &[1, 1],
        pads: (&[1, 1], &[1, 1]),
        groups: 3,
        bias: true,
    },
    Case {
        name: "depthwise 5x3 dilation 2 asymmetric",
        n: 1,
        cin: 4,
        cout: 4,
        input: &[40, 75],
        kernel: &[5, 3],
        stride: &[1, 1],
        dilation: &[2, 1],
        pads: (&[3, 0], &[1, 2]),
        groups: 4,
        bias: false,
    },
    Case {
        name: "depthwise 3x3 padding 4",
        n: 1,
        cin: 2,
        cout: 2,
        input: &[9, 5],
        kernel: &[3, 3],
        stride: &[1, 1],
        dilation: &[1, 1],
        pads: (&[4, 4], &[4, 4]),
        groups: 2,
        bias: true,
    },
];

/// The conv of `c` on `be` with inputs `x`, `w` and `b`.
fn conv(be: &dyn Backend, c: &Case, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Tensor {
    let mut g = GraphBuilder::new();
    let d = x.dtype();
    let xv = g.input("x", d, x.shape().to_vec()).unwrap();
    let wv = g.input("w", d, w.shape().to_vec()).unwrap();
    let bv = b.map(|b| g.input("b", d, b.shape().to_vec()).unwrap());
    let a = ConvAttrs {
        stride: c.stride.to_vec(),
        dilation: c.dilation.to_vec(),
        pads_begin: c.pads.0.to_vec(),
        pads_end: c.pads.1.to_vec(),
        groups: c.groups as u32,
        has_bias: b.is_some(),
    };
    let y = g.conv(xv, wv, bv, &a).unwrap();
    g.output(y).unwrap();
    let graph = g.build().unwrap();
    let mut inputs = vec![("x", x), ("w", w)];
    if let Some(b) = b {
        inputs.push(("b", b));
    }
    run(be, &graph, &inputs).remove(0)
}

/// `t` with every element replaced by its magnitude.
fn abs(t: &Tensor) -> Tensor {
    let v: Vec<f64> = t.view().to_f64_lossy().iter().map(|x| x.abs()).collect();
    tensor(t.dtype(), t.shape(), &v)
}

fn check_cases(be: &dyn Backend, label: &str, tol_floor: f64) {
    for (i, c) in CASES.iter().enumerate() {
        for (j, d) in [DType::F32, DType::F16, DType::BF16].into_iter().enumerate() {
            if common::supported(d) {
                check_case(be, label, c, d, 1000 + 10 * i as u64 + j as u64, &[], tol_floor);
            }
        }
    }
}

/// Case `c` in dtype `d` on `be` against cpu-ref, with random operands from `seed` and the
/// weight elements `specials` (flat index, value) set.
fn check_case(be: &dyn Backend, label: &str, c: &Case, d: DType, seed: u64, specials: &[(usize, f64)], tol_floor: f64) {
    let xs: Vec<usize> = [c.n, c.cin].iter().chain(c.input).copied().collect();
    let ws: Vec<usize> = [c.cout, c.cin / c.groups].iter().chain(c.kernel).copied().collect();
    let x = random(d, &xs, -1.0, 1.0, seed);
    let mut w = random(d, &ws, -0.5, 0.5, seed + 1);
    if !specials.is_empty() {
        let mut v = w.view().to_f64_lossy();
        for &(i, s) in specials {
            v[i] = s;
        }
        w = tensor(d, &ws, &v);
    }
    let b = c.bias.then(|| random(d, &[c.cout], -0.5, 0.5, seed + 2));
    let name = format!("{label}: {} {d} x {xs:?} w {ws:?} specials {specials:?}", c.name);
    let got = conv(be, c, &x, &w, b.as_ref());
    let want = conv(cpu(), c, &x, &w, b.as_ref());
    // M: the conv of the magnitudes (and the bias magnitude), in f32 on cpu-ref.
    let f = |t: &Tensor| tensor(DType::F32, t.shape(), &abs(t).view().to_f64_lossy());
    let m = conv(cpu(), c, &f(&x), &f(&w), b.as_ref().map(f).as_ref()).view().to_f64_lossy();
    check(&name, &got, &want, Some(approx(d).max(tol_floor)), Some(&m));
}

/// The staged depthwise form against cpu-ref, with finite weights and with NaN/±∞ weights (which
/// must not reach windows in the padding).
#[test]
fn staged_depthwise_matches_cpu_ref() {
    for (i, c) in DEPTHWISE.iter().enumerate() {
        // a NaN at the centre tap of channel 0 and an infinity at a corner tap of channel 1
        let taps = c.kernel.iter().product::<usize>();
        let specials = [(taps / 2, f64::NAN), (taps, f64::INFINITY)];
        for (j, d) in [DType::F32, DType::F16, DType::BF16].into_iter().enumerate() {
            if common::supported(d) {
                let seed = 3000 + 10 * i as u64 + j as u64;
                check_case(wgpu(), "staged depthwise", c, d, seed, &[], 0.0);
                check_case(wgpu(), "staged depthwise", c, d, seed + 5, &specials, 0.0);
            }
        }
    }
}

/// A large convolution with padding taps: the fast kernel for a finite weight, and the masked
/// one when the weight holds a NaN or an infinity (windows wholly in the padding keep the bias,
/// windows that meet the input become NaN or ±∞ in the channels those weights belong to).
#[test]
fn large_padded_convolutions_take_the_gated_kernels() {
    // w is [64, 32, 3, 3]: element (co, ci, ky, kx) at ((co·32 + ci)·3 + ky)·3 + kx
    let at = |co: usize, ci: usize, ky: usize, kx: usize| ((co * 32 + ci) * 3 + ky) * 3 + kx;
    let specials =
        [(at(5, 0, 1, 1), f64::NAN), (at(40, 31, 0, 2), f64::INFINITY), (at(63, 7, 2, 0), f64::NEG_INFINITY)];
    for (j, d) in [DType::F32, DType::F16, DType::BF16].into_iter().enumerate() {
        if common::supported(d) {
            check_case(wgpu(), "gated", &GATED, d, 2000 + j as u64, &[], 0.0);
            check_case(wgpu(), "gated", &GATED, d, 2100 + j as u64, &specials, 0.0);
        }
    }
}

/// The default device: the scalar tiled kernel, F16 on tensor cores where the adapter has them.
#[test]
fn implicit_gemm_matches_cpu_ref() {
    check_cases(wgpu(), "default", 0.0);
}

/// Under `MatmulPrecision::F16`: BF16 also on tensor cores (rounded to f16) where the adapter has
/// them, within the f16 bound `2⁻¹⁰ · M`; elsewhere exactly the default kernels.
#[test]
fn implicit_gemm_under_f16_precision_matches_cpu_ref() {
    let opts = WgpuOptions { matmul_precision: MatmulPrecision::F16, ..WgpuOptions::default() };
    let be = WgpuBackend::new(&opts).expect("a wgpu adapter");
    check_cases(&be, "f16 precision", 2e-3);
}
