//! Renders every QuantMatMul and QuantGroupedMatMul kernel variant (each format with each x dtype
//! and each weight dtype combination it takes) and validates it with naga.

use backend_api::op::QuantFormat;
use backend_api::DType;

mod common;
use common::{quant_weight_dtypes as weight_dtypes, validate};

#[test]
fn every_quant_variant_is_valid() {
    let mut count = 0;
    for f in QuantFormat::ALL {
        for ws in weight_dtypes(f) {
            for x in [DType::F32, DType::F16, DType::BF16] {
                let name = format!("{} x {x} w {ws:?}", f.name());
                let src = shaders::linalg::quant::module_for(f, x, &ws).unwrap_or_else(|| panic!("{name}: none"));
                validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
                let name = format!("grouped {name}");
                let src =
                    shaders::linalg::quant::grouped_module_for(f, x, &ws).unwrap_or_else(|| panic!("{name}: none"));
                let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(src.contains("var<storage, read_write> texp"), "{name}: no tile expert table");
                validate(&name, &src);
                count += 1;
            }
        }
    }
    // 2 + 2 (Int8Block, Int4Block) + 4 (Int8BlockAsym) + 1 + 1 + 1 + 11 GGML, times 3 x dtypes.
    assert_eq!(count, 22 * 3);
}

#[test]
fn other_x_dtypes_and_wrong_scales_are_refused() {
    assert!(shaders::linalg::quant::module_for(QuantFormat::Q8_0, DType::F64, &[DType::U8]).is_none());
    assert!(shaders::linalg::quant::grouped_module_for(QuantFormat::Q8_0, DType::F64, &[DType::U8]).is_none());
    let bad = shaders::linalg::quant::module_for(
        QuantFormat::Int8Block { block_size: 32 },
        DType::F32,
        &[DType::I8, DType::I32],
    );
    assert!(matches!(bad, Some(Err(_))));
}
