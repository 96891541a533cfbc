//! The decompositions of backend-api compute what the composite ops compute: each one is run on
//! cpu-ref (through legalisation, which `compile` does) against values worked out by hand, and
//! where cpu-ref also has a kernel, against that kernel (`CompileOptions::decompose_all`).

use backend_api::op::{BinaryOp, CompareOp, RegionInstr, RegionProgram, UnaryOp};
use backend_api::{Backend, CompileOptions, DType, ErrorKind, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref::CpuRefBackend;

fn compile(graph: &Graph, decompose_all: bool) -> backend_api::Result<Box<dyn backend_api::Executable>> {
    CpuRefBackend::new().compile(graph, &CompileOptions { decompose_all, ..Default::default() })
}

fn run_all(graph: &Graph, inputs: &[(&str, Tensor)], decompose_all: bool) -> Vec<Tensor> {
    let mut exe = compile(graph, decompose_all).unwrap();
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap()
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

fn t(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 250.0 - 2.0).collect()
}

fn graph_of(g: GraphBuilder, outs: &[Value]) -> Graph {
    let mut g = g;
    for o in outs {
        g.output(*o).unwrap();
    }
    g.build().unwrap()
}

#[test]
fn dot_general_by_hand() {
    // out[b, i, j] = Σ_k lhs[b, k, i] · rhs[j, b, k]: batch 0 ↔ 1, contract 1 ↔ 2.
    let mut g = GraphBuilder::new();
    let l = g.input("l", DType::F32, [2, 2, 1]).unwrap();
    let r = g.input("r", DType::F32, [1, 2, 2]).unwrap();
    let d = g.dot_general(l, r, (&[0], &[1]), (&[1], &[2])).unwrap();
    let graph = graph_of(g, &[d]);
    let inputs = [("l", t(&[2, 2, 1], &[1., 2., 3., 4.])), ("r", t(&[1, 2, 2], &[5., 6., 7., 8.]))];
    // b = 0: 1·5 + 2·6 = 17; b = 1: 3·7 + 4·8 = 53.
    for all in [false, true] {
        let out = run_all(&graph, &inputs, all);
        assert_eq!((out[0].shape(), f32s(&out[0])), (&[2usize, 1, 1][..], vec![17., 53.]), "decompose_all {all}");
    }
}

#[test]
fn dot_general_and_fused_matmul_decompositions_match_the_kernels() {
    let mut g = GraphBuilder::new();
    let l = g.input("l", DType::F32, [2, 5, 3, 4]).unwrap();
    let r = g.input("r", DType::F32, [4, 2, 7, 3]).unwrap();
    let d = g.dot_general(l, r, (&[0], &[1]), (&[2, 3], &[3, 0])).unwrap();
    let w = g.input("w", DType::F32, [7, 6]).unwrap();
    let b = g.input("b", DType::F32, [6]).unwrap();
    let f = g.fused_matmul_bias_act(d, w, b, Some(UnaryOp::Tanh)).unwrap();
    let graph = graph_of(g, &[f]);
    let inputs = [
        ("l", t(&[2, 5, 3, 4], &data(120, 1))),
        ("r", t(&[4, 2, 7, 3], &data(168, 2))),
        ("w", t(&[7, 6], &data(42, 3))),
        ("b", t(&[6], &data(6, 4))),
    ];
    let want = f32s(&run_all(&graph, &inputs, false)[0]);
    let got = f32s(&run_all(&graph, &inputs, true)[0]);
    assert_eq!(got.len(), 2 * 5 * 6);
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn fused_matmul_and_fma_by_hand() {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [1, 2]).unwrap();
    let b = g.input("b", DType::F32, [2, 2]).unwrap();
    let c = g.input("c", DType::F32, [2]).unwrap();
    let f = g.fused_matmul_bias_act(a, b, c, Some(UnaryOp::Relu)).unwrap();
    let m = g.fma(a, c, c).unwrap();
    let graph = graph_of(g, &[f, m]);
    let inputs = [("a", t(&[1, 2], &[1., 2.])), ("b", t(&[2, 2], &[1., -3., 2., 1.])), ("c", t(&[2], &[0.5, 0.5]))];
    // [1, 2]·[[1, -3], [2, 1]] = [5, -1]; + 0.5 → [5.5, -0.5]; Relu → [5.5, 0]. Fma: [1, 2]·0.5 + 0.5.
    for all in [false, true] {
        let out = run_all(&graph, &inputs, all);
        assert_eq!((f32s(&out[0]), f32s(&out[1])), (vec![5.5, 0.0], vec![1.0, 1.5]), "decompose_all {all}");
    }
}

#[test]
fn fused_residual_layer_norm_by_hand() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 2]).unwrap();
    let r = g.input("r", DType::F32, [2, 2]).unwrap();
    let bias = g.input("bias", DType::F32, [2]).unwrap();
    let gamma = g.input("gamma", DType::F32, [2]).unwrap();
    let beta = g.input("beta", DType::F32, [2]).unwrap();
    let (y, s) = g.fused_residual_layer_norm(x, (r, Some(bias)), (gamma, Some(beta)), -1, 0.0, true).unwrap();
    let graph = graph_of(g, &[y, s.unwrap()]);
    let inputs = [
        ("x", t(&[2, 2], &[1., 2., 3., 0.])),
        ("r", t(&[2, 2], &[1., 0., -1., 2.])),
        ("bias", t(&[2], &[1., -1.])),
        ("gamma", t(&[2], &[2., 0.5])),
        ("beta", t(&[2], &[0.5, 1.])),
    ];
    // s = [[3, 1], [3, 1]]: mean 2, variance 1, so (s − μ)/σ = [1, −1] → y = [2.5, 0.5] per row.
    let out = run_all(&graph, &inputs, false);
    assert_eq!(f32s(&out[0]), [2.5, 0.5, 2.5, 0.5]);
    assert_eq!(f32s(&out[1]), [3., 1., 3., 1.]);
}

