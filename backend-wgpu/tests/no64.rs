//! A device without SHADER_F64 / SHADER_INT64 (simulated with `WgpuOptions::no_64bit`): graphs
//! that only move, gather or compare the bytes of I64/F64 data run; kernels that compute in 64
//! bits are `Unsupported`, naming the node, the op, the types and the missing feature.

mod common;

use backend_api::op::BinaryOp;
use backend_api::{Backend, DType, ErrorKind, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu::{WgpuBackend, WgpuOptions};
use common::cpu;

fn no64() -> WgpuBackend {
    WgpuBackend::new(&WgpuOptions { no_64bit: true, ..Default::default() }).expect("a wgpu adapter")
}

fn run(be: &dyn Backend, g: &Graph, inputs: &[(&str, &Tensor)]) -> Vec<Tensor> {
    let mut exe = be.compile(g, &Default::default()).unwrap_or_else(|e| panic!("{}: {e}", be.name()));
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap_or_else(|e| panic!("{}: {e}", be.name()))
}

#[test]
fn capabilities_leave_out_64_bit_dtypes() {
    let dtypes = no64().capabilities().dtypes;
    assert!(!dtypes.contains(&DType::I64) && !dtypes.contains(&DType::F64), "{dtypes:?}");
    assert!(dtypes.contains(&DType::F32));
}

#[test]
fn moving_and_gathering_64_bit_data_needs_no_feature() {
    for d in [DType::I64, DType::F64] {
        let mut g = GraphBuilder::new();
        let x = g.input("x", d, [3, 5]).unwrap();
        let t = g.transpose(x, &[1, 0]).unwrap();
        let r = g.reshape(t, &[15]).unwrap();
        let c = g.concat(&[r, r], 0).unwrap();
        let n = g.narrow(c, 0, 3, 9, 2).unwrap();
        let rev = g.reverse(x, &[1]).unwrap();
        g.output(n).unwrap();
        g.output(rev).unwrap();
        let g = g.build().unwrap();
        let vals: Vec<u8> =
            (0..15u64).flat_map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).to_le_bytes()).collect();
        let x = Tensor::from_bytes(d, &[3, 5], vals).unwrap();
        let got = run(&no64(), &g, &[("x", &x)]);
        let want = run(cpu(), &g, &[("x", &x)]);
        assert_eq!(got, want, "{d}");
    }
}

#[test]
fn computing_in_64_bits_is_unsupported_naming_node_types_and_feature() {
    for (d, feature) in [(DType::I64, "SHADER_INT64"), (DType::F64, "SHADER_F64")] {
        let mut g = GraphBuilder::new();
        let x = g.input("x", d, [4]).unwrap();
        let t = g.reverse(x, &[0]).unwrap();
        let s = g.binary(BinaryOp::Add, x, t).unwrap();
        g.output(s).unwrap();
        let err = no64().compile(&g.build().unwrap(), &Default::default()).err().expect("refused");
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
        let m = err.to_string();
        assert!(m.contains("node 2") && m.contains("Binary.Add") && m.contains(feature), "{m}");
        assert!(m.contains(&format!("{d}[4]")), "{m}");
    }
}
