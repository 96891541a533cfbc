//! Renders every reduce-family variant the lowering can produce (Reduce, ArgMax/ArgMin, Cumsum,
//! TopK) and validates it with naga.

use backend_api::op::ReduceOp;
use backend_api::DType;
use shaders::reduce::arg::ArgLayout;
use shaders::reduce::scan::ScanStage;
use shaders::reduce::topk::TopKStage;
use shaders::reduce::{arg, module, scan, supported, topk, Layout, Stage};

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

fn numeric(d: DType) -> bool {
    !matches!(d, DType::Bool | DType::C64)
}

#[test]
fn every_arg_variant_is_valid() {
    let mut count = 0;
    for max in [true, false] {
        for &d in &DType::ALL {
            for &ix in &DType::ALL {
                for layout in [ArgLayout::Rows, ArgLayout::Threads] {
                    let src = arg::module(max, d, ix, layout);
                    let expected = d != DType::C64 && matches!(ix, DType::I32 | DType::I64);
                    assert_eq!(src.is_some(), expected, "arg {max} {d:?} {ix:?}");
                    if let Some(src) = src {
                        let name = format!("arg max={max} {d:?} {ix:?} {layout:?}");
                        validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                        count += 1;
                    }
                }
            }
        }
    }
    // numeric (9) + Bool, two index dtypes, two ops, two layouts
    assert_eq!(count, 10 * 2 * 2 * 2);
}

#[test]
fn every_scan_variant_is_valid() {
    let mut count = 0;
    for stage in ScanStage::ALL {
        for &d in &DType::ALL {
            let src = scan::module(stage, d);
            assert_eq!(src.is_some(), numeric(d), "scan {stage:?} {d:?}");
            if let Some(src) = src {
                let name = format!("scan {stage:?} {d:?}");
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 4 * 9);
}

#[test]
fn every_topk_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        for &ix in &DType::ALL {
            let src = topk::module(d, ix);
            assert_eq!(src.is_some(), numeric(d) && matches!(ix, DType::I32 | DType::I64), "topk {d:?} {ix:?}");
            if let Some(src) = src {
                let name = format!("topk {d:?} {ix:?}");
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 9 * 2);
}

#[test]
fn every_long_topk_variant_is_valid() {
    let mut count = 0;
    for stage in TopKStage::ALL {
        for &d in &DType::ALL {
            for ix in [DType::I32, DType::I64, DType::U32] {
                let src = topk::big_module(stage, d, ix);
                assert_eq!(src.is_some(), numeric(d) && ix != DType::U32, "topk {stage:?} {d:?} {ix:?}");
                if let Some(src) = src {
                    let name = format!("long topk {stage:?} {d:?} {ix:?}");
                    validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                    count += 1;
                }
            }
        }
    }
    assert_eq!(count, 4 * 9 * 2);
}
