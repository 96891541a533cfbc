//! The feed checks of `run` (backend-api's `bind_feeds`/`check_feeds`) on cpu-ref.

use backend_api::op::UnaryOp;
use backend_api::{Backend, CompileOptions, DType, ErrorKind, GraphBuilder, Tensor};
use backend_cpu_ref::CpuRefBackend;

#[test]
fn a_duplicated_input_name_is_an_input_error_naming_it() {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2]).unwrap();
    let y = b.unary(UnaryOp::Neg, x).unwrap();
    b.output(y).unwrap();
    let mut exe = CpuRefBackend::new().compile(&b.build().unwrap(), &CompileOptions::default()).unwrap();
    let (one, two) =
        (Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap(), Tensor::from_slice(&[2], &[3.0f32, 4.0]).unwrap());
    let e = exe.run(&[("x", one.view()), ("x", two.view())]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    assert!(e.to_string().contains("input \"x\" is given more than once"), "{e}");
    let ok = exe.run(&[("x", one.view())]).unwrap();
    assert_eq!(ok[0].to_vec::<f32>().unwrap(), vec![-1.0, -2.0]);
}
