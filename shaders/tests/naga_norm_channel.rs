//! Renders every GroupNorm and LayerNorm2d variant the lowering can produce and validates it with
//! naga (params layouts included).

use backend_api::DType;
use shaders::norm::channel::{group_norm_apply, group_norm_held, group_norm_stats, layer_norm_2d};
use shaders::norm::MAX_HELD_PER_THREAD;

mod common;
use common::validate;

/// Every K the lowering may pick: powers of two up to the register limit.
fn ks() -> Vec<u32> {
    (0..=MAX_HELD_PER_THREAD.trailing_zeros()).map(|e| 1 << e).collect()
}

fn check(name: &str, src: Option<Result<String, String>>, d: DType) -> usize {
    assert_eq!(src.is_some(), d.is_float(), "{name}");
    let Some(src) = src else { return 0 };
    let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!shaders::is_trusted(&src), "{name}: the channel norms keep the runtime checks");
    validate(name, &src);
    1
}

#[test]
fn every_group_norm_variant_is_valid() {
    assert!(group_norm_held(DType::F32, false, 0).is_none());
    assert!(group_norm_stats(DType::F32, MAX_HELD_PER_THREAD + 1).is_none());
    assert!(group_norm_apply(DType::F32, true, 3 * MAX_HELD_PER_THREAD).is_none());
    let mut count = 0;
    for &d in &DType::ALL {
        for k in ks() {
            count += check(&format!("GroupNorm stats {d:?} K={k}"), group_norm_stats(d, k), d);
            for beta in [false, true] {
                count += check(&format!("GroupNorm held {d:?} beta={beta} K={k}"), group_norm_held(d, beta, k), d);
                count += check(&format!("GroupNorm apply {d:?} beta={beta} K={k}"), group_norm_apply(d, beta, k), d);
            }
        }
    }
    assert_eq!(count, 4 * ks().len() * 5);
}

#[test]
fn every_layer_norm_2d_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        for beta in [false, true] {
            count += check(&format!("LayerNorm2d {d:?} beta={beta}"), layer_norm_2d(d, beta), d);
        }
    }
    assert_eq!(count, 4 * 2);
}
