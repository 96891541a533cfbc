//! If, While and Scan on the wgpu backend against cpu-ref, on hand-built graphs that reach each
//! part of the lowering: both branches with captures, none, params and constants inside bodies,
//! packed dtypes (bytewise copies), data-dependent trip counts, `max_iterations` 0 and reached,
//! loop values updated in place, swapped and passed through, loops and branches nested three
//! deep, and Scans with reverse, trajectories, no carries and no steps.

use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref as _;
use backend_wgpu as _;

mod common;
use common::*;

/// Runs `g` on both backends (params set on both) and compares every output.
fn agree(name: &str, g: &Graph, inputs: &[(&str, &Tensor)], params: &[(&str, &Tensor)]) -> Vec<Tensor> {
    let mut outs = Vec::new();
    for be in [cpu(), wgpu()] {
        let mut exe =
            be.compile(g, &Default::default()).unwrap_or_else(|e| panic!("{name}: {} compile: {e}", be.name()));
        for (n, t) in params {
            exe.set_param(n, t.view()).unwrap_or_else(|e| panic!("{name}: set_param {n}: {e}"));
        }
        let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
        outs.push(exe.run(&views).unwrap_or_else(|e| panic!("{name}: {} run: {e}", be.name())));
    }
    let (want, got) = (&outs[0], &outs[1]);
    assert_eq!(want.len(), got.len(), "{name}: output count");
    for (k, (w, g)) in want.iter().zip(got).enumerate() {
        let tol = w.dtype().is_float().then(|| approx(w.dtype()));
        check(&format!("{name} output {k}"), g, w, tol, None);
    }
    outs.swap_remove(0)
}

fn scalar_i32(v: i32) -> Tensor {
    Tensor::scalar(v)
}

/// A body taking `x` of `d`/`shape`, returning `op(x, x)` and `Neg(x)`.
fn two_outputs(op: BinaryOp, d: DType, shape: &[usize]) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, shape.to_vec()).unwrap();
    let y = g.binary(op, x, x).unwrap();
    let n = g.unary(UnaryOp::Neg, x).unwrap();
    g.output(y).unwrap();
    g.output(n).unwrap();
    g.build().unwrap()
}

#[test]
fn if_selects_a_branch_for_every_float_dtype() {
    for d in floats() {
        // 3 elements of a 2-byte dtype are not whole words: the outputs are copied bytewise
        for shape in [vec![3], vec![2, 129]] {
            let mut g = GraphBuilder::new();
            let c = g.input("c", DType::Bool, vec![1]).unwrap();
            let x = g.input("x", d, shape.clone()).unwrap();
            let out = g.if_(c, &[x], two_outputs(BinaryOp::Add, d, &shape), two_outputs(BinaryOp::Mul, d, &shape));
            let out = out.unwrap();
            g.output(out[0]).unwrap();
            g.output(out[1]).unwrap();
            let graph = g.build().unwrap();
            let x = random(d, &shape, -2.0, 2.0, 7);
            for c in [true, false] {
                let c = Tensor::from_bytes(DType::Bool, &[1], vec![u8::from(c)]).unwrap();
                agree(&format!("If {d} {shape:?}"), &graph, &[("c", &c), ("x", &x)], &[]);
            }
        }
    }
}

/// A branch with no inputs returning a constant and a param.
fn constant_branch(v: f32) -> Graph {
    let mut g = GraphBuilder::new();
    let c = g.constant(&Tensor::from_slice(&[2], &[v, v + 1.0]).unwrap()).unwrap();
    let p = g.param("p", DType::F32, &[2]).unwrap();
    let y = g.binary(BinaryOp::Add, c, p).unwrap();
    g.output(y).unwrap();
    g.output(c).unwrap();
    g.build().unwrap()
}

