//! Renders every GroupedMatMul kernel (the grouping steps for each index dtype, the grouped form
//! of every GEMM variant) and validates it with naga.

use backend_api::DType;
use shaders::linalg::grouped::{count_module, grouped_module, place_module, rows_module, scan_module, tiles_module};
use shaders::linalg::{acc_dtype, CoopShape, CoopTile, CoopVecTile, GemvTile, Tile, Variant, VecTile};

mod common;
use common::validate;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::BF16, DType::F64];

#[test]
fn grouping_steps_are_valid_for_every_index_dtype() {
    for d in [DType::I32, DType::I64, DType::U32] {
        validate(&format!("grouped count {d:?}"), &count_module(d).unwrap());
        validate(&format!("grouped place {d:?}"), &place_module(d).unwrap());
    }
    assert!(count_module(DType::F32).is_err() && place_module(DType::I8).is_err());
    validate("grouped scan", &scan_module());
    validate("grouped tiles", &tiles_module());
    validate("grouped rows", &rows_module());
}

/// A sample of every kind of product variant the grouped lowering can pick.
fn variants() -> Vec<Variant> {
    let mut vs = vec![
        Variant::Tiled(Tile::Small),
        Variant::Tiled(Tile::Large),
        Variant::Skinny { nfast: true },
        Variant::Skinny { nfast: false },
        Variant::Gemv(GemvTile::new(4, 1)),
        Variant::Gemv(GemvTile { subgroups: true, ..GemvTile::new(64, 1) }),
        Variant::TiledVec(VecTile {
            rm: 4,
            rn: 4,
            bk: 32,
            a_kfast: true,
            b_nfast: true,
            a_rows: false,
            prefetch: true,
            buffers: 1,
        }),
    ];
    for shape in [CoopShape::Small, CoopShape::Large, CoopShape::Huge] {
        let t = CoopTile { frag: 16, subgroup: 32, shape };
        vs.push(Variant::Coop(t));
        vs.push(Variant::CoopVec(CoopVecTile { tile: t, double_buffer: false, bk: 32 }));
        vs.push(Variant::CoopVec(CoopVecTile { tile: t, double_buffer: true, bk: 32 }));
    }
    vs
}

#[test]
fn every_grouped_product_is_valid_trusted_and_reads_the_offset_table() {
    let mut count = 0;
    for d in FLOATS {
        for v in variants() {
            for out in [d, acc_dtype(d)] {
                let Some(src) = grouped_module(d, out, v) else { continue };
                let src = src.unwrap_or_else(|e| panic!("{d:?} {v:?}: {e}"));
                assert!(shaders::is_trusted(&src), "{d:?} {v:?}");
                assert!(src.contains("fn dense_batch_offsets(") && src.contains("boff["), "{d:?} {v:?}");
                validate(&format!("grouped {d:?} -> {out:?} {v:?}"), &src);
                count += 1;
            }
        }
    }
    assert!(count >= 40, "only {count} grouped variants rendered");
}
