//! Renders every linalg-family variant the lowering can produce and validates it with naga.

use backend_api::op::UnaryOp;
use backend_api::DType;
use shaders::linalg::{acc_dtype, module, permute_module, splitk_module, Epilogue, Tile, Variant};

mod common;
use common::validate;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::BF16, DType::F64];
const VARIANTS: [Variant; 4] = [
    Variant::Tiled(Tile::Small),
    Variant::Tiled(Tile::Large),
    Variant::Skinny { nfast: true },
    Variant::Skinny { nfast: false },
];

fn epilogues() -> Vec<Epilogue> {
    let mut epis = vec![Epilogue::Store, Epilogue::BiasAct(None)];
    epis.extend(UnaryOp::ALL.iter().map(|&u| Epilogue::BiasAct(Some(u))));
    epis
}

#[test]
fn every_product_variant_is_valid() {
    let mut count = 0;
    for &d in &FLOATS {
        for v in VARIANTS {
            for epi in epilogues() {
                if let Some(src) = module(d, d, v, epi) {
                    let src = src.unwrap_or_else(|e| panic!("{d:?} {v:?} {epi:?}: {e}"));
                    validate(&format!("linalg {d:?} {v:?} {epi:?}"), &src);
                    count += 1;
                }
            }
            // Split-K partial sums: accumulator dtype out, plain store.
            let src = module(d, acc_dtype(d), v, Epilogue::Store).expect("partial variant").expect("renders");
            validate(&format!("linalg partial {d:?} {v:?}"), &src);
        }
    }
    // Store and bias-without-activation exist for every float dtype and variant.
    assert!(count >= FLOATS.len() * VARIANTS.len() * 2, "only {count} variants rendered");
}

#[test]
fn every_splitk_reduction_is_valid() {
    for &d in &FLOATS {
        for epi in epilogues() {
            if let Some(src) = splitk_module(d, epi) {
                let src = src.unwrap_or_else(|e| panic!("{d:?} {epi:?}: {e}"));
                validate(&format!("splitk {d:?} {epi:?}"), &src);
            }
        }
    }
}

#[test]
fn non_float_dtypes_have_no_matmul() {
    assert!(module(DType::I32, DType::I32, Variant::Tiled(Tile::Small), Epilogue::Store).is_none());
    assert!(module(DType::F16, DType::BF16, Variant::Tiled(Tile::Small), Epilogue::Store).is_none());
    assert!(splitk_module(DType::U8, Epilogue::Store).is_none());
}

#[test]
fn every_permute_variant_is_valid() {
    for &d in &DType::ALL {
        let src = permute_module(d).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        validate(&format!("permute {d:?}"), &src);
    }
}

#[test]
fn tiles_fit_default_workgroup_memory() {
    for &d in &FLOATS {
        for tile in [Tile::Small, Tile::Large] {
            assert!(tile.workgroup_bytes(d) <= 16384, "{d:?} {tile:?}: {}", tile.workgroup_bytes(d));
        }
    }
}
