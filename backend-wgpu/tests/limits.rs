//! Device limits on the wgpu backend, reached on any adapter (lavapipe in CI) by imposing smaller
//! ones through `WgpuOptions::limits`: what fits is split across buffers and runs; what cannot is
//! an `Err` (`DeviceLimit`) naming the node and op or the tensors, never wgpu's panicking handler.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{Backend, DType, Error, ErrorKind, Graph, GraphBuilder, Placement, Tensor};
use backend_wgpu::{LimitOverrides, WgpuBackend, WgpuOptions};

fn backend(limits: LimitOverrides) -> WgpuBackend {
    let be = WgpuBackend::new(&WgpuOptions { limits: limits.clone(), ..Default::default() })
        .expect("a wgpu adapter (install mesa-vulkan-drivers)");
    let l = &be.device_caps().limits;
    // The overrides are what the device was opened with (adapters allow more than these).
    if let Some(m) = limits.max_buffer_size {
        assert_eq!(l.max_buffer_size, m);
    }
    be
}

fn max_buffer(bytes: u64) -> LimitOverrides {
    LimitOverrides { max_buffer_size: Some(bytes), ..Default::default() }
}

fn ramp(n: usize, scale: f32) -> Tensor {
    let v: Vec<f32> = (0..n).map(|i| i as f32 * scale - 3.0).collect();
    Tensor::from_slice(&[n], &v).unwrap()
}

fn compile_err(be: &WgpuBackend, g: &Graph) -> Error {
    match be.compile(g, &Default::default()) {
        Ok(_) => panic!("compiled a graph past the device's limits"),
        Err(e) => {
            eprintln!("{e}");
            e
        }
    }
}

/// `x` through each of `ops`, one graph output per op.
fn fan_out(n: usize, ops: &[UnaryOp]) -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [n]).unwrap();
    for op in ops {
        let y = g.unary(*op, x).unwrap();
        g.output(y).unwrap();
    }
    g.build().unwrap()
}

#[test]
fn outputs_that_together_exceed_max_buffer_size_are_read_back_through_several_buffers() {
    // Four 16 KiB outputs, 64 KiB together, under a 40 000-byte max_buffer_size: each output (and
    // each arena) fits one buffer, the readback of all of them does not.
    let be = backend(max_buffer(40_000));
    let n = 4096;
    let ops = [UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu, UnaryOp::Neg];
    let mut exe = be.compile(&fan_out(n, &ops), &Default::default()).unwrap();
    let x = ramp(n, 0.01);
    let xs = x.to_vec::<f32>().unwrap();
    let outs = exe.run(&[("x", x.view())]).unwrap();
    assert_eq!(outs.len(), 4);
    let want: [fn(f32) -> f32; 4] = [|v| -v, f32::abs, |v| v.max(0.0), |v| -v];
    for (k, (o, f)) in outs.iter().zip(want).enumerate() {
        let got = o.to_vec::<f32>().unwrap();
        assert!(got.iter().zip(&xs).all(|(g, x)| *g == f(*x)), "output {k}");
    }
    // Device-placed outputs and a mix still work.
    let fetched = exe.run_with(&[("x", x.view().into())], &[Placement::Device, Placement::Host]).unwrap();
    let first = fetched.into_iter().next().unwrap().into_host().unwrap();
    assert_eq!(first.to_vec::<f32>().unwrap()[1], -xs[1]);
}

#[test]
fn inputs_that_together_exceed_max_buffer_size_are_uploaded_through_several_buffers() {
    // Two 160 KiB inputs (320 KiB: past the 256 KiB at which runs upload through the instance's
    // own buffers) under a 200 000-byte max_buffer_size.
    let be = backend(max_buffer(200_000));
    let n = 40_960;
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [n]).unwrap();
    let b = g.input("b", DType::F32, [n]).unwrap();
    let y = g.binary(BinaryOp::Sub, a, b).unwrap();
    g.output(y).unwrap();
    let mut exe = be.compile(&g.build().unwrap(), &Default::default()).unwrap();
    let (a, b) = (ramp(n, 0.5), ramp(n, 0.25));
    for _ in 0..2 {
        let out = exe.run(&[("a", a.view()), ("b", b.view())]).unwrap();
        let got = out[0].to_vec::<f32>().unwrap();
        let (av, bv) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        assert!(got.iter().zip(av.iter().zip(&bv)).all(|(g, (a, b))| *g == a - b));
    }
}

#[test]
fn a_tensor_past_max_buffer_size_is_a_device_limit_naming_node_and_op() {
    let be = backend(max_buffer(4096));
    // An input of 8 KiB: its arena range cannot exist.
    let e = compile_err(&be, &fan_out(2048, &[UnaryOp::Neg]));
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("node 0") && msg.contains("Input") && msg.contains("max_buffer_size"), "{msg}");
    // An activation of 8 KiB from a 4 KiB input (Concat with itself).
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [1024]).unwrap();
    let y = g.concat(&[x, x], 0).unwrap();
    g.output(y).unwrap();
    let e = compile_err(&be, &g.build().unwrap());
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("node 1") && msg.contains("Concat") && msg.contains("[2048]"), "{msg}");
    // A constant and a param of 8 KiB.
    let mut g = GraphBuilder::new();
    let c = g.constant(&Tensor::from_slice(&[2048], &[1.0f32; 2048]).unwrap()).unwrap();
    g.output(c).unwrap();
    let e = compile_err(&be, &g.build().unwrap());
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    assert!(e.to_string().contains("Constant"), "{e}");
    let mut g = GraphBuilder::new();
    let w = g.param("w", DType::F32, &[2048]).unwrap();
    let y = g.unary(UnaryOp::Neg, w).unwrap();
    g.output(y).unwrap();
    let e = compile_err(&be, &g.build().unwrap());
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    assert!(e.to_string().contains("\"w\""), "{e}");
}

