//! Renders every decode GEMV variant of QuantMatMul (each format with each x dtype and each
//! weight dtype combination it takes, x read as vectors or element by element, column sums by
//! subgroups or by a tree) and validates it with naga.

use backend_api::op::QuantFormat;
use backend_api::DType;
use shaders::linalg::quant_vec::{module_for, QuantVecShape};

mod common;
use common::{quant_weight_dtypes as weight_dtypes, validate};

#[test]
fn every_quant_vec_variant_is_valid() {
    let mut count = 0;
    for f in QuantFormat::ALL {
        for ws in weight_dtypes(f) {
            for x in [DType::F32, DType::F16, DType::BF16] {
                // Rows, lanes and reduction vary together to keep the count small.
                for (i, (vec_x, subgroups)) in [(true, true), (false, false), (true, false)].into_iter().enumerate() {
                    let shape = QuantVecShape {
                        rows: [1, 8, 3][i],
                        lanes: [32, 32, 64][i],
                        columns: [4, 4, 1][i],
                        subgroups,
                        vec_x,
                    };
                    let name = format!("{} x {x} w {ws:?} {shape:?}", f.name());
                    let src = module_for(f, x, &ws, shape).unwrap_or_else(|| panic!("{name}: none"));
                    let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                    // Built without wgpu's loop bounding, with its bounds checks.
                    assert_eq!(shaders::trust(&src), shaders::Trust::LoopsBounded, "{name}");
                    validate(&name, &src);
                    count += 1;
                }
            }
        }
    }
    assert_eq!(count, 22 * 3 * 3);
}

#[test]
fn other_x_dtypes_shapes_and_wrong_scales_are_refused() {
    let shape = QuantVecShape { rows: 1, lanes: 32, columns: 4, subgroups: true, vec_x: true };
    assert!(module_for(QuantFormat::Q8_0, DType::F64, &[DType::U8], shape).is_none());
    assert!(module_for(QuantFormat::Q8_0, DType::F32, &[DType::U8], QuantVecShape { rows: 9, ..shape }).is_none());
    assert!(module_for(QuantFormat::Q8_0, DType::F32, &[DType::U8], QuantVecShape { lanes: 24, ..shape }).is_none());
    let bad = module_for(QuantFormat::Int8Block { block_size: 32 }, DType::F32, &[DType::I8, DType::I32], shape);
    assert!(matches!(bad, Some(Err(_))));
}

#[test]
fn scale_loads_follow_the_block_size() {
    let shape = QuantVecShape { rows: 2, lanes: 32, columns: 4, subgroups: false, vec_x: true };
    let src = |b: u32| {
        let f = QuantFormat::Int4Block { block_size: b };
        module_for(f, DType::F32, &[DType::U8, DType::F16], shape).unwrap().unwrap()
    };
    // One scale per item of 8, per group of 4, or per element; the block size is a constant.
    let whole = src(32);
    assert!(whole.contains("const SAME8: bool = true;") && whole.contains("k / 32u"));
    let fours = src(12);
    assert!(
        fours.contains("const SAME8: bool = false;") && fours.contains("vec4<f32>(ld_scale(n * p.srow + k / 12u))")
    );
    let odd = src(6);
    assert!(odd.contains("ld_scale(n * p.srow + (k + 3u) / 6u)"));
}
