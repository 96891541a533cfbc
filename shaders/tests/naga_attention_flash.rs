//! Renders every fused-attention variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::attention::flash::{combine_module, decode_module, flash_module, AttnVariant, FlashTile};

mod common;
use common::validate;

fn variants() -> Vec<AttnVariant> {
    let mut v = Vec::new();
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        for keep_mask in [false, true] {
            for bias in [None, Some(dtype), Some(DType::F32)] {
                v.push(AttnVariant { dtype, keep_mask, bias });
            }
        }
    }
    v
}

#[test]
fn every_flash_variant_is_valid() {
    for v in variants() {
        for t in [FlashTile::LARGE, FlashTile::SMALL] {
            let name = format!("{v:?} {t:?}");
            let src = flash_module(v, t).unwrap_or_else(|| panic!("{name}: no module"));
            validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
        }
    }
}

#[test]
fn other_dtypes_and_bias_dtypes_have_no_kernel() {
    let t = FlashTile::SMALL;
    for d in [DType::F64, DType::I32, DType::Bool] {
        assert!(flash_module(AttnVariant { dtype: d, keep_mask: false, bias: None }, t).is_none());
    }
    assert!(flash_module(AttnVariant { dtype: DType::F16, keep_mask: false, bias: Some(DType::BF16) }, t).is_none());
}

#[test]
fn tiles_fit_their_workgroup_memory() {
    assert!(FlashTile::SMALL.workgroup_bytes() <= 16384, "{}", FlashTile::SMALL.workgroup_bytes());
    assert!(FlashTile::LARGE.workgroup_bytes() <= 49152, "{}", FlashTile::LARGE.workgroup_bytes());
}

#[test]
fn every_decode_and_combine_variant_is_valid() {
    for v in variants() {
        for rmax in [1, 2, 4, 8] {
            for k_vec in [false, true] {
                let name = format!("decode {v:?} rows {rmax} K vectors {k_vec}");
                let src = decode_module(v, rmax, k_vec).unwrap_or_else(|| panic!("{name}: no module"));
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
            }
        }
        assert!(decode_module(v, 3, false).is_none());
    }
    for d in [DType::F32, DType::F16, DType::BF16] {
        for pairs in [false, true] {
            let name = format!("combine {d:?} pairs {pairs}");
            let Some(src) = combine_module(d, pairs) else {
                assert!(pairs && d == DType::F32, "{name}: no module");
                continue;
            };
            validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
        }
    }
    assert!(combine_module(DType::F64, false).is_none());
}
