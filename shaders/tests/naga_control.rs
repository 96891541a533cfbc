//! Renders every control-family kernel and validates it with naga.

use backend_api::DType;

mod common;
use common::validate;

#[test]
fn every_gate_variant_is_valid() {
    let mut count = 0;
    for d in DType::ALL {
        if let Some(src) = shaders::control::gate_module(d) {
            validate(&format!("gate {d}"), &src.unwrap_or_else(|e| panic!("gate {d}: {e}")));
            count += 1;
        }
    }
    // Bool, U8, U32, I8, I32, F32, F16, BF16.
    assert_eq!(count, 8);
}

#[test]
fn copy_is_valid() {
    validate("copy", &shaders::control::copy_module());
}

#[test]
fn byte_copy_is_valid() {
    validate("copy bytes", &shaders::control::copy_bytes_module());
}
