//! The decompositions of backend-api compute what the composite ops compute (checked on cpu-ref).

use backend_api::decompose::decompose_graph;
use backend_api::op::{Op, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;

fn run(graph: &Graph, inputs: &[(&str, Tensor)]) -> Vec<f32> {
    let be = backend_api::create("cpu-ref").unwrap();
    let mut exe = be.compile(graph, &Default::default()).unwrap();
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap()[0].to_vec::<f32>().unwrap()
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 250.0 - 2.0).collect()
}

#[test]
fn dot_general_and_fused_matmul_decompositions_match() {
    let mut g = GraphBuilder::new();
    let l = g.input("l", DType::F32, [2, 5, 3, 4]).unwrap();
    let r = g.input("r", DType::F32, [4, 2, 7, 3]).unwrap();
    let d = g.dot_general(l, r, (&[0], &[1]), (&[2, 3], &[3, 0])).unwrap();
    let w = g.input("w", DType::F32, [7, 6]).unwrap();
    let b = g.input("b", DType::F32, [6]).unwrap();
    let f = g.fused_matmul_bias_act(d, w, b, Some(UnaryOp::Tanh)).unwrap();
    g.output(f).unwrap();
    let graph = g.build().unwrap();
    let inputs = [
        ("l", Tensor::from_slice(&[2, 5, 3, 4], &data(120, 1)).unwrap()),
        ("r", Tensor::from_slice(&[4, 2, 7, 3], &data(168, 2)).unwrap()),
        ("w", Tensor::from_slice(&[7, 6], &data(42, 3)).unwrap()),
        ("b", Tensor::from_slice(&[6], &data(6, 4)).unwrap()),
    ];
    let want = run(&graph, &inputs);
    let dec = decompose_graph(&graph, |op| !matches!(op, Op::DotGeneral(_) | Op::FusedMatMulBiasAct { .. })).unwrap();
    let got = run(&dec, &inputs);
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
}
