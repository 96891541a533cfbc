//! Whole graphs through the public `Backend` API: compile, set params, run.

use backend_api::op::{BinaryOp, DimSpec, ReduceOp, UnaryOp};
use backend_api::{Backend, CompileOptions, DType, Dim, GraphBuilder, Op, Shape, Tensor, TensorView};
use backend_cpu_ref::CpuRefBackend;

fn compile(b: GraphBuilder) -> Box<dyn backend_api::Executable> {
    CpuRefBackend::new().compile(&b.build().unwrap(), &CompileOptions::default()).unwrap()
}

#[test]
fn registered_under_its_name() {
    use backend_cpu_ref as _;
    assert!(backend_api::available().iter().any(|(n, _)| *n == "cpu-ref"));
    let be = backend_api::create("cpu-ref").unwrap();
    assert_eq!(be.name(), "cpu-ref");
    let caps = be.capabilities();
    assert_eq!(caps.dtypes.len(), DType::ALL.len());
    for name in ["MatMul", "DotGeneral", "Unary.Gelu", "Binary.Pow", "Compare.Ge", "Reduce.Prod", "Pad", "RmsNorm"] {
        assert!(caps.ops.iter().any(|o| o == name), "{name} missing from capabilities");
    }
    assert!(!caps.ops.iter().any(|o| o == "AttentionBackward"));
}

#[test]
fn small_mlp_with_params_and_constants() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2, 3]).unwrap();
    let w = b.param("w", DType::F32, &[3, 2]).unwrap();
    let bias = b.constant(&Tensor::from_slice(&[2], &[-100.0f32, -200.0]).unwrap()).unwrap();
    let h = b.matmul(x, w).unwrap();
    let h = b.binary(BinaryOp::Add, h, bias).unwrap();
    let h = b.unary(UnaryOp::Relu, h).unwrap();
    let s = b.softmax(h, -1).unwrap();
    b.output(h).unwrap();
    b.output(s).unwrap();
    let mut exe = compile(b);
    let w = Tensor::from_slice(&[3, 2], &[7.0f32, 8., 9., 10., 11., 12.]).unwrap();
    exe.set_param("w", w.view()).unwrap();
    let x = Tensor::from_slice(&[2, 3], &[1.0f32, 2., 3., 4., 5., 6.]).unwrap();
    let out = exe.run(&[("x", x.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [0., 0., 39., 0.]);
    let s = out[1].to_vec::<f32>().unwrap();
    assert_eq!(s[0], 0.5);
    assert!((s[2] - 1.0).abs() < 1e-7 && s[3] < 1e-16);
    // Params persist across runs.
    let again = exe.run(&[("x", x.view())]).unwrap();
    assert_eq!(again, out);
}

#[test]
fn symbolic_batch_binds_per_run() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::I32, Shape(vec![Dim::from("n"), Dim::Static(3)])).unwrap();
    let t = b.transpose(x, &[1, 0]).unwrap();
    let r = b.add1(Op::Reshape { new_shape: vec![DimSpec::Sym("n".into()), DimSpec::Static(3)] }, &[t]).unwrap();
    let s = b.reduce(ReduceOp::Sum, r, &[1], false).unwrap();
    let one = b.constant(&Tensor::scalar(1i32)).unwrap();
    let e = b.expand(one, Shape(vec![Dim::from("n"), Dim::Static(2)])).unwrap();
    b.output(s).unwrap();
    b.output(e).unwrap();
    let mut exe = compile(b);
    for n in [0usize, 1, 2, 5] {
        let v: Vec<i32> = (0..3 * n as i32).collect();
        let x = Tensor::from_slice(&[n, 3], &v).unwrap();
        let out = exe.run(&[("x", x.view())]).unwrap();
        assert_eq!(out[0].shape(), &[n]);
        assert_eq!(out[1].shape(), &[n, 2]);
        // Transpose then reshape reorders: element sums still add up to the total.
        let total: i32 = out[0].to_vec::<i32>().unwrap().iter().sum();
        assert_eq!(total, v.iter().sum::<i32>());
    }
}

#[test]
fn bool_inputs_are_canonicalised() {
    let mut b = GraphBuilder::new();
    let x = b.input("m", DType::Bool, [3]).unwrap();
    let y = b.reverse(x, &[0]).unwrap();
    b.output(y).unwrap();
    let mut exe = compile(b);
    let data = [2u8, 0, 255];
    let v = TensorView::new(DType::Bool, &[3], &data).unwrap();
    let out = exe.run(&[("m", v)]).unwrap();
    assert_eq!(out[0].bytes(), &[1, 0, 1]);
}

