//! Renders the strided-copy kernel of the movement family for every dtype (every width the
//! lowering can produce) and validates it with naga.

use backend_api::DType;
use shaders::movement::{fill_module, module, raw_binding, Width};
use shaders::Access;

mod common;
use common::validate;

#[test]
fn every_movement_variant_is_valid() {
    for &d in &DType::ALL {
        let src = module(d).unwrap_or_else(|e| panic!("movement {d:?}: {e}"));
        validate(&format!("movement {d:?}"), &src);
        let src = fill_module(d).unwrap_or_else(|e| panic!("movement fill {d:?}: {e}"));
        validate(&format!("movement fill {d:?}"), &src);
        assert!(!src.contains("var<storage, read_write> x:"), "{src}");
    }
}

#[test]
fn variants_depend_only_on_width() {
    let mut by_width = std::collections::HashMap::new();
    for &d in &DType::ALL {
        let src = module(d).unwrap();
        let prev = by_width.entry(Width::of(d)).or_insert_with(|| src.clone());
        assert_eq!(*prev, src, "{d:?}");
    }
    assert_eq!(by_width.len(), 4);
}

#[test]
fn raw_accessors_never_convert() {
    let f16_in = raw_binding("x", 1, Width::of(DType::F16), Access::Read);
    assert!(f16_in.contains("0xffffu") && !f16_in.contains("f16_bits_to_f32"), "{f16_in}");
    let bool_out = raw_binding("out", 2, Width::of(DType::Bool), Access::Write);
    assert!(bool_out.contains("atomicOr") && !bool_out.contains("select"), "{bool_out}");
    let c64 = raw_binding("x", 1, Width::of(DType::C64), Access::Read);
    assert!(c64.contains("array<vec2<u32>>"), "{c64}");
}
