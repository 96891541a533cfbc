//! Symbolic dims (a compiled variant per binding, LRU-bounded, params shared), device-resident
//! values (a decode loop with its KV cache kept on the device) and `clone_shared`.

mod common;

use backend_cpu_ref as _;

use backend_api::op::{BinaryOp, DimSpec, ReduceOp, UnaryOp};
use backend_api::{
    Backend, CompileOptions, DType, Dim, ErrorKind, Executable, Feed, Fetched, Graph, GraphBuilder, Op, Placement,
    Shape, Tensor,
};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use common::{cpu, wgpu, Rng};

fn sym(dims: &[&str], tail: &[usize]) -> Shape {
    let mut d: Vec<Dim> = dims.iter().map(|s| Dim::from(*s)).collect();
    d.extend(tail.iter().map(|&n| Dim::Static(n)));
    Shape(d)
}

fn rand_f32(rng: &mut Rng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect();
    Tensor::from_slice(shape, &v).unwrap()
}

/// y = softmax(x·w + b) over the last axis, x: [batch, 5], w: [5, 3].
fn mlp() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, sym(&["batch"], &[5])).unwrap();
    let w = g.param("w", DType::F32, &[5, 3]).unwrap();
    let b = g.param("b", DType::F32, &[3]).unwrap();
    let h = g.matmul(x, w).unwrap();
    let h = g.binary(BinaryOp::Add, h, b).unwrap();
    let y = g.softmax(h, -1).unwrap();
    g.output(y).unwrap();
    let s = g.reduce(ReduceOp::Sum, x, &[], false).unwrap();
    g.output(s).unwrap();
    g.build().unwrap()
}

fn close(a: &Tensor, b: &Tensor, tol: f32) {
    assert_eq!(a.shape(), b.shape());
    let (a, b): (Vec<f32>, Vec<f32>) = (a.to_vec().unwrap(), b.to_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "element {i}: {x} vs {y}");
    }
}

fn set_mlp_params(exe: &mut dyn Executable, rng: &mut Rng) {
    exe.set_param("w", rand_f32(rng, &[5, 3]).view()).unwrap();
    exe.set_param("b", rand_f32(rng, &[3]).view()).unwrap();
}

#[test]
fn symbolic_batch_compiles_a_variant_per_binding_and_shares_params() {
    let be = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter");
    let g = mlp();
    let opts = CompileOptions { max_variants: 2, ..Default::default() };
    let mut exe = be.compile_wgpu(&g, &opts).unwrap();
    assert_eq!(exe.variant_count(), 0, "symbolic graphs compile per binding at run");
    let mut reference = cpu().compile(&g, &Default::default()).unwrap();
    let mut rng = Rng(7);
    let (w, b) = (rand_f32(&mut rng, &[5, 3]), rand_f32(&mut rng, &[3]));
    for e in [&mut exe as &mut dyn Executable, reference.as_mut()] {
        e.set_param("w", w.view()).unwrap();
        e.set_param("b", b.view()).unwrap();
    }
    // 2 and 67 straddle the 64-wide workgroups; 0 is an empty batch; revisiting 2 after 67 and 3
    // (cache of 2) recompiles it.
    for batch in [2usize, 67, 2, 0, 3, 2] {
        let x = rand_f32(&mut rng, &[batch, 5]);
        let got = exe.run(&[("x", x.view())]).unwrap();
        let want = reference.run(&[("x", x.view())]).unwrap();
        assert_eq!(got[0].shape(), &[batch, 3]);
        close(&got[0], &want[0], 1e-5);
        close(&got[1], &want[1], 1e-4);
        assert!(exe.variant_count() <= 2);
    }
    assert_eq!(exe.variant_count(), 2);
}

