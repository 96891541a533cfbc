//! Every class of bad call to the wgpu backend is an `Err` naming what went wrong.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{Backend, DType, ErrorKind, Executable, GraphBuilder, Tensor};
use backend_wgpu::{WgpuBackend, WgpuOptions};

fn backend() -> WgpuBackend {
    WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)")
}

fn exe(be: &WgpuBackend) -> Box<dyn Executable> {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 3]).unwrap();
    let w = g.param("w", DType::F32, &[3]).unwrap();
    let y = g.binary(BinaryOp::Add, x, w).unwrap();
    let y = g.unary(UnaryOp::Relu, y).unwrap();
    g.output(y).unwrap();
    be.compile(&g.build().unwrap(), &Default::default()).unwrap()
}

#[test]
fn run_and_param_errors() {
    let be = backend();
    let mut e = exe(&be);
    let x = Tensor::from_slice(&[2, 3], &[0.0f32; 6]).unwrap();
    let err = e.run(&[("x", x.view())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(err.to_string().contains("\"w\"") && err.to_string().contains("never set"), "{err}");

    let err = e.set_param("nope", x.view()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(err.to_string().contains("nope"), "{err}");
    let err = e.set_param("w", x.view()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    assert!(err.to_string().contains("[3]") && err.to_string().contains("[2, 3]"), "{err}");
    let wi = Tensor::from_slice(&[3], &[1i32, 2, 3]).unwrap();
    assert_eq!(e.set_param("w", wi.view()).unwrap_err().kind(), ErrorKind::Input);
    e.set_param("w", Tensor::from_slice(&[3], &[1.0f32, 2.0, 3.0]).unwrap().view()).unwrap();

    assert_eq!(e.run(&[]).unwrap_err().kind(), ErrorKind::Input);
    let err = e.run(&[("x", x.view()), ("y", x.view())]).unwrap_err();
    assert!(err.to_string().contains("unknown input \"y\""), "{err}");
    let bad_shape = Tensor::from_slice(&[3, 2], &[0.0f32; 6]).unwrap();
    assert_eq!(e.run(&[("x", bad_shape.view())]).unwrap_err().kind(), ErrorKind::Input);
    let bad_dtype = Tensor::from_slice(&[2, 3], &[0i32; 6]).unwrap();
    assert_eq!(e.run(&[("x", bad_dtype.view())]).unwrap_err().kind(), ErrorKind::Input);
    let out = e.run(&[("x", x.view())]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
}

#[test]
fn a_symbol_no_input_binds_is_an_error_at_run() {
    let be = backend();
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [3]).unwrap();
    let y = g.expand(x, backend_api::Shape(vec!["m".into(), 3usize.into()])).unwrap();
    g.output(y).unwrap();
    let mut e = be.compile(&g.build().unwrap(), &Default::default()).unwrap();
    let x = Tensor::from_slice(&[3], &[1f32, 2.0, 3.0]).unwrap();
    let err = e.run(&[("x", x.view())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ShapeBinding);
    assert!(err.to_string().contains("symbol m is not bound"), "{err}");
}
