//! Renders every ordering variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::ordering::{arg_module, loss_module, scan_module, topk_module, ArgLayout, ScanStage};

mod common;
use common::validate;

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
                    let src = arg_module(max, d, ix, layout);
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
            let src = scan_module(stage, d);
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
fn every_loss_variant_is_valid() {
    let mut count = 0;
    for backward in [false, true] {
        for &d in &DType::ALL {
            let src = loss_module(backward, d);
            assert_eq!(src.is_some(), d.is_float(), "loss {backward} {d:?}");
            if let Some(src) = src {
                let name = format!("loss backward={backward} {d:?}");
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 2 * 4);
}

#[test]
fn every_topk_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        for &ix in &DType::ALL {
            let src = topk_module(d, ix);
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
    use shaders::ordering::{topk_big_module, TopKStage};
    let mut count = 0;
    for stage in TopKStage::ALL {
        for &d in &DType::ALL {
            for ix in [DType::I32, DType::I64, DType::U32] {
                let src = topk_big_module(stage, d, ix);
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
