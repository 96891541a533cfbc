//! Renders every random variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::random::{elem_module, sample_module, RngKind};

mod common;
use common::validate;

#[test]
fn every_elementwise_random_variant_is_valid() {
    let mut count = 0;
    for kind in RngKind::ALL {
        for &d in &DType::ALL {
            if let Some(src) = elem_module(kind, d) {
                let src = src.unwrap_or_else(|e| panic!("{kind:?} {d:?}: {e}"));
                validate(&format!("{kind:?} {d:?}"), &src);
                count += 1;
            }
        }
    }
    // Bits: U32; Uniform and Normal: F32, F16, BF16, F64.
    assert_eq!(count, 1 + 4 + 4);
}

#[test]
fn every_sample_variant_is_valid() {
    let mut count = 0;
    for &x in &DType::ALL {
        for &i in &DType::ALL {
            if let Some(src) = sample_module(x, i) {
                let src = src.unwrap_or_else(|e| panic!("Sample {x:?} {i:?}: {e}"));
                validate(&format!("Sample {x:?} {i:?}"), &src);
                count += 1;
            }
        }
    }
    assert_eq!(count, 3 * 2);
}