#[test]
fn inconsistent_bindings_name_the_symbol_and_both_sizes() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, sym(&["n"], &[2])).unwrap();
    let y = g.input("y", DType::F32, sym(&["n"], &[2])).unwrap();
    let s = g.binary(BinaryOp::Add, x, y).unwrap();
    g.output(s).unwrap();
    let g = g.build().unwrap();
    let mut exe = wgpu().compile(&g, &Default::default()).unwrap();
    let (a, b) = (Tensor::zeros(DType::F32, &[3, 2]), Tensor::zeros(DType::F32, &[4, 2]));
    let e = exe.run(&[("x", a.view()), ("y", b.view())]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeBinding);
    let m = e.to_string();
    assert!(m.contains("symbol n") && m.contains('3') && m.contains('4'), "{m}");
}

#[test]
fn deferred_shape_check_fails_at_run_with_the_build_error() {
    // Reshape [b, 6] → [c, 4]: only decidable once b and c are bound.
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, sym(&["b"], &[6])).unwrap();
    let z = g.input("z", DType::F32, sym(&["c"], &[])).unwrap();
    let new_shape = vec![DimSpec::Sym("c".into()), DimSpec::Static(4)];
    let r = g.add1(Op::Reshape { new_shape }, &[x]).unwrap();
    g.output(r).unwrap();
    g.output(z).unwrap();
    let g = g.build().unwrap();
    for be in [wgpu(), cpu()] {
        let mut exe = be.compile(&g, &Default::default()).unwrap();
        let x = Tensor::from_slice(&[2, 6], &[1f32; 12]).unwrap();
        let ok = exe.run(&[("x", x.view()), ("z", Tensor::zeros(DType::F32, &[3]).view())]).unwrap();
        assert_eq!(ok[0].shape(), &[3, 4], "{}", be.name());
        let e = exe.run(&[("x", x.view()), ("z", Tensor::zeros(DType::F32, &[2]).view())]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Shape | ErrorKind::ShapeBinding), "{}: {e}", be.name());
        assert!(e.to_string().contains("Reshape"), "{}: {e}", be.name());
    }
}

/// One decode step of a toy attention layer with a fixed-capacity KV cache:
/// cache' = cache·(1 − onehot) + onehot·(x·wk)   (writes row `pos`)
/// out    = softmax((x·wq)·cache'ᵀ + mask) · cache'
fn decode_step() -> Graph {
    let (s, d) = (9, 4);
    let mut g = GraphBuilder::new();
    let cache = g.input("cache", DType::F32, [s, d]).unwrap();
    let x = g.input("x", DType::F32, [1, d]).unwrap();
    let onehot = g.input("onehot", DType::F32, [s, 1]).unwrap();
    let mask = g.input("mask", DType::F32, [1, s]).unwrap();
    let wq = g.param("wq", DType::F32, &[d, d]).unwrap();
    let wk = g.param("wk", DType::F32, &[d, d]).unwrap();
    let k = g.matmul(x, wk).unwrap();
    let one = g.constant(&Tensor::from_slice(&[1], &[1f32]).unwrap()).unwrap();
    let keep = g.binary(BinaryOp::Sub, one, onehot).unwrap();
    let kept = g.binary(BinaryOp::Mul, cache, keep).unwrap();
    let new = g.binary(BinaryOp::Mul, onehot, k).unwrap();
    let cache2 = g.binary(BinaryOp::Add, kept, new).unwrap();
    let q = g.matmul(x, wq).unwrap();
    let ct = g.transpose(cache2, &[1, 0]).unwrap();
    let scores = g.matmul(q, ct).unwrap();
    let scores = g.binary(BinaryOp::Add, scores, mask).unwrap();
    let p = g.softmax(scores, -1).unwrap();
    let out = g.matmul(p, cache2).unwrap();
    let out = g.unary(UnaryOp::Tanh, out).unwrap();
    g.output(out).unwrap();
    g.output(cache2).unwrap();
    g.build().unwrap()
}

