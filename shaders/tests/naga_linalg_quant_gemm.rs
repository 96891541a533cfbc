//! Renders every prefill GEMM variant of QuantMatMul (each format with each x dtype and each
//! weight dtype combination it takes, in the scalar and the tensor-core form) and validates it
//! with naga.

use backend_api::op::QuantFormat;
use backend_api::DType;
use shaders::linalg::quant_gemm::{module_for, QuantGemmForm};

mod common;
use common::{quant_weight_dtypes, validate};

#[test]
fn every_quant_gemm_variant_is_valid() {
    let forms = [QuantGemmForm::Scalar, QuantGemmForm::Coop { frag: 16, subgroup: 32 }];
    let mut count = 0;
    for f in QuantFormat::ALL {
        for ws in quant_weight_dtypes(f) {
            for x in [DType::F32, DType::F16, DType::BF16] {
                for (form, xvec) in forms.iter().flat_map(|&f| [(f, false), (f, true)]) {
                    let name = format!("{} x {x} w {ws:?} {form:?} xvec {xvec}", f.name());
                    let src = module_for(f, x, &ws, form, xvec).unwrap_or_else(|| panic!("{name}: none"));
                    let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(shaders::trust(&src), shaders::Trust::LoopsBounded, "{name}");
                    validate(&name, &src);
                    count += 1;
                }
            }
        }
    }
    assert_eq!(count, 22 * 3 * 2 * 2);
}

#[test]
fn other_x_dtypes_forms_and_wrong_scales_are_refused() {
    let form = QuantGemmForm::Scalar;
    assert!(module_for(QuantFormat::Q8_0, DType::F64, &[DType::U8], form, false).is_none());
    let odd = QuantGemmForm::Coop { frag: 12, subgroup: 32 };
    assert!(module_for(QuantFormat::Q8_0, DType::F16, &[DType::U8], odd, true).is_none());
    let bad = module_for(QuantFormat::Int8Block { block_size: 32 }, DType::F32, &[DType::I8, DType::I32], form, true);
    assert!(matches!(bad, Some(Err(_))));
}
