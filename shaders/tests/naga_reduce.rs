//! Renders every reduce variant the lowering can produce and validates it with naga.

use backend_api::op::ReduceOp;
use backend_api::DType;
use shaders::reduce::{module, supported, Layout, Stage};

mod common;
use common::validate;

#[test]
fn every_reduce_variant_is_valid() {
    let mut count = 0;
    for &op in ReduceOp::ALL {
        for &d in &DType::ALL {
            for stage in [Stage::Full, Stage::Partial, Stage::Final] {
                for layout in [Layout::Rows, Layout::Threads] {
                    let src = module(op, d, stage, layout);
                    assert_eq!(src.is_some(), supported(op, d), "{op:?} {d:?}");
                    if let Some(src) = src {
                        let src = src.unwrap_or_else(|e| panic!("{op:?} {d:?} {stage:?} {layout:?}: {e}"));
                        validate(&format!("reduce {op:?} {d:?} {stage:?} {layout:?}"), &src);
                        count += 1;
                    }
                }
            }
        }
    }
    // Sum/Prod: 9 numeric dtypes, Mean: 4 floats, Max/Min: 10; 6 variants each.
    assert_eq!(count, (9 + 9 + 4 + 10 + 10) * 6);
}

#[test]
fn undefined_variants_are_refused() {
    assert!(module(ReduceOp::Mean, DType::I32, Stage::Full, Layout::Rows).is_none());
    assert!(module(ReduceOp::Sum, DType::Bool, Stage::Full, Layout::Rows).is_none());
    assert!(module(ReduceOp::Max, DType::C64, Stage::Full, Layout::Rows).is_none());
}