#[test]
fn fused_residual_rms_norm_by_hand() {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 2]).unwrap();
    let r = g.input("r", DType::F32, [2, 2]).unwrap();
    let gamma = g.input("gamma", DType::F32, [2]).unwrap();
    let (y, s) = g.fused_residual_rms_norm(x, (r, None), (gamma, None), 1, 0.0, false).unwrap();
    assert!(s.is_none());
    let graph = graph_of(g, &[y]);
    let inputs =
        [("x", t(&[2, 2], &[1., 2., 3., 0.])), ("r", t(&[2, 2], &[0., -1., -1., 2.])), ("gamma", t(&[2], &[2., 0.5]))];
    // s = [[1, 1], [2, 2]]: the RMS of each row is its value, so s·ρ = [1, 1] → y = gamma per row.
    assert_eq!(f32s(&run_all(&graph, &inputs, false)[0]), [2., 0.5, 2., 0.5]);
}

fn f32_const(v: f32) -> RegionInstr {
    RegionInstr::Const { dtype: DType::F32, bytes: v.to_le_bytes().to_vec() }
}

#[test]
fn elementwise_region_by_hand() {
    // r3 = 2a, r4 = a·b + r3, r7 = r4 > 2 ? exp(r4) : 2, r8 = I32(r7); a dead Log(a) of a
    // negative a must not matter; the constant output is broadcast to [2, 3].
    let program = RegionProgram {
        num_inputs: 2,
        instrs: vec![
            RegionInstr::Input(0),
            RegionInstr::Input(1),
            f32_const(2.0),
            RegionInstr::Binary(BinaryOp::Mul, 0, 2),
            RegionInstr::Fma(0, 1, 3),
            RegionInstr::Compare(CompareOp::Gt, 4, 2),
            RegionInstr::Unary(UnaryOp::Exp, 4),
            RegionInstr::Where(5, 6, 2),
            RegionInstr::Cast(DType::I32, 7),
            RegionInstr::Unary(UnaryOp::Log, 0),
        ],
        outputs: vec![8, 7, 2, 0],
    };
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [2, 1]).unwrap();
    let b = g.input("b", DType::F32, [3]).unwrap();
    let outs = g.elementwise_region(&[a, b], program).unwrap();
    let graph = graph_of(g, &outs);
    let inputs = [("a", t(&[2, 1], &[1., -2.])), ("b", t(&[3], &[0.5, 1., 2.]))];
    let out = run_all(&graph, &inputs, false);
    // a = 1: r4 = b + 2 = [2.5, 3, 4] > 2 → exp; a = −2: r4 = −2b − 4 < 2 → 2.
    // The reference computes in f64 and rounds once.
    let e = [2.5f64.exp() as f32, 3f64.exp() as f32, 4f64.exp() as f32];
    assert_eq!(out[0].to_vec::<i32>().unwrap(), [12, 20, 54, 2, 2, 2]);
    assert_eq!(f32s(&out[1]), [e[0], e[1], e[2], 2., 2., 2.]);
    assert_eq!((out[2].shape(), f32s(&out[2])), (&[2usize, 3][..], vec![2.; 6]));
    assert_eq!(f32s(&out[3]), [1., 1., 1., -2., -2., -2.]);
}

