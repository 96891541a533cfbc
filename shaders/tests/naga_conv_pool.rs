//! Renders every Pool, Im2Col and ResizeNearest variant (every dtype the lowering can produce)
//! and validates it with naga, its params struct against the Rust mirror.

use backend_api::op::PoolKind;
use backend_api::DType;
use shaders::conv::{im2col, pool, resize};

mod common;
use common::validate;

#[test]
fn every_pool_variant_is_valid() {
    let mut rendered = 0;
    for kind in [PoolKind::Max, PoolKind::Avg] {
        for &d in &DType::ALL {
            match pool::module(kind, d) {
                Ok(src) => {
                    validate(&format!("pool {kind:?} {d:?}"), &src);
                    assert!(shaders::trust(&src) == shaders::Trust::Trusted);
                    rendered += 1;
                }
                Err(e) => assert!(!pool::supported(kind, d), "pool {kind:?} {d:?}: {e}"),
            }
        }
    }
    // Max: 4 floats + 5 integers; Avg: 4 floats.
    assert_eq!(rendered, 13);
}

#[test]
fn every_copy_variant_is_valid() {
    for &d in &DType::ALL {
        let src = im2col::module(d).unwrap_or_else(|e| panic!("im2col {d:?}: {e}"));
        validate(&format!("im2col {d:?}"), &src);
        let src = resize::module(d).unwrap_or_else(|e| panic!("resize {d:?}: {e}"));
        validate(&format!("resize {d:?}"), &src);
        assert!(!src.contains("f16_bits_to_f32(x"), "raw copies never convert: {src}");
    }
}

#[test]
fn kernels_are_named_by_their_files() {
    let name = |s: &str| shaders::kernel_file(s);
    assert_eq!(name(&pool::module(PoolKind::Max, DType::F32).unwrap()), Some("conv_pool_max.wgsl"));
    assert_eq!(name(&pool::module(PoolKind::Avg, DType::F16).unwrap()), Some("conv_pool_avg.wgsl"));
    assert_eq!(name(&im2col::module(DType::U8).unwrap()), Some("conv_im2col.wgsl"));
    assert_eq!(name(&resize::module(DType::I64).unwrap()), Some("conv_resize.wgsl"));
}