#[test]
fn dot_general_matches_its_decomposition() {
    // lhs [B=2, K=3, M=4], rhs [K=3, N=2, B=2]: batch (0, 2), contract (1, 0).
    let mut b = GraphBuilder::new();
    let l = b.input("l", DType::F64, [2, 3, 4]).unwrap();
    let r = b.input("r", DType::F64, [3, 2, 2]).unwrap();
    let d = b.dot_general(l, r, (&[0], &[2]), (&[1], &[0])).unwrap();
    let lt = b.transpose(l, &[0, 2, 1]).unwrap(); // [B, M, K]
    let rt = b.transpose(r, &[2, 0, 1]).unwrap(); // [B, K, N]
    let m = b.matmul(lt, rt).unwrap();
    b.output(d).unwrap();
    b.output(m).unwrap();
    let mut exe = compile(b);
    let lv: Vec<f64> = (0..24).map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.25).collect();
    let rv: Vec<f64> = (0..12).map(|i| ((i * 13 % 7) as f64 - 3.0) * 0.5).collect();
    let (lt, rt) = (Tensor::from_slice(&[2, 3, 4], &lv).unwrap(), Tensor::from_slice(&[3, 2, 2], &rv).unwrap());
    let out = exe.run(&[("l", lt.view()), ("r", rt.view())]).unwrap();
    assert_eq!(out[0].shape(), &[2, 4, 2]);
    assert_eq!(out[0], out[1]);
}

#[test]
fn casts_chain_with_single_roundings() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F64, [3]).unwrap();
    let h = b.cast(x, DType::F16).unwrap();
    let i = b.cast(h, DType::I8).unwrap();
    b.output(h).unwrap();
    b.output(i).unwrap();
    let mut exe = compile(b);
    let x = Tensor::from_slice(&[3], &[1.0 + 2f64.powi(-11) + 2f64.powi(-40), 1e9, -300.0]).unwrap();
    let out = exe.run(&[("x", x.view())]).unwrap();
    let h: Vec<u16> = out[0].to_vec::<half::f16>().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(h, [0x3c01, 0x7c00, 0xdcb0]);
    assert_eq!(out[1].to_vec::<i8>().unwrap(), [1, 127, -128]);
}

#[test]
fn layer_norm_and_rms_norm_in_a_graph() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::BF16, [2, 4]).unwrap();
    let g = b.param("g", DType::BF16, &[4]).unwrap();
    let be = b.param("b", DType::BF16, &[4]).unwrap();
    let ln = b.layer_norm(x, g, Some(be), -1, 1e-5).unwrap();
    let rn = b.rms_norm(x, g, None, -1, 1e-6).unwrap();
    b.output(ln).unwrap();
    b.output(rn).unwrap();
    let mut exe = compile(b);
    let bf = |v: &[f32]| {
        Tensor::from_slice(&[v.len()], &v.iter().map(|&x| half::bf16::from_f32(x)).collect::<Vec<_>>()).unwrap()
    };
    exe.set_param("g", bf(&[1., 1., 1., 1.]).view()).unwrap();
    exe.set_param("b", bf(&[0., 0., 0., 0.]).view()).unwrap();
    let x = bf(&[3., 3., 3., 3., -1., 1., -1., 1.]).reshaped(&[2, 4]).unwrap();
    let out = exe.run(&[("x", x.view())]).unwrap();
    let ln: Vec<f32> = out[0].to_vec::<half::bf16>().unwrap().iter().map(|v| v.to_f32()).collect();
    assert_eq!(&ln[..4], [0., 0., 0., 0.]);
    assert!(ln[4..].iter().zip([-1., 1., -1., 1.]).all(|(a, b)| (a - b).abs() < 1e-2));
    let rn: Vec<f32> = out[1].to_vec::<half::bf16>().unwrap().iter().map(|v| v.to_f32()).collect();
    assert!(rn.iter().zip([1., 1., 1., 1., -1., 1., -1., 1.]).all(|(a, b)| (a - b).abs() < 1e-2));
}

#[test]
fn quantised_matmuls_run_through_the_backend() {
    use backend_api::op::QuantFormat;
    // Q8_0, N = 2, K = 32: row 0 has d = 1 and qs = 1, 2, …, 32; row 1 d = −0.5 and qs all 2.
    let mut w = vec![0x00, 0x3C];
    w.extend(1..=32u8);
    w.extend([0x00, 0xB8]);
    w.extend([2u8; 32]);
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [1, 32]).unwrap();
    let wv = b.input("w", DType::U8, [2, 34]).unwrap();
    let y = b.quant_matmul(x, &[wv], QuantFormat::Q8_0).unwrap();
    b.output(y).unwrap();
    let wt = Tensor::from_bytes(DType::U8, &[2, 34], w.clone()).unwrap();
    let xt = Tensor::from_slice(&[1, 32], &[1.0f32; 32]).unwrap();
    let out = compile(b).run(&[("x", xt.view()), ("w", wt.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [528.0, -32.0]);

    // The same weight as expert 1 of two (expert 0 all zero bytes); rows: expert 1, 0, 5 (none).
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [3, 32]).unwrap();
    let wv = b.input("w", DType::U8, [2, 2, 34]).unwrap();
    let e = b.input("e", DType::I32, [3]).unwrap();
    let y = b.quant_grouped_matmul(x, &[wv], e, QuantFormat::Q8_0).unwrap();
    b.output(y).unwrap();
    let mut both = vec![0u8; 68];
    both.extend(w);
    let wt = Tensor::from_bytes(DType::U8, &[2, 2, 34], both).unwrap();
    let xt = Tensor::from_slice(&[3, 32], &[1.0f32; 96]).unwrap();
    let et = Tensor::from_slice(&[3], &[1i32, 0, 5]).unwrap();
    let out = compile(b).run(&[("x", xt.view()), ("w", wt.view()), ("e", et.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [528.0, -32.0, 0.0, 0.0, 0.0, 0.0]);
}
