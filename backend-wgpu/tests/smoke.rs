//! End-to-end smoke tests of the runtime on whatever adapter exists (lavapipe in CI).

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{Backend, DType, GraphBuilder, Tensor};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use half::f16;

fn backend() -> WgpuBackend {
    WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)")
}

#[test]
fn broadcast_add_then_exp_f32() {
    let be = backend();
    eprintln!("adapter: {}", be.device_caps().description);
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [3, 5]).unwrap();
    let w = g.param("w", DType::F32, &[5]).unwrap();
    let s = g.binary(BinaryOp::Add, x, w).unwrap();
    let y = g.unary(UnaryOp::Exp, s).unwrap();
    g.output(y).unwrap();
    g.output(s).unwrap();
    let graph = g.build().unwrap();
    let mut exe = be.compile(&graph, &Default::default()).unwrap();
    let xs: Vec<f32> = (0..15).map(|i| i as f32 * 0.1).collect();
    let ws: Vec<f32> = (0..5).map(|i| -(i as f32)).collect();
    exe.set_param("w", Tensor::from_slice(&[5], &ws).unwrap().view()).unwrap();
    let x_t = Tensor::from_slice(&[3, 5], &xs).unwrap();
    let out = exe.run(&[("x", x_t.view())]).unwrap();
    let got: Vec<f32> = out[0].to_vec().unwrap();
    let sum: Vec<f32> = out[1].to_vec().unwrap();
    for i in 0..15 {
        let want = xs[i] + ws[i % 5];
        assert_eq!(sum[i], want);
        assert!((got[i] - want.exp()).abs() <= 1e-5 * want.exp().abs().max(1.0), "{i}: {} vs {}", got[i], want.exp());
    }
}

#[test]
fn packed_f16_add_odd_length() {
    let be = backend();
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F16, [7]).unwrap();
    let b = g.input("b", DType::F16, [7]).unwrap();
    let y = g.binary(BinaryOp::Add, a, b).unwrap();
    g.output(y).unwrap();
    let mut exe = be.compile(&g.build().unwrap(), &Default::default()).unwrap();
    let av: Vec<f16> = (0..7).map(|i| f16::from_f32(i as f32 + 0.5)).collect();
    let bv: Vec<f16> = (0..7).map(|i| f16::from_f32(1000.0 * i as f32)).collect();
    let (at, bt) = (Tensor::from_slice(&[7], &av).unwrap(), Tensor::from_slice(&[7], &bv).unwrap());
    let out = exe.run(&[("a", at.view()), ("b", bt.view())]).unwrap();
    let got: Vec<f16> = out[0].to_vec().unwrap();
    for i in 0..7 {
        let want = f16::from_f32(av[i].to_f32() + bv[i].to_f32());
        assert_eq!(got[i].to_bits(), want.to_bits(), "{i}");
    }
}

#[test]
fn reports_capabilities() {
    let be = backend();
    let c = be.device_caps();
    eprintln!(
        "{} f64={} i64={} max_binding={} max_buffer={} storage_per_stage={}",
        c.description,
        c.f64,
        c.i64,
        c.limits.max_storage_buffer_binding_size,
        c.limits.max_buffer_size,
        c.limits.max_storage_buffers_per_shader_stage
    );
}
