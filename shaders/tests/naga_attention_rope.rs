//! Renders every attention-family variant the lowering can produce and validates it with naga.

use backend_api::op::RopeStyle;
use backend_api::DType;
use shaders::attention::rope::{module, module_vec4};

mod common;
use common::validate;

#[test]
fn every_rope_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        for &table in &DType::ALL {
            let src = module(d, table);
            let want = matches!(d, DType::F32 | DType::F16 | DType::BF16) && (table == d || table == DType::F32);
            assert_eq!(src.is_some(), want, "Rope x {d:?} tables {table:?}");
            if let Some(src) = src {
                let name = format!("Rope x {d:?} tables {table:?}");
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 5);
    for style in [RopeStyle::NeoX, RopeStyle::GptJ] {
        let name = format!("Rope four-wide {style:?}");
        validate(&name, &module_vec4(style).unwrap_or_else(|e| panic!("{name}: {e}")));
    }
}
