//! Renders every implicit-GEMM convolution kernel (scalar tiles and the cooperative-matrix tiles
//! the lowering can pick) for every dtype, with and without a bias, and validates it with naga,
//! including its `ConvGemmParams` layout; the scalar ones masked (padding taps skipped) and not,
//! and the weight check that gates the unmasked ones.

use backend_api::{DType, ErrorKind};
use shaders::conv::gemm::{check_module, gemm_module, GemmKernel};
use shaders::linalg::{CoopShape, CoopTile, Tile};

mod common;
use common::validate;

fn kernels() -> Vec<GemmKernel> {
    let mut ks = vec![GemmKernel::Tiled(Tile::Small), GemmKernel::Tiled(Tile::Large)];
    for frag in [8, 16] {
        for subgroup in [32, 64] {
            for shape in [CoopShape::Small, CoopShape::Large] {
                ks.push(GemmKernel::Coop(CoopTile { frag, subgroup, shape }));
            }
        }
    }
    ks
}

#[test]
fn every_conv_gemm_variant_is_valid() {
    let mut count = 0;
    for k in kernels() {
        for d in DType::ALL {
            for (bias, masked) in [(false, false), (true, false), (false, true), (true, true)] {
                // aligned with the bias, not without: both addressings are validated
                let name = format!("{k:?} {d:?} bias {bias} masked {masked}");
                let coop = matches!(k, GemmKernel::Coop(_));
                match gemm_module(k, d, bias, masked, bias) {
                    Ok(src) => {
                        assert!(src.contains("struct ConvGemmParams") && src.contains("fn index_b"), "{name}");
                        assert_eq!(src.contains("var<workgroup> sm:"), masked, "{name}");
                        validate(&name, &src);
                        count += 1;
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
                        let float = matches!(d, DType::F32 | DType::F16 | DType::BF16);
                        assert!(!float || (coop && (masked || d == DType::F32)), "{name}: {e}");
                    }
                }
            }
        }
    }
    // 2 scalar tiles x 3 dtypes x masked or not + 8 cooperative tiles x 2 dtypes, each with and
    // without a bias
    assert_eq!(count, 2 * (2 * 3 * 2 + 8 * 2));
}

#[test]
fn the_weight_check_renders_for_the_float_dtypes() {
    for d in DType::ALL {
        match check_module(d) {
            Ok(src) => {
                assert!(matches!(d, DType::F32 | DType::F16 | DType::BF16), "{d:?}");
                validate(&format!("check {d:?}"), &src);
            }
            Err(e) => assert_eq!(e.kind(), ErrorKind::Unsupported, "{d:?}: {e}"),
        }
    }
}

#[test]
fn the_dense_kernels_keep_their_params_and_index() {
    use shaders::linalg::{module, Epilogue, Variant};
    let src = module(DType::F32, DType::F32, Variant::Tiled(Tile::Small), Epilogue::Store).unwrap().unwrap();
    assert!(src.contains("var<uniform> p: GemmParams;") && !src.contains("ConvGeom"));
    assert!(src.contains("base + gk * p.b_rs + gj * p.b_cs"));
}
