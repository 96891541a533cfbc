//! The per-kernel profiler: every dispatch timed with its provenance where the adapter has
//! timestamp queries (both timer kinds where it has them inside passes), the same results as a
//! plain run, and a clear `Unsupported` error where timestamps are off.

use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{CompileOptions, DType, ErrorKind, Executable, Graph, GraphBuilder, Tensor};
use backend_wgpu::{FeatureChoice, TimerKind, WgpuBackend, WgpuOptions};

/// y = exp(x·w) + x·w: a GEMM (with known flops) and elementwise kernels.
fn graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [8, 16]).unwrap();
    let w = g.param("w", DType::F32, &[16, 4]).unwrap();
    let h = g.matmul(x, w).unwrap();
    let e = g.unary(UnaryOp::Exp, h).unwrap();
    let y = g.binary(BinaryOp::Add, e, h).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn data(n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) * scale).collect()
}

fn check_profile(features: FeatureChoice, expect: Option<TimerKind>) {
    let be = WgpuBackend::new(&WgpuOptions { features, ..Default::default() }).expect("a wgpu adapter");
    let mut exe = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    exe.set_param("w", Tensor::from_slice(&[16, 4], &data(64, 0.05)).unwrap().view()).unwrap();
    let x = Tensor::from_slice(&[8, 16], &data(128, 0.1)).unwrap();
    let plain = exe.run(&[("x", x.view())]).unwrap();
    let p = exe.profile(&[("x", x.view())], 3).unwrap();
    assert_eq!(Some(p.timer), expect);
    assert_eq!(p.runs.len(), 3);
    for r in &p.runs {
        assert_eq!(r.dispatches.len(), exe.dispatch_count());
        assert!(r.host.submit_wait > std::time::Duration::ZERO);
    }
    let rows = p.rows();
    let gemm = rows.iter().find(|r| r.op == "MatMul").expect("a MatMul row");
    assert!(gemm.kernel.starts_with("linalg"), "{gemm:?}");
    assert_eq!(gemm.flops, Some(2 * 8 * 16 * 4));
    assert_eq!(gemm.bytes, (8 * 16 + 16 * 4 + 8 * 4) * 4);
    let exp = rows.iter().find(|r| r.op.contains("Exp")).expect("an Exp row");
    assert!(
        exp.kernel.starts_with("elementwise") && exp.kernel.contains(".wgsl:main#") && exp.flops.is_none(),
        "{exp:?}"
    );
    let table = p.to_string();
    assert!(table.contains("TFLOP/s") && table.contains("host (median)"), "{table}");
    println!("{table}");
    // Profiling changes nothing: the same results after it.
    assert_eq!(exe.run(&[("x", x.view())]).unwrap()[0].bytes(), plain[0].bytes());
}

#[test]
fn profiles_every_dispatch_where_timestamps_exist() {
    let be = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter");
    let caps = be.device_caps().clone();
    drop(be);
    if !caps.timestamps {
        println!("{} has no TIMESTAMP_QUERY: only the Unsupported path is tested", caps.description);
        return;
    }
    let inside = caps.timestamps_in_passes.then_some(TimerKind::InsidePasses);
    check_profile(FeatureChoice::default(), inside.or(Some(TimerKind::PassPerDispatch)));
    let per_pass = FeatureChoice { timestamps_inside_passes: false, ..Default::default() };
    check_profile(per_pass, Some(TimerKind::PassPerDispatch));
}

#[test]
fn profiling_without_timestamps_is_unsupported() {
    let opts =
        WgpuOptions { features: FeatureChoice { timestamps: false, ..Default::default() }, ..Default::default() };
    let be = WgpuBackend::new(&opts).expect("a wgpu adapter");
    let mut exe = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    exe.set_param("w", Tensor::from_slice(&[16, 4], &data(64, 0.05)).unwrap().view()).unwrap();
    let x = Tensor::from_slice(&[8, 16], &data(128, 0.1)).unwrap();
    let e = exe.profile(&[("x", x.view())], 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("TIMESTAMP_QUERY"), "{e}");
}
