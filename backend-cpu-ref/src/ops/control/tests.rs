//! `If` and `While` on hand-built graphs against hand-computed results: both branches, no
//! captures, data-dependent trip counts, `max_iterations` 0 and reached, a condition false at the
//! start, and a loop body that holds a branch.

use crate::CpuRefBackend;
use backend_api::op::{BinaryOp, CompareOp};
use backend_api::{Backend, DType, Graph, GraphBuilder, Tensor};

/// Runs `g` on cpu-ref with `inputs` and returns its outputs as f64.
fn run(g: &Graph, inputs: &[(&str, &Tensor)]) -> Vec<Vec<f64>> {
    let mut exe = CpuRefBackend::new().compile(g, &Default::default()).unwrap();
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap().iter().map(|t| t.view().to_f64_lossy()).collect()
}

fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

fn flag(b: bool) -> Tensor {
    Tensor::from_bytes(DType::Bool, &[], vec![u8::from(b)]).unwrap()
}

/// A body of one F32 [3] input `x` whose output is `op(x, x)`.
fn doubled(op: BinaryOp) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, vec![3]).unwrap();
    let y = g.binary(op, x, x).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

#[test]
fn if_takes_the_selected_branch() {
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, Vec::<usize>::new()).unwrap();
    let x = g.input("x", DType::F32, vec![3]).unwrap();
    let out = g.if_(c, &[x], doubled(BinaryOp::Add), doubled(BinaryOp::Mul)).unwrap();
    g.output(out[0]).unwrap();
    let graph = g.build().unwrap();
    let x = f32s(&[3], &[1.0, -2.0, 3.0]);
    assert_eq!(run(&graph, &[("c", &flag(true)), ("x", &x)]), vec![vec![2.0, -4.0, 6.0]]);
    assert_eq!(run(&graph, &[("c", &flag(false)), ("x", &x)]), vec![vec![1.0, 4.0, 9.0]]);
}

/// A branch with no inputs returning the constant `v`.
fn constant_branch(v: f32) -> Graph {
    let mut g = GraphBuilder::new();
    let c = g.constant(&f32s(&[2], &[v, v + 1.0])).unwrap();
    g.output(c).unwrap();
    g.build().unwrap()
}

#[test]
fn if_without_captures_selects_between_constants() {
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, vec![1, 1]).unwrap();
    let out = g.if_(c, &[], constant_branch(10.0), constant_branch(20.0)).unwrap();
    g.output(out[0]).unwrap();
    let graph = g.build().unwrap();
    let c = |b: bool| Tensor::from_bytes(DType::Bool, &[1, 1], vec![u8::from(b)]).unwrap();
    assert_eq!(run(&graph, &[("c", &c(true))]), vec![vec![10.0, 11.0]]);
    // Bool bytes other than 0 read as true
    let two = Tensor::from_bytes(DType::Bool, &[1, 1], vec![2]).unwrap();
    assert_eq!(run(&graph, &[("c", &two)]), vec![vec![10.0, 11.0]]);
    assert_eq!(run(&graph, &[("c", &c(false))]), vec![vec![20.0, 21.0]]);
}

/// The condition of a loop over (i: I32 [], v: F32 [n]): `i < limit`.
fn counter_below(limit: i32, n: usize) -> Graph {
    let mut g = GraphBuilder::new();
    let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
    let _v = g.input("v", DType::F32, vec![n]).unwrap();
    let l = g.constant(&Tensor::scalar(limit)).unwrap();
    let c = g.compare(CompareOp::Lt, i, l).unwrap();
    g.output(c).unwrap();
    g.build().unwrap()
}

/// Loop values (i: I32 [], acc: F32 [2]). Condition `i < limit`; body `(i + 1, acc + acc)`.
fn counting_loop(limit: i32, max_iterations: u64) -> Graph {
    let cond = counter_below(limit, 2);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let acc = g.input("acc", DType::F32, vec![2]).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        let a2 = g.binary(BinaryOp::Add, acc, acc).unwrap();
        g.output(i1).unwrap();
        g.output(a2).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let acc = g.input("acc0", DType::F32, vec![2]).unwrap();
    let out = g.while_(&[i, acc], cond, body, max_iterations).unwrap();
    g.output(out[0]).unwrap();
    g.output(out[1]).unwrap();
    g.build().unwrap()
}