#[test]
fn if_without_captures_reads_constants_and_params() {
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, vec![1, 1]).unwrap();
    let out = g.if_(c, &[], constant_branch(10.0), constant_branch(20.0)).unwrap();
    g.output(out[0]).unwrap();
    g.output(out[1]).unwrap();
    let graph = g.build().unwrap();
    let p = Tensor::from_slice(&[2], &[0.5f32, -0.25]).unwrap();
    for c in [true, false] {
        let c = Tensor::from_bytes(DType::Bool, &[1, 1], vec![u8::from(c)]).unwrap();
        agree("If no captures", &graph, &[("c", &c)], &[("p", &p)]);
    }
}

/// `i < limit` over loop values (i: I32 [], rest…).
fn counter_below(limit: i32, rest: &[(DType, Vec<usize>)]) -> Graph {
    let mut g = GraphBuilder::new();
    let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
    for (k, (d, s)) in rest.iter().enumerate() {
        g.input(&format!("v{k}"), *d, s.clone()).unwrap();
    }
    let l = g.constant(&Tensor::scalar(limit)).unwrap();
    let c = g.compare(CompareOp::Lt, i, l).unwrap();
    g.output(c).unwrap();
    g.build().unwrap()
}

/// Loop values (i, acc F32 [n]); body (i + 1, acc · 1.5 + 1), written in place.
fn counting_loop(limit: i32, max_iterations: u64, n: usize) -> Graph {
    let cond = counter_below(limit, &[(DType::F32, vec![n])]);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let acc = g.input("acc", DType::F32, vec![n]).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        let k = g.constant(&Tensor::scalar(1.5f32)).unwrap();
        let a = g.binary(BinaryOp::Mul, acc, k).unwrap();
        let onef = g.constant(&Tensor::scalar(1.0f32)).unwrap();
        let a1 = g.binary(BinaryOp::Add, a, onef).unwrap();
        g.output(i1).unwrap();
        g.output(a1).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let acc = g.input("acc0", DType::F32, vec![n]).unwrap();
    let out = g.while_(&[i, acc], cond, body, max_iterations).unwrap();
    g.output(out[0]).unwrap();
    g.output(out[1]).unwrap();
    g.build().unwrap()
}

#[test]
fn while_stops_on_the_condition_or_the_bound() {
    let acc = random(DType::F32, &[300], -1.0, 1.0, 3);
    // (limit, max_iterations, start): 5 iterations; the bound first; a bound of 0; false at the start
    for (limit, max, start, trips) in [(5, 100, 0, 5), (5, 3, 0, 3), (5, 0, 0, 0), (5, 100, 7, 0)] {
        let g = counting_loop(limit, max, 300);
        let out = agree("While", &g, &[("i0", &scalar_i32(start)), ("acc0", &acc)], &[]);
        assert_eq!(out[0].to_vec::<i32>().unwrap(), vec![start + trips], "limit {limit} max {max} start {start}");
    }
}

#[test]
fn while_swaps_and_passes_loop_values_through() {
    // (i, a, b, w) → (i + 1, b, a + b · w, w): a Fibonacci-like swap and a passed-through value
    let shape = vec![5];
    let rest = [(DType::F32, shape.clone()), (DType::F32, shape.clone()), (DType::F32, shape.clone())];
    let cond = counter_below(6, &rest);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let a = g.input("a", DType::F32, shape.clone()).unwrap();
        let b = g.input("b", DType::F32, shape.clone()).unwrap();
        let w = g.input("w", DType::F32, shape.clone()).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        let bw = g.binary(BinaryOp::Mul, b, w).unwrap();
        let s = g.binary(BinaryOp::Add, a, bw).unwrap();
        for v in [i1, b, s, w] {
            g.output(v).unwrap();
        }
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let ins: Vec<Value> = [("i0", DType::I32, vec![]), ("a0", DType::F32, shape.clone())]
        .into_iter()
        .chain([("b0", DType::F32, shape.clone()), ("w0", DType::F32, shape.clone())])
        .map(|(n, d, s)| g.input(n, d, s).unwrap())
        .collect();
    let out = g.while_(&ins, cond, body, 50).unwrap();
    for v in out {
        g.output(v).unwrap();
    }
    let graph = g.build().unwrap();
    let a = random(DType::F32, &shape, -1.0, 1.0, 1);
    let b = random(DType::F32, &shape, -1.0, 1.0, 2);
    let w = random(DType::F32, &shape, 0.5, 1.0, 3);
    agree("While swap", &graph, &[("i0", &scalar_i32(0)), ("a0", &a), ("b0", &b), ("w0", &w)], &[]);
}

