//! Renders every implicit-GEMM convolution kernel (scalar tiles and the cooperative-matrix tiles
//! the lowering can pick) for every dtype, with and without a bias, and validates it with naga,
//! including its `ConvGemmParams` layout.

use backend_api::{DType, ErrorKind};
use shaders::conv::gemm::{gemm_module, GemmKernel};
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
            for bias in [false, true] {
                let name = format!("{k:?} {d:?} bias {bias}");
                match gemm_module(k, d, bias) {
                    Ok(src) => {
                        assert!(src.contains("struct ConvGemmParams") && src.contains("fn index_b"), "{name}");
                        validate(&name, &src);
                        count += 1;
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
                        let coop = matches!(k, GemmKernel::Coop(_));
                        assert!(!matches!(d, DType::F16 | DType::BF16) && (coop || d != DType::F32), "{name}: {e}");
                    }
                }
            }
        }
    }
    // 2 scalar tiles x 3 dtypes + 8 cooperative tiles x 2 dtypes, each with and without a bias
    assert_eq!(count, 2 * (2 * 3 + 8 * 2));
}

#[test]
fn the_dense_kernels_keep_their_params_and_index() {
    use shaders::linalg::{module, Epilogue, Variant};
    let src = module(DType::F32, DType::F32, Variant::Tiled(Tile::Small), Epilogue::Store).unwrap().unwrap();
    assert!(src.contains("var<uniform> p: GemmParams;") && !src.contains("ConvGeom"));
    assert!(src.contains("base + gk * p.b_rs + gj * p.b_cs"));
}
