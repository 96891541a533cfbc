//! Renders every shader variant and validates it with naga: a broken kernel fails here, on a
//! machine with no GPU.

use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::DType;
use shaders::elementwise::{module, ElemKind};

fn validate(name: &str, src: &str) {
    let m = match naga::front::wgsl::parse_str(src) {
        Ok(m) => m,
        Err(e) => panic!("{name}: parse error:\n{}\n--- source ---\n{src}", e.emit_to_string(src)),
    };
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    if let Err(e) = v.validate(&m) {
        panic!("{name}: validation error: {e:?}\n--- source ---\n{src}");
    }
}

#[test]
fn zero_kernel_is_valid() {
    validate("zero", &shaders::zero_module());
}

#[test]
fn every_elementwise_variant_is_valid() {
    let mut count = 0;
    let mut check = |kind: ElemKind, ins: &[DType], out: DType| {
        if let Some(src) = module(kind, ins, out) {
            let src = src.unwrap_or_else(|e| panic!("{kind:?} {ins:?}: {e}"));
            validate(&format!("{kind:?} {ins:?} -> {out:?}"), &src);
            count += 1;
        }
    };
    for &d in &DType::ALL {
        for &u in UnaryOp::ALL {
            check(ElemKind::Unary(u), &[d], d);
        }
        for &b in BinaryOp::ALL {
            check(ElemKind::Binary(b), &[d, d], d);
        }
        for &c in CompareOp::ALL {
            check(ElemKind::Compare(c), &[d, d], DType::Bool);
        }
        check(ElemKind::Where, &[DType::Bool, d, d], d);
        check(ElemKind::Fma, &[d, d, d], d);
        for &to in &DType::ALL {
            check(ElemKind::Cast, &[d], to);
        }
    }
    assert!(count > 0);
}