fn step_inputs(rng: &mut Rng, pos: usize) -> (Tensor, Tensor, Tensor) {
    let x = rand_f32(rng, &[1, 4]);
    let onehot: Vec<f32> = (0..9).map(|i| (i == pos) as u8 as f32).collect();
    let mask: Vec<f32> = (0..9).map(|i| if i <= pos { 0.0 } else { -1e9 }).collect();
    (x, Tensor::from_slice(&[9, 1], &onehot).unwrap(), Tensor::from_slice(&[1, 9], &mask).unwrap())
}

/// Runs the decode loop; `resident` keeps the cache on the device between steps.
fn decode_loop(be: &dyn Backend, resident: bool) -> Vec<Tensor> {
    let mut exe = be.compile(&decode_step(), &Default::default()).unwrap();
    let mut rng = Rng(11);
    exe.set_param("wq", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    exe.set_param("wk", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    let mut host_cache = Tensor::zeros(DType::F32, &[9, 4]);
    let mut dev_cache = None;
    let mut outs = Vec::new();
    for pos in 0..9 {
        let (x, onehot, mask) = step_inputs(&mut rng, pos);
        let cache_feed = match &dev_cache {
            Some(d) if resident => Feed::Device(d),
            _ => Feed::Host(host_cache.view()),
        };
        let feeds = [
            ("cache", cache_feed),
            ("x", x.view().into()),
            ("onehot", onehot.view().into()),
            ("mask", mask.view().into()),
        ];
        let placement = if resident { vec![Placement::Host, Placement::Device] } else { vec![] };
        let mut r = exe.run_with(&feeds, &placement).unwrap();
        let cache_out = r.pop().unwrap();
        let out = r.pop().unwrap();
        outs.push(out.into_host().unwrap());
        match cache_out {
            Fetched::Device(d) => {
                assert!(resident);
                assert_eq!((d.dtype(), d.shape()), (DType::F32, &[9usize, 4][..]));
                dev_cache = Some(d);
            }
            Fetched::Host(t) => host_cache = t,
        }
    }
    // Reading the device cache on request gives the host loop's cache.
    if let Some(d) = dev_cache {
        outs.push(d.read().unwrap());
    } else {
        outs.push(host_cache);
    }
    outs
}

#[test]
fn decode_loop_with_device_resident_cache_matches_host_round_trips() {
    let resident = decode_loop(wgpu(), true);
    let host = decode_loop(wgpu(), false);
    let reference = decode_loop(cpu(), true);
    let reference_host = decode_loop(cpu(), false);
    for (i, (r, h)) in resident.iter().zip(&host).enumerate() {
        assert_eq!(r, h, "wgpu step {i}: device-resident and host round-trip results differ");
    }
    for (i, (r, h)) in reference.iter().zip(&reference_host).enumerate() {
        assert_eq!(r, h, "cpu-ref step {i}");
    }
    for (r, w) in reference.iter().zip(&resident) {
        close(w, r, 1e-5);
    }
}

#[test]
fn device_values_of_another_backend_are_refused() {
    let g = decode_step();
    let mut c = cpu().compile(&g, &Default::default()).unwrap();
    let mut rng = Rng(3);
    c.set_param("wq", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    c.set_param("wk", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    let (x, onehot, mask) = step_inputs(&mut rng, 0);
    let cache = Tensor::zeros(DType::F32, &[9, 4]);
    let feeds = [
        ("cache", cache.view().into()),
        ("x", x.view().into()),
        ("onehot", onehot.view().into()),
        ("mask", mask.view().into()),
    ];
    let out = c.run_with(&feeds, &[Placement::Host, Placement::Device]).unwrap();
    let foreign = out[1].device().unwrap().clone();
    let mut w = wgpu().compile(&g, &Default::default()).unwrap();
    w.set_param("wq", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    w.set_param("wk", rand_f32(&mut rng, &[4, 4]).view()).unwrap();
    let feeds = [
        ("cache", Feed::Device(&foreign)),
        ("x", x.view().into()),
        ("onehot", onehot.view().into()),
        ("mask", mask.view().into()),
    ];
    let e = w.run_with(&feeds, &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input);
    assert!(e.to_string().contains("cpu-ref"), "{e}");
    // Too many placements.
    let feeds = [
        ("cache", cache.view().into()),
        ("x", x.view().into()),
        ("onehot", onehot.view().into()),
        ("mask", mask.view().into()),
    ];
    let e = w.run_with(&feeds, &[Placement::Host; 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
}

#[test]
fn clones_share_params_and_run_on_other_threads() {
    for be in [wgpu(), cpu()] {
        let g = mlp();
        let mut exe = be.compile(&g, &Default::default()).unwrap();
        let mut rng = Rng(5);
        set_mlp_params(exe.as_mut(), &mut rng);
        let x = rand_f32(&mut rng, &[4, 5]);
        let want = exe.run(&[("x", x.view())]).unwrap();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let mut c = exe.clone_shared().unwrap();
                let x = x.clone();
                std::thread::spawn(move || (0..3).map(|_| c.run(&[("x", x.view())]).unwrap()).last().unwrap())
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), want, "{}", be.name());
        }
        // A param set through a clone is seen by the original (shared on the device).
        let mut c = exe.clone_shared().unwrap();
        c.set_param("b", Tensor::from_slice(&[3], &[0f32, 0.0, 100.0]).unwrap().view()).unwrap();
        let after = exe.run(&[("x", x.view())]).unwrap();
        let p: Vec<f32> = after[0].to_vec().unwrap();
        assert!(p.chunks(3).all(|r| r[2] > 0.99), "{}: {p:?}", be.name());
    }
}

#[test]
fn static_graph_outputs_can_stay_on_device_including_aliases() {
    // Outputs that are a param and a reshape (an alias) of an input.
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::U8, [3, 5]).unwrap();
    let p = g.param("p", DType::F16, &[3]).unwrap();
    let r = g.reshape(x, &[15]).unwrap();
    g.output(r).unwrap();
    g.output(p).unwrap();
    let g = g.build().unwrap();
    let mut exe = wgpu().compile(&g, &Default::default()).unwrap();
    let pv = Tensor::from_bytes(DType::F16, &[3], vec![0, 60, 0, 64, 0, 66]).unwrap();
    exe.set_param("p", pv.view()).unwrap();
    let xv = Tensor::from_bytes(DType::U8, &[3, 5], (0..15).collect()).unwrap();
    let out = exe.run_with(&[("x", xv.view().into())], &[Placement::Device, Placement::Device]).unwrap();
    let r = out[0].device().unwrap().read().unwrap();
    assert_eq!(r.bytes(), xv.bytes());
    assert_eq!(r.shape(), &[15]);
    assert_eq!(out[1].clone().into_host().unwrap(), pv);
    // Feed the device value back (odd byte count: 15 U8 elements) through a graph taking [15].
    let mut g2 = GraphBuilder::new();
    let y = g2.input("y", DType::U8, [15]).unwrap();
    let n = g2.unary(UnaryOp::Neg, y).unwrap();
    g2.output(n).unwrap();
    let mut exe2 = wgpu().compile(&g2.build().unwrap(), &Default::default()).unwrap();
    let d = out[0].device().unwrap();
    let neg = exe2.run_with(&[("y", Feed::Device(d))], &[]).unwrap().remove(0).into_host().unwrap();
    let want: Vec<u8> = (0..15u8).map(|v| v.wrapping_neg()).collect();
    assert_eq!(neg.bytes(), &want[..]);
}

#[test]
fn large_inputs_go_through_the_persistent_upload_buffer() {
    // Above the 256 KiB threshold: F32, a Bool with non-canonical bytes, an odd-length U8.
    let (n, m, k) = (70_001usize, 300_001usize, 99_999usize);
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [n]).unwrap();
    let b = g.input("b", DType::Bool, [m]).unwrap();
    let u = g.input("u", DType::U8, [k]).unwrap();
    let nx = g.unary(UnaryOp::Neg, x).unwrap();
    // The Bool input itself is an output: its bytes come back exactly as uploaded (normalised).
    let bu = b;
    let uu = g.binary(BinaryOp::Add, u, u).unwrap();
    for v in [nx, bu, uu] {
        g.output(v).unwrap();
    }
    let g = g.build().unwrap();
    let mut exe = wgpu().compile(&g, &Default::default()).unwrap();
    let mut rng = Rng(9);
    for round in 0..3 {
        let xs = rand_f32(&mut rng, &[n]);
        let bs = Tensor::from_bytes(DType::Bool, &[m], (0..m).map(|i| ((i + round) % 3) as u8 * 2).collect()).unwrap();
        let us = Tensor::from_bytes(DType::U8, &[k], (0..k).map(|i| (i * 7 + round) as u8).collect()).unwrap();
        let out = exe.run(&[("x", xs.view()), ("b", bs.view()), ("u", us.view())]).unwrap();
        let neg: Vec<f32> = xs.to_vec::<f32>().unwrap().iter().map(|v| -v).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), neg, "round {round}");
        let want_b: Vec<u8> = bs.bytes().iter().map(|&v| (v != 0) as u8).collect();
        assert_eq!(out[1].dtype(), DType::Bool);
        assert_eq!(out[1].bytes(), &want_b[..], "round {round}");
        let want_u: Vec<u8> = us.bytes().iter().map(|&v| v.wrapping_add(v)).collect();
        assert_eq!(out[2].bytes(), &want_u[..], "round {round}");
    }
}