/// Loop values (i, x F16 [3]); body: i + 1, If(i even) x + x else x · x; the If holds, in its
/// else branch, a While that adds 1 to x j times (j = i), three levels deep.
fn nested_loop() -> Graph {
    let x_t = (DType::F16, vec![3usize]);
    let cond = counter_below(4, std::slice::from_ref(&x_t));
    let inner_while = {
        // loop values (j, x): while j > 0: (j − 1, x + 1)
        let cond = {
            let mut g = GraphBuilder::new();
            let j = g.input("j", DType::I32, Vec::<usize>::new()).unwrap();
            let _x = g.input("x", DType::F16, vec![3]).unwrap();
            let zero = g.constant(&Tensor::scalar(0i32)).unwrap();
            let c = g.compare(CompareOp::Gt, j, zero).unwrap();
            g.output(c).unwrap();
            g.build().unwrap()
        };
        let body = {
            let mut g = GraphBuilder::new();
            let j = g.input("j", DType::I32, Vec::<usize>::new()).unwrap();
            let x = g.input("x", DType::F16, vec![3]).unwrap();
            let one = g.constant(&Tensor::scalar(1i32)).unwrap();
            let j1 = g.binary(BinaryOp::Sub, j, one).unwrap();
            let onef = g.constant(&Tensor::from_slice(&[1], &[half::f16::ONE]).unwrap()).unwrap();
            let x1 = g.binary(BinaryOp::Add, x, onef).unwrap();
            g.output(j1).unwrap();
            g.output(x1).unwrap();
            g.build().unwrap()
        };
        (cond, body)
    };
    let else_g = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let x = g.input("x", DType::F16, vec![3]).unwrap();
        let sq = g.binary(BinaryOp::Mul, x, x).unwrap();
        let out = g.while_(&[i, sq], inner_while.0, inner_while.1, 10).unwrap();
        g.output(out[1]).unwrap();
        g.build().unwrap()
    };
    let then_g = {
        let mut g = GraphBuilder::new();
        let _i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let x = g.input("x", DType::F16, vec![3]).unwrap();
        let y = g.binary(BinaryOp::Add, x, x).unwrap();
        g.output(y).unwrap();
        g.build().unwrap()
    };
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let x = g.input("x", DType::F16, vec![3]).unwrap();
        let two = g.constant(&Tensor::scalar(2i32)).unwrap();
        let zero = g.constant(&Tensor::scalar(0i32)).unwrap();
        let r = g.binary(BinaryOp::Rem, i, two).unwrap();
        let even = g.compare(CompareOp::Eq, r, zero).unwrap();
        let y = g.if_(even, &[i, x], then_g, else_g).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        g.output(i1).unwrap();
        g.output(y[0]).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let x = g.input("x0", x_t.0, x_t.1).unwrap();
    let out = g.while_(&[i, x], cond, body, 10).unwrap();
    g.output(out[0]).unwrap();
    g.output(out[1]).unwrap();
    g.build().unwrap()
}

