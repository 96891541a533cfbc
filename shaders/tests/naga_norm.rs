//! Renders every norm variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::norm::{cross_entropy_module, module, NormKind};

mod common;
use common::validate;

#[test]
fn every_norm_variant_is_valid() {
    let mut count = 0;
    for kind in NormKind::ALL {
        for &d in &DType::ALL {
            for beta in [false, true] {
                let src = module(kind, d, beta);
                let expected = d.is_float() && (!beta || kind.has_gamma());
                assert_eq!(src.is_some(), expected, "{kind:?} {d:?} beta={beta}");
                if let Some(src) = src {
                    let src = src.unwrap_or_else(|e| panic!("{kind:?} {d:?} beta={beta}: {e}"));
                    validate(&format!("{kind:?} {d:?} beta={beta}"), &src);
                    count += 1;
                }
            }
        }
    }
    // 4 float dtypes: Softmax, LogSoftmax without beta; LayerNorm, RmsNorm with and without.
    assert_eq!(count, 4 * 6);
}

#[test]
fn every_cross_entropy_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        let src = cross_entropy_module(d);
        assert_eq!(src.is_some(), d.is_float(), "SoftmaxCrossEntropy {d:?}");
        if let Some(src) = src {
            let name = format!("SoftmaxCrossEntropy {d:?}");
            validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
            count += 1;
        }
    }
    assert_eq!(count, 4);
}