#[test]
fn an_arena_of_many_live_tensors_splits_at_max_buffer_size() {
    // Eight 2 KiB outputs all live at the end: 16 KiB of arena under a 5000-byte buffer size.
    let be = backend(max_buffer(5000));
    let ops = [UnaryOp::Neg; 8];
    let mut exe = be.compile(&fan_out(512, &ops), &Default::default()).unwrap();
    let x = ramp(512, 1.0);
    let outs = exe.run(&[("x", x.view())]).unwrap();
    for o in outs {
        assert_eq!(o.to_vec::<f32>().unwrap()[7], -(7.0 - 3.0));
    }
}

#[test]
fn a_binding_past_max_storage_buffer_binding_size_is_a_device_limit_naming_node_and_op() {
    let be = backend(LimitOverrides { max_storage_buffer_binding_size: Some(1024), ..Default::default() });
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [1024]).unwrap();
    let y = g.unary(UnaryOp::Neg, x).unwrap();
    g.output(y).unwrap();
    let e = compile_err(&be, &g.build().unwrap());
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("node 1") && msg.contains("max_storage_buffer_binding_size") && msg.contains("4096"), "{msg}");
    // What fits still runs on that device.
    let mut exe = be.compile(&fan_out(64, &[UnaryOp::Neg]), &Default::default()).unwrap();
    let out = exe.run(&[("x", ramp(64, 1.0).view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap()[0], 3.0);
}

#[test]
fn a_kernel_with_more_storage_buffers_than_allowed_is_a_device_limit() {
    let be = backend(LimitOverrides { max_storage_buffers_per_shader_stage: Some(2), ..Default::default() });
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [8]).unwrap();
    let b = g.input("b", DType::F32, [8]).unwrap();
    let y = g.binary(BinaryOp::Add, a, b).unwrap();
    g.output(y).unwrap();
    let e = compile_err(&be, &g.build().unwrap());
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("node 2") && msg.contains("storage buffers"), "{msg}");
}

#[test]
fn a_grid_past_max_compute_workgroups_per_dimension_folds_or_is_a_device_limit() {
    let be = backend(LimitOverrides { max_compute_workgroups_per_dimension: Some(2), ..Default::default() });
    // Fits a folded 2×2 grid: runs, every element written.
    let n = 1024;
    let mut exe = be.compile(&fan_out(n, &[UnaryOp::Neg]), &Default::default()).unwrap();
    let x = ramp(n, 1.0);
    let got = exe.run(&[("x", x.view())]).unwrap()[0].to_vec::<f32>().unwrap();
    assert!(got.iter().zip(x.to_vec::<f32>().unwrap()).all(|(g, x)| *g == -x));
    // Needs more than 2×2 workgroups.
    let e = compile_err(&be, &fan_out(64 * 1024, &[UnaryOp::Neg]));
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    assert!(e.to_string().contains("node 1"), "{e}");
}

#[test]
fn empty_tensors_with_huge_dims_run_without_overflow() {
    // Empty, but the product of the other dims overflows 64 bits (or comes close): nothing to do.
    let be = backend(LimitOverrides::default());
    let shapes = [(vec![0usize, 1 << 62], 1i64), (vec![1 << 40, 1 << 40, 0], 2), (vec![1 << 40, 0, 1 << 40], 1)];
    for (shape, axis) in shapes {
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F32, shape.as_slice()).unwrap();
        let y = g.softmax(x, axis).unwrap();
        let z = g.log_softmax(y, axis).unwrap();
        g.output(z).unwrap();
        let mut exe = be.compile(&g.build().unwrap(), &Default::default()).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        let x = Tensor::from_bytes(DType::F32, &shape, vec![]).unwrap();
        let out = exe.run(&[("x", x.view())]).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        assert_eq!(out[0].shape(), shape.as_slice());
    }
    // Every family compiles such a tensor (it used to overflow computing strides or row counts).
    type Build = fn(&mut GraphBuilder, backend_api::Value) -> backend_api::Result<backend_api::Value>;
    let ops: [(&str, Build); 6] = [
        ("Neg", |g, x| g.unary(UnaryOp::Neg, x)),
        ("Transpose", |g, x| g.transpose(x, &[2, 0, 1])),
        ("Concat", |g, x| g.concat(&[x, x], 2)),
        ("CumSum", |g, x| g.cumsum(x, 0, false, false)),
        ("Narrow", |g, x| g.narrow(x, 0, 0, 4, 1)),
        ("SoftmaxCrossEntropy", |g, x| g.softmax_cross_entropy(x, x, 0)),
    ];
    for (name, op) in ops {
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F32, [1 << 40, 1 << 40, 0]).unwrap();
        let y = op(&mut g, x).unwrap();
        g.output(y).unwrap();
        if let Err(e) = be.compile(&g.build().unwrap(), &Default::default()) {
            panic!("{name}: {e}");
        }
    }
    // A reduction of such a tensor whose output really has 2^80 elements is a Shape error (at
    // build: the graph cannot hold it).
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [1 << 40, 0, 1 << 40]).unwrap();
    let e = g.reduce(backend_api::op::ReduceOp::Sum, x, &[1], true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
}