#[test]
fn loops_and_branches_nest_three_deep() {
    let g = nested_loop();
    let x = tensor(DType::F16, &[3], &[0.5, -0.25, 0.125]);
    // i = 0: 2x; i = 1: x² + 1; i = 2: 2x; i = 3: x² + 3
    let out = agree("nested", &g, &[("i0", &scalar_i32(0)), ("x0", &x)], &[]);
    let want = [0.5f64, -0.25, 0.125].map(|v| (2.0 * ((2.0 * v) * (2.0 * v) + 1.0)).powi(2) + 3.0);
    let got = out[1].view().to_f64_lossy();
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-2 * w.abs(), "{got:?} vs {want:?}");
    }
}

/// An Elman step: carries (h [b, n]), bcast (w [n, n]), xs (x [b, n]) → h' = tanh(h·w + x),
/// y = 2·h'.
fn elman_body(b: usize, n: usize, d: DType) -> Graph {
    let mut g = GraphBuilder::new();
    let h = g.input("h", d, vec![b, n]).unwrap();
    let w = g.input("w", d, vec![n, n]).unwrap();
    let x = g.input("x", d, vec![b, n]).unwrap();
    let hw = g.matmul(h, w).unwrap();
    let z = g.binary(BinaryOp::Add, hw, x).unwrap();
    let h1 = g.unary(UnaryOp::Tanh, z).unwrap();
    let y = g.binary(BinaryOp::Add, h1, h1).unwrap();
    g.output(h1).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

#[test]
fn scan_runs_an_elman_recurrence_both_ways_with_its_trajectory() {
    for d in floats() {
        for (reverse, traj) in [(false, false), (true, true), (false, true)] {
            let (t, b, n) = (5, 2, 3);
            let mut g = GraphBuilder::new();
            let h = g.input("h", d, vec![b, n]).unwrap();
            let w = g.input("w", d, vec![n, n]).unwrap();
            let xs = g.input("xs", d, vec![t, b, n]).unwrap();
            let out = g.scan(elman_body(b, n, d), t as u64, reverse, (&[h], &[w], &[xs]), traj).unwrap();
            for v in out {
                g.output(v).unwrap();
            }
            let graph = g.build().unwrap();
            let h = random(d, &[b, n], -1.0, 1.0, 4);
            let w = random(d, &[n, n], -1.0, 1.0, 5);
            let xs = random(d, &[t, b, n], -1.0, 1.0, 6);
            agree(
                &format!("Scan {d} reverse {reverse} traj {traj}"),
                &graph,
                &[("h", &h), ("w", &w), ("xs", &xs)],
                &[],
            );
        }
    }
}

#[test]
fn scan_without_carries_or_steps() {
    // no carries: ys = xs · 2 for an F16 step of 3 elements (rows not on word boundaries)
    let body = {
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F16, vec![3]).unwrap();
        let y = g.binary(BinaryOp::Add, x, x).unwrap();
        let c = g.compare(CompareOp::Gt, x, y).unwrap();
        g.output(y).unwrap();
        g.output(c).unwrap();
        g.build().unwrap()
    };
    for length in [0usize, 1, 5] {
        let mut g = GraphBuilder::new();
        let xs = g.input("xs", DType::F16, vec![length, 3]).unwrap();
        let out = g.scan(body.clone(), length as u64, true, (&[], &[], &[xs]), false).unwrap();
        for v in out {
            g.output(v).unwrap();
        }
        let graph = g.build().unwrap();
        let xs = random(DType::F16, &[length, 3], -2.0, 2.0, 8);
        agree(&format!("Scan no carries, length {length}"), &graph, &[("xs", &xs)], &[]);
    }
    // no steps: the carries come back, the stacked outputs are empty
    let (b, n) = (2, 3);
    let mut g = GraphBuilder::new();
    let h = g.input("h", DType::F32, vec![b, n]).unwrap();
    let w = g.input("w", DType::F32, vec![n, n]).unwrap();
    let xs = g.input("xs", DType::F32, vec![0, b, n]).unwrap();
    let out = g.scan(elman_body(b, n, DType::F32), 0, false, (&[h], &[w], &[xs]), true).unwrap();
    for v in out {
        g.output(v).unwrap();
    }
    let graph = g.build().unwrap();
    let h = random(DType::F32, &[b, n], -1.0, 1.0, 4);
    let w = random(DType::F32, &[n, n], -1.0, 1.0, 5);
    let xs = random(DType::F32, &[0, b, n], -1.0, 1.0, 6);
    agree("Scan length 0", &graph, &[("h", &h), ("w", &w), ("xs", &xs)], &[]);
}

