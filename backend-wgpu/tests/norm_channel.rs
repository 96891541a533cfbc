//! GroupNorm and LayerNorm2d on the wgpu backend against cpu-ref: every float dtype, ranks 2–5,
//! G from 1 to C, with and without beta, eps = 0, empty tensors; GroupNorm in both of its forms
//! (one workgroup per group, and split over several workgroups, forced with `groupnorm.split`
//! on mid-size groups, including groups of more than 256 chunks' worth of tiles).

use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{Tuning, WgpuBackend, WgpuOptions};

mod common;
use common::*;

/// GroupNorm with `g` groups (`Some`) or LayerNorm2d (`None`) of an input `x` of `shape`.
fn graph(d: DType, shape: &[usize], groups: Option<u32>, beta: bool, eps: f32) -> Graph {
    let mut gb = GraphBuilder::new();
    let x = gb.input("x", d, shape).unwrap();
    let gm = gb.input("g", d, &shape[1..2]).unwrap();
    let b = if beta { Some(gb.input("b", d, &shape[1..2]).unwrap()) } else { None };
    let y = match groups {
        Some(g) => gb.group_norm(x, gm, b, g, eps).unwrap(),
        None => gb.layer_norm_2d(x, gm, b, eps).unwrap(),
    };
    gb.output(y).unwrap();
    gb.build().unwrap()
}

/// Runs on `gpu` and cpu-ref and compares with the Approx class; gamma in [0.5, 1.5) and beta in
/// [-1, 1) are drawn from `seed`.
fn compare(gpu: &dyn Backend, x: &Tensor, groups: Option<u32>, beta: bool, eps: f32, seed: u64) {
    let (d, shape) = (x.dtype(), x.shape());
    let name = format!("{groups:?} groups {d} {shape:?} beta {beta} eps {eps}");
    let g = graph(d, shape, groups, beta, eps);
    let c = shape[1];
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let gm = tensor(d, &[c], &(0..c).map(|_| rng.uniform(0.5, 1.5)).collect::<Vec<_>>());
    let bt = tensor(d, &[c], &(0..c).map(|_| rng.uniform(-1.0, 1.0)).collect::<Vec<_>>());
    let mut inputs = vec![("x", x), ("g", &gm)];
    if beta {
        inputs.push(("b", &bt));
    }
    let got = &run(gpu, &g, &inputs)[0];
    let want = &run(cpu(), &g, &inputs)[0];
    check(&name, got, want, Some(approx(d)), None);
}

/// A backend with GroupNorm's split form forced, in tiles of `k` · 256 elements.
fn split_backend(k: u32) -> WgpuBackend {
    let mut tuning = Tuning::default();
    tuning.set_pair("groupnorm.split=on").unwrap();
    tuning.set("groupnorm.k", &k.to_string()).unwrap();
    WgpuBackend::new(&WgpuOptions { tuning, ..WgpuOptions::default() }).expect("a wgpu adapter")
}

#[test]
fn group_norm_matches_cpu_ref() {
    let cases: &[(&[usize], &[u32])] = &[
        (&[2, 6, 5, 7], &[1, 3, 6]),
        (&[3, 4], &[1, 2, 4]),
        (&[1, 4, 3, 5, 2], &[2]),
        (&[2, 2, 65, 5], &[1, 2]),
        // groups of more than 8192 elements: the split form by default
        (&[1, 2, 9000], &[1]),
        (&[0, 4, 3], &[2]),
        (&[2, 4, 0], &[4]),
    ];
    for (k, (shape, gs)) in cases.iter().enumerate() {
        for d in floats() {
            let x = random(d, shape, -3.0, 5.0, k as u64 + 7);
            for &g in *gs {
                for beta in [false, true] {
                    compare(wgpu(), &x, Some(g), beta, 1e-5, k as u64);
                }
            }
        }
    }
}

#[test]
fn split_group_norm_matches_cpu_ref() {
    // 256-element tiles: a group of 1800 is 8 chunks; one of 80 000 is 313 tiles, merged two per
    // chunk to stay within 256 chunks; odd sizes leave partial tiles and chunks.
    let k1 = split_backend(1);
    let k8 = split_backend(8);
    let cases: &[(&[usize], u32)] = &[(&[2, 4, 3, 300], 2), (&[3, 6, 7], 3), (&[1, 2, 40_000], 1), (&[2, 3, 1001], 1)];
    for (k, (shape, g)) in cases.iter().enumerate() {
        for d in floats() {
            // an offset far from 0 over a small spread: the moments must not cancel
            let x = random(d, shape, 90.0, 110.0, k as u64 + 70);
            for (gpu, beta) in [(&k1, true), (&k8, false)] {
                compare(gpu, &x, Some(*g), beta, 1e-5, k as u64);
            }
        }
    }
}

#[test]
fn group_norm_special_values() {
    let k1 = split_backend(1);
    for gpu in [wgpu(), &k1 as &dyn Backend] {
        // one-element groups with eps = 0: 0/0 = NaN everywhere; with eps > 0: beta
        let x = random(DType::F32, &[2, 3], -1.0, 1.0, 3);
        compare(gpu, &x, Some(3), true, 0.0, 1);
        compare(gpu, &x, Some(3), true, 1e-5, 1);
        // a constant group with eps = 0 is NaN; a NaN or +inf poisons its own group only
        let mut v: Vec<f64> = (0..2 * 4 * 300).map(|i| ((i * 37) % 101) as f64 / 10.0).collect();
        v[..600].iter_mut().for_each(|e| *e = 2.5);
        v[700] = f64::NAN;
        v[1500] = f64::INFINITY;
        let x = tensor(DType::F32, &[2, 4, 300], &v);
        compare(gpu, &x, Some(2), false, 0.0, 2);
        compare(gpu, &x, Some(4), true, 1e-3, 2);
    }
}

#[test]
fn layer_norm_2d_matches_cpu_ref() {
    let shapes: &[&[usize]] =
        &[&[2, 3, 5, 7], &[4, 1, 9], &[3, 300, 2], &[2, 5], &[1, 17, 2, 3, 2], &[2, 9, 257], &[0, 3, 2], &[2, 3, 0]];
    for (k, shape) in shapes.iter().enumerate() {
        for d in floats() {
            let x = random(d, shape, -3.0, 5.0, k as u64 + 11);
            for beta in [false, true] {
                compare(wgpu(), &x, None, beta, 1e-6, k as u64);
            }
        }
    }
    // C = 1 gives beta; eps = 0 on a constant column gives NaN
    let x = random(DType::F32, &[2, 1, 5], -3.0, 3.0, 5);
    compare(wgpu(), &x, None, true, 1e-6, 5);
    let x = tensor(DType::F32, &[1, 3, 2], &[1.0, 2.0, 1.0, 4.0, 1.0, 9.0]);
    compare(wgpu(), &x, None, false, 0.0, 6);
}
