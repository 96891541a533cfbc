//! Renders every shader variant and validates it with naga: a broken kernel fails here, on a
//! machine with no GPU.

use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::DType;
use shaders::elementwise::{module, ElemKind};

mod common;
use common::validate;

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