#[test]
fn while_runs_until_the_condition_fails_or_the_bound() {
    let acc = f32s(&[2], &[1.0, -0.5]);
    let start = |i: i32| Tensor::scalar(i);
    // 5 iterations: i = 5, acc · 32
    let g = counting_loop(5, 100);
    assert_eq!(run(&g, &[("i0", &start(0)), ("acc0", &acc)]), vec![vec![5.0], vec![32.0, -16.0]]);
    // the bound is reached first: 3 iterations, not an error
    let g = counting_loop(5, 3);
    assert_eq!(run(&g, &[("i0", &start(0)), ("acc0", &acc)]), vec![vec![3.0], vec![8.0, -4.0]]);
    // max_iterations = 0 returns the inputs
    let g = counting_loop(5, 0);
    assert_eq!(run(&g, &[("i0", &start(0)), ("acc0", &acc)]), vec![vec![0.0], vec![1.0, -0.5]]);
    // false at the start: the body never runs
    let g = counting_loop(5, 100);
    assert_eq!(run(&g, &[("i0", &start(7)), ("acc0", &acc)]), vec![vec![7.0], vec![1.0, -0.5]]);
}

#[test]
fn a_loop_body_may_hold_a_branch() {
    // loop values (i: I32 [], x: F32 [3]); body: i + 1, If(i is even) x + x else x · x
    let cond = counter_below(3, 3);
    let body = {
        let mut g = GraphBuilder::new();
        let i = g.input("i", DType::I32, Vec::<usize>::new()).unwrap();
        let x = g.input("x", DType::F32, vec![3]).unwrap();
        let two = g.constant(&Tensor::scalar(2i32)).unwrap();
        let zero = g.constant(&Tensor::scalar(0i32)).unwrap();
        let r = g.binary(BinaryOp::Rem, i, two).unwrap();
        let even = g.compare(CompareOp::Eq, r, zero).unwrap();
        let y = g.if_(even, &[x], doubled(BinaryOp::Add), doubled(BinaryOp::Mul)).unwrap();
        let one = g.constant(&Tensor::scalar(1i32)).unwrap();
        let i1 = g.binary(BinaryOp::Add, i, one).unwrap();
        g.output(i1).unwrap();
        g.output(y[0]).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let i = g.input("i0", DType::I32, Vec::<usize>::new()).unwrap();
    let x = g.input("x0", DType::F32, vec![3]).unwrap();
    let out = g.while_(&[i, x], cond, body, 10).unwrap();
    g.output(out[1]).unwrap();
    let graph = g.build().unwrap();
    // i = 0: x + x, i = 1: x · x, i = 2: x + x → ((2x)²)·2 = 8x²
    let x = f32s(&[3], &[1.0, -1.5, 0.5]);
    assert_eq!(run(&graph, &[("i0", &Tensor::scalar(0i32)), ("x0", &x)]), vec![vec![8.0, 18.0, 2.0]]);
}

#[test]
fn params_inside_a_branch_are_the_executables() {
    // then: x + p, with p a param declared only inside the branch
    let then_g = {
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F32, vec![3]).unwrap();
        let p = g.param("p", DType::F32, &[3]).unwrap();
        let y = g.binary(BinaryOp::Add, x, p).unwrap();
        g.output(y).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, Vec::<usize>::new()).unwrap();
    let x = g.input("x", DType::F32, vec![3]).unwrap();
    let out = g.if_(c, &[x], then_g, doubled(BinaryOp::Mul)).unwrap();
    g.output(out[0]).unwrap();
    let graph = g.build().unwrap();
    let mut exe = CpuRefBackend::new().compile(&graph, &Default::default()).unwrap();
    assert_eq!(exe.signature().params.len(), 1);
    exe.set_param("p", f32s(&[3], &[10.0, 20.0, 30.0]).view()).unwrap();
    let x = f32s(&[3], &[1.0, 2.0, 3.0]);
    let got = exe.run(&[("c", flag(true).view()), ("x", x.view())]).unwrap();
    assert_eq!(got[0].view().to_f64_lossy(), vec![11.0, 22.0, 33.0]);
}