#[test]
fn batch_elementwise_region_by_hand() {
    // One program, x + 1 and the constant 1, per input; results stacked on axis 0.
    let program = |out| RegionProgram {
        num_inputs: 1,
        instrs: vec![RegionInstr::Input(0), f32_const(1.0), RegionInstr::Binary(BinaryOp::Add, 0, 1)],
        outputs: vec![out],
    };
    for (out, want) in [(2, [1., 2., 3., 4., 11., 12., 13., 14.]), (1, [1.; 8])] {
        let mut g = GraphBuilder::new();
        let x0 = g.input("x0", DType::F32, [2, 2]).unwrap();
        let x1 = g.input("x1", DType::F32, [2, 2]).unwrap();
        let y = g.batch_elementwise_region(&[x0, x1], program(out)).unwrap();
        let graph = graph_of(g, &[y]);
        let inputs = [("x0", t(&[2, 2], &[0., 1., 2., 3.])), ("x1", t(&[2, 2], &[10., 11., 12., 13.]))];
        let got = run_all(&graph, &inputs, false).remove(0);
        assert_eq!((got.shape(), f32s(&got)), (&[4usize, 2][..], want.to_vec()));
    }
}

#[test]
fn transform_region_by_hand() {
    // a [1, 1, 2, 2] upsampled 2× in both spatial dims, plus b broadcast along the rows.
    let program = RegionProgram {
        num_inputs: 2,
        instrs: vec![RegionInstr::Input(0), RegionInstr::Input(1), RegionInstr::Binary(BinaryOp::Add, 0, 1)],
        outputs: vec![2],
    };
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [1, 1, 2, 2]).unwrap();
    let b = g.input("b", DType::F32, [4]).unwrap();
    let y = g.transform_region(&[a, b], program, 0, &[2, 2]).unwrap();
    let graph = graph_of(g, &y);
    let inputs = [("a", t(&[1, 1, 2, 2], &[1., 2., 3., 4.])), ("b", t(&[4], &[0., 10., 20., 30.]))];
    let got = run_all(&graph, &inputs, false).remove(0);
    let row = |p: f32, q: f32| [p, p + 10., q + 20., q + 30.];
    let want: Vec<f32> = [row(1., 2.), row(1., 2.), row(3., 4.), row(3., 4.)].concat();
    assert_eq!((got.shape(), f32s(&got)), (&[1usize, 1, 4, 4][..], want));
}

/// A node after a decomposed one keeps the user's id in errors, though legalisation renumbers it.
#[test]
fn errors_name_the_users_node() {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [2]).unwrap();
    let f = g.fused_residual_rms_norm(a, (a, None), (a, None), 0, 1e-6, false).unwrap().0;
    let c = g.input("c", DType::C64, [8]).unwrap();
    let y = g.fft(c, false, backend_api::op::FftNorm::Backward).unwrap();
    let graph = graph_of(g, &[f, y]);
    let e = compile(&graph, false).err().expect("Fft is not implemented");
    assert_eq!((e.kind(), e.node_id(), e.node_op()), (ErrorKind::Unsupported, Some(3), Some("Fft")), "{e}");
}

#[test]
fn capabilities_list_what_legalisation_reaches() {
    let ops = CpuRefBackend::new().capabilities().ops;
    for name in ["FusedResidualLayerNorm", "FusedResidualRmsNorm", "ElementwiseRegion", "TransformRegion", "Fma"] {
        assert!(ops.iter().any(|o| o == name), "{name} missing from {ops:?}");
    }
    assert!(!ops.iter().any(|o| o == "Fft" || o == "AttentionBackward"));
    assert!(CpuRefBackend::new().implements(backend_api::OpKind::DotGeneral));
    assert!(!CpuRefBackend::new().implements(backend_api::OpKind::ElementwiseRegion));
}

/// cpu-ref has no splat kernels: the render's decomposition names the first missing half.
#[cfg(feature = "splat")]
#[test]
fn render_without_its_halves_is_unsupported_naming_the_missing_primitive() {
    let mut g = GraphBuilder::new();
    let dims: [&[usize]; 6] = [&[5, 3], &[5, 3], &[5, 4], &[5], &[5, 16, 3], &[20]];
    let scene: Vec<Value> =
        dims.iter().enumerate().map(|(i, d)| g.input(&format!("s{i}"), DType::F32, *d).unwrap()).collect();
    let img = g.gaussian_splat_render(&scene, backend_api::op::SplatAttrs::new(8, 6, 1000)).unwrap();
    let graph = graph_of(g, &[img]);
    let e = compile(&graph, false).err().expect("no splat kernels");
    assert_eq!((e.kind(), e.node_id(), e.node_op()), (ErrorKind::Unsupported, Some(6), Some("GaussianSplatRender")));
    assert!(e.message().contains("GaussianSplatPrepare"), "{e}");
}