#[test]
fn a_scan_step_may_branch_and_a_loop_may_scan() {
    // Scan over (flag Bool [1], x F32 [4]) steps: carry s; s' = flag ? s + x : s · x
    let step = {
        let add = |op: BinaryOp| {
            let mut g = GraphBuilder::new();
            let s = g.input("s", DType::F32, vec![4]).unwrap();
            let x = g.input("x", DType::F32, vec![4]).unwrap();
            let y = g.binary(op, s, x).unwrap();
            g.output(y).unwrap();
            g.build().unwrap()
        };
        let mut g = GraphBuilder::new();
        let s = g.input("s", DType::F32, vec![4]).unwrap();
        let f = g.input("f", DType::Bool, vec![1]).unwrap();
        let x = g.input("x", DType::F32, vec![4]).unwrap();
        let y = g.if_(f, &[s, x], add(BinaryOp::Add), add(BinaryOp::Mul)).unwrap();
        g.output(y[0]).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let s = g.input("s", DType::F32, vec![4]).unwrap();
    let f = g.input("f", DType::Bool, vec![6, 1]).unwrap();
    let x = g.input("x", DType::F32, vec![6, 4]).unwrap();
    let out = g.scan(step.clone(), 6, false, (&[s], &[], &[f, x]), true).unwrap();
    g.output(out[0]).unwrap();
    g.output(out[1]).unwrap();
    let graph = g.build().unwrap();
    let s0 = random(DType::F32, &[4], -1.0, 1.0, 1);
    let fl = tensor(DType::Bool, &[6, 1], &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    let x = random(DType::F32, &[6, 4], 0.5, 1.5, 2);
    agree("Scan with a branch", &graph, &[("s", &s0), ("f", &fl), ("x", &x)], &[]);

    // the same Scan run by a While three times over its own result
    let cond = counter_below(3, &[(DType::F32, vec![4]), (DType::Bool, vec![6, 1]), (DType::F32, vec![6, 4])]);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let s = g.input("s", DType::F32, vec![4]).unwrap();
        let f = g.input("f", DType::Bool, vec![6, 1]).unwrap();
        let x = g.input("x", DType::F32, vec![6, 4]).unwrap();
        let out = g.scan(step, 6, true, (&[s], &[], &[f, x]), false).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        let half = g.constant(&Tensor::scalar(0.5f32)).unwrap();
        let s1 = g.binary(BinaryOp::Mul, out[0], half).unwrap();
        for v in [i1, s1, f, x] {
            g.output(v).unwrap();
        }
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let sv = g.input("s", DType::F32, vec![4]).unwrap();
    let fv = g.input("f", DType::Bool, vec![6, 1]).unwrap();
    let xv = g.input("x", DType::F32, vec![6, 4]).unwrap();
    let out = g.while_(&[i, sv, fv, xv], cond, body, 8).unwrap();
    g.output(out[1]).unwrap();
    let graph = g.build().unwrap();
    agree("While of a Scan", &graph, &[("i0", &scalar_i32(0)), ("s", &s0), ("f", &fl), ("x", &x)], &[]);
}

#[test]
fn loops_past_the_recorded_bound_are_refused_at_compile() {
    let g = counting_loop(5, 1_000_000, 4);
    let e = wgpu().compile(&g, &Default::default()).err().expect("a million iterations are refused");
    assert_eq!(e.kind(), backend_api::ErrorKind::DeviceLimit, "{e}");
    assert!(e.to_string().contains("While") && e.to_string().contains("1000000"), "{e}");
    // the bound counts dispatches: 30,000 iterations of four dispatches are too many as well
    let g = counting_loop(5, 30_000, 4);
    let e = wgpu().compile(&g, &Default::default()).err().expect("120,000 dispatches are refused");
    assert_eq!(e.kind(), backend_api::ErrorKind::DeviceLimit, "{e}");
}

#[test]
fn loop_bodies_hold_ops_of_every_family() {
    use backend_api::op::{AttentionAttrs, AttnLayout, ConvAttrs};
    // loop values (i, key U32 [2], img [1, 2, 6, 6], q [1, 2, 4, 8]); three iterations of:
    // key + [1, 0]; img ← cumsum(tanh(conv(img, w) + uniform(key)), axis 3) / 4 (w a param of
    // the body); q ← gather(softmax(attention(q, q, q)), [1, 0], heads)
    let (img_s, q_s) = (vec![1usize, 2, 6, 6], vec![1usize, 2, 4, 8]);
    let types = [(DType::U32, vec![2usize]), (DType::F32, img_s.clone()), (DType::F32, q_s.clone())];
    let cond = counter_below(3, &types);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let key = g.input("key", DType::U32, vec![2]).unwrap();
        let img = g.input("img", DType::F32, img_s.clone()).unwrap();
        let q = g.input("q", DType::F32, q_s.clone()).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        let step = g.constant(&Tensor::from_slice(&[2], &[1u32, 0]).unwrap()).unwrap();
        let key1 = g.binary(BinaryOp::Add, key, step).unwrap();
        let noise = g.rng_uniform(key, img_s.clone(), DType::F32, -0.1, 0.1, 5).unwrap();
        let w = g.param("w", DType::F32, &[2, 2, 3, 3]).unwrap();
        let pads = ConvAttrs { pads_begin: vec![1, 1], pads_end: vec![1, 1], ..Default::default() };
        let c = g.conv(img, w, None, &pads).unwrap();
        let z = g.binary(BinaryOp::Add, c, noise).unwrap();
        let t = g.unary(UnaryOp::Tanh, z).unwrap();
        let cs = g.cumsum(t, 3, false, false).unwrap();
        let quarter = g.constant(&Tensor::scalar(0.25f32)).unwrap();
        let img1 = g.binary(BinaryOp::Mul, cs, quarter).unwrap();
        let att = g.attention(q, q, q, None, None, AttentionAttrs::new(AttnLayout::Bhsd, 2)).unwrap();
        let sm = g.softmax(att, -1).unwrap();
        let heads = g.constant(&Tensor::from_slice(&[2], &[1i32, 0]).unwrap()).unwrap();
        let q1 = g.gather(sm, heads, 1).unwrap();
        for v in [i1, key1, img1, q1] {
            g.output(v).unwrap();
        }
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let key = g.input("key", DType::U32, vec![2]).unwrap();
    let img = g.input("img", DType::F32, img_s.clone()).unwrap();
    let q = g.input("q", DType::F32, q_s.clone()).unwrap();
    let out = g.while_(&[i, key, img, q], cond, body, 5).unwrap();
    for v in out {
        g.output(v).unwrap();
    }
    let graph = g.build().unwrap();
    let key = Tensor::from_slice(&[2], &[7u32, 9]).unwrap();
    let img = random(DType::F32, &img_s, -1.0, 1.0, 11);
    let q = random(DType::F32, &q_s, -1.0, 1.0, 12);
    let w = random(DType::F32, &[2, 2, 3, 3], -0.5, 0.5, 13);
    let inputs = [("i0", &scalar_i32(0)), ("key", &key), ("img", &img), ("q", &q)];
    agree("families in a loop body", &graph, &inputs, &[("w", &w)]);
}
