//! What a host framework does: link the plugin, list the backends, create "wgpu" by name,
//! compile a graph, set its params and run it.

use backend_wgpu as _; // links the plugin so its registration is kept

use backend_api::op::UnaryOp;
use backend_api::{DType, GraphBuilder, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let names: Vec<&str> = backend_api::available().into_iter().map(|(n, _)| n).collect();
    println!("backends: {names:?}");
    assert!(names.contains(&"wgpu"), "wgpu is registered");
    if let Err(e) = backend_api::create("no-such-backend") {
        println!("unknown name -> {e}");
    }

    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 3])?;
    let w = g.param("w", DType::F32, &[3, 2])?;
    let b = g.param("b", DType::F32, &[2])?;
    let y = g.fused_matmul_bias_act(x, w, b, Some(UnaryOp::Relu))?;
    g.output(y)?;
    let graph = g.build()?;

    let backend = backend_api::create("wgpu")?;
    println!("device: {}", backend.capabilities().device);
    let mut exe = backend.compile(&graph, &Default::default())?;
    exe.set_param("w", Tensor::from_slice(&[3, 2], &[1.0f32, -1.0, 2.0, -2.0, 3.0, -3.0])?.view())?;
    exe.set_param("b", Tensor::from_slice(&[2], &[0.5f32, 0.5])?.view())?;
    let x = Tensor::from_slice(&[2, 3], &[1.0f32, 1.0, 1.0, -1.0, 0.0, 2.0])?;
    let out = exe.run(&[("x", x.view())])?;
    let got: Vec<f32> = out[0].to_vec()?;
    println!("relu(x @ w + b) = {got:?}");
    // [1+2+3+0.5, -(6)+0.5 -> 0] and [-1+0+6+0.5, 1-6+0.5 -> 0]
    assert_eq!(got, vec![6.5, 0.0, 5.5, 0.0]);
    println!("host-crate: ok");
    Ok(())
}