#[test]
fn run_into_reuses_the_output_memory_it_is_given() {
    let g = mlp();
    for be in [wgpu(), cpu()] {
        let mut exe = be.compile(&g, &Default::default()).unwrap();
        let mut rng = Rng(21);
        set_mlp_params(exe.as_mut(), &mut rng);
        let mut outs = Vec::new();
        let mut first_ptr = None;
        for batch in [6usize, 6, 4] {
            let x = rand_f32(&mut rng, &[batch, 5]);
            exe.run_into(&[("x", x.view())], &mut outs).unwrap();
            assert_eq!(outs, exe.run(&[("x", x.view())]).unwrap(), "{} batch {batch}", be.name());
            let ptr = outs[0].bytes().as_ptr();
            // wgpu reads into the memory it was handed (same or smaller size); cpu-ref may not.
            if be.name() == "wgpu" {
                assert!(first_ptr.is_none_or(|p| p == ptr), "batch {batch}: output memory was not reused");
            }
            first_ptr = Some(ptr);
        }
    }
}

#[test]
fn flatten_with_an_inferred_dim_runs_for_every_batch() {
    // [batch, 4, 8] → Reshape [-1, 32] (typed [batch, 32]) → MatMul [32, 3].
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, sym(&["batch"], &[4, 8])).unwrap();
    let w = g.param("w", DType::F32, &[32, 3]).unwrap();
    let flat = g.reshape(x, &[-1, 32]).unwrap();
    let y = g.matmul(flat, w).unwrap();
    g.output(y).unwrap();
    let g = g.build().unwrap();
    let mut rng = Rng(31);
    let wv = rand_f32(&mut rng, &[32, 3]);
    for be in [wgpu(), cpu()] {
        let mut exe = be.compile(&g, &Default::default()).unwrap();
        exe.set_param("w", wv.view()).unwrap();
        for batch in [1usize, 3, 0] {
            let xv = rand_f32(&mut rng, &[batch, 4, 8]);
            let got = exe.run(&[("x", xv.view())]).unwrap();
            let want = cpu_matmul(&xv.to_vec::<f32>().unwrap(), &wv.to_vec::<f32>().unwrap(), batch, 32, 3);
            assert_eq!(got[0].shape(), &[batch, 3], "{}", be.name());
            close(&got[0], &Tensor::from_slice(&[batch, 3], &want).unwrap(), 1e-5);
        }
    }
}

fn cpu_matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] as f64 * b[l * n + j] as f64).sum::<f64>() as f32;
        }
    }
    c
}
