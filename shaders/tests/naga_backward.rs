//! Renders every backward-family variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::backward::cross_entropy_module;

mod common;
use common::validate;

#[test]
fn every_cross_entropy_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        let src = cross_entropy_module(d);
        assert_eq!(src.is_some(), d.is_float(), "SoftmaxCrossEntropyBackward {d:?}");
        if let Some(src) = src {
            let name = format!("SoftmaxCrossEntropyBackward {d:?}");
            validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
            count += 1;
        }
    }
    assert_eq!(count, 4);
}
