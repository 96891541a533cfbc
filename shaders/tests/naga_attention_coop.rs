//! Renders the tensor-core attention kernel for every variant, subgroup size and head-width
//! class the lowering can select, validates it with naga and checks its workgroup memory.

use backend_api::DType;
use shaders::attention::coop::{coop_module, CoopAttnTile};
use shaders::attention::flash::AttnVariant;

mod common;
use common::validate;

fn variants() -> Vec<AttnVariant> {
    let mut v = Vec::new();
    for keep_mask in [false, true] {
        for bias in [None, Some(DType::F16), Some(DType::F32)] {
            v.push(AttnVariant { dtype: DType::F16, keep_mask, bias });
        }
    }
    v
}

/// Head widths: the smallest, Dv != D both ways, the largest of each key-block size, the largest.
const WIDTHS: [(u32, u32); 6] = [(16, 16), (32, 48), (128, 64), (128, 128), (144, 16), (256, 256)];

#[test]
fn every_coop_variant_is_valid() {
    for v in variants() {
        for (d, dv) in WIDTHS {
            let t = CoopAttnTile { subgroup: 32, d, dv };
            let name = format!("{v:?} {t:?}");
            let src = coop_module(v, t).unwrap_or_else(|| panic!("{name}: no module"));
            let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(shaders::kernel_file(&src), Some("attention_flash_coop.wgsl"), "{name}");
            assert!(shaders::is_trusted(&src), "{name}");
            validate(&name, &src);
        }
    }
    let v = AttnVariant { dtype: DType::F16, keep_mask: true, bias: Some(DType::F32) };
    for subgroup in [16, 64] {
        let t = CoopAttnTile { subgroup, d: 128, dv: 128 };
        validate(&format!("{t:?}"), &coop_module(v, t).expect("a module").expect("rendered"));
    }
}

#[test]
fn only_f16_and_whole_fragments_have_a_kernel() {
    let t = CoopAttnTile { subgroup: 32, d: 64, dv: 64 };
    for dtype in [DType::F32, DType::BF16, DType::F64, DType::I32] {
        assert!(coop_module(AttnVariant { dtype, keep_mask: false, bias: None }, t).is_none(), "{dtype:?}");
    }
    let v = AttnVariant { dtype: DType::F16, keep_mask: false, bias: None };
    assert!(coop_module(AttnVariant { bias: Some(DType::BF16), ..v }, t).is_none());
    for (subgroup, d, dv) in [(8, 64, 64), (32, 0, 64), (32, 24, 64), (32, 64, 72), (32, 272, 16), (48, 64, 64)] {
        assert!(coop_module(v, CoopAttnTile { subgroup, d, dv }).is_none(), "{subgroup} {d} {dv}");
    }
}

#[test]
fn every_tile_fits_48_kib() {
    for d in (16..=256).step_by(16) {
        for dv in (16..=256).step_by(16) {
            let t = CoopAttnTile { subgroup: 32, d, dv };
            assert!(t.workgroup_bytes() <= 49152, "{t:?}: {} bytes", t.workgroup_bytes());
        }
    }
}
