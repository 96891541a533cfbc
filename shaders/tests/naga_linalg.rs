//! Renders every linalg-family variant the lowering can produce and validates it with naga.

use backend_api::op::UnaryOp;
use backend_api::DType;
use shaders::linalg::{
    acc_dtype, module, permute_module, splitk_module, CoopShape, CoopTile, CoopVecTile, Epilogue, GemvTile, Tile,
    Variant, VecTile,
};

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

/// The wide skinny shapes the lowering can pick: every row count, the column extremes and a
/// middle one, every unroll, both reductions and both layouts of B.
fn gemv_tiles() -> Vec<GemvTile> {
    let mut tiles = Vec::new();
    for rows in [1, 2, 4] {
        for ct in [1, 2, 4, 64] {
            for kdot in [false, true] {
                for subgroups in [false, true] {
                    tiles.push(GemvTile { subgroups, kdot, ..GemvTile::new(ct, rows) });
                    if kdot {
                        tiles.push(GemvTile { subgroups, kdot, apairs: true, ..GemvTile::new(ct, rows) });
                    }
                }
            }
        }
        for unroll in [1, 2, 16] {
            tiles.push(GemvTile { unroll, ..GemvTile::new(8, rows) });
            tiles.push(GemvTile { unroll, kdot: true, subgroups: true, ..GemvTile::new(8, rows) });
        }
    }
    tiles
}

#[test]
fn every_gemv_variant_is_valid() {
    for d in [DType::F32, DType::F16, DType::BF16] {
        for t in gemv_tiles() {
            let v = Variant::Gemv(t);
            for epi in epilogues() {
                if let Some(src) = module(d, d, v, epi) {
                    let src = src.unwrap_or_else(|e| panic!("{d:?} {v:?} {epi:?}: {e}"));
                    validate(&format!("linalg {d:?} {v:?} {epi:?}"), &src);
                }
            }
            let src = module(d, acc_dtype(d), v, Epilogue::Store).expect("partial variant").expect("renders");
            validate(&format!("linalg partial {d:?} {v:?}"), &src);
            assert!(shaders::is_trusted(&src), "{d:?} {v:?}");
            let file = if t.kdot { "linalg_gemv_dot.wgsl" } else { "linalg_gemv.wgsl" };
            assert_eq!(shaders::kernel_file(&src), Some(file));
            assert_eq!(src.contains("subgroupShuffleXor"), t.subgroups, "{d:?} {v:?}");
            // A is read in pairs only where its elements share words.
            assert_eq!(src.contains("a_pair(off.x"), t.apairs && d != DType::F32, "{d:?} {v:?}");
            // Columns are stored in pairs wherever the K-contiguous kernel has two per workgroup.
            assert_eq!(src.contains("store2(obase, off.z"), t.kdot && t.ct >= 2, "{d:?} {v:?}");
        }
    }
    // F64 (no 16-byte vector of 4) and unsupported shapes do not render.
    let t = GemvTile::new(2, 1);
    assert!(module(DType::F64, DType::F64, Variant::Gemv(t), Epilogue::Store).is_none());
    let odd = GemvTile::new(3, 1);
    assert!(module(DType::F32, DType::F32, Variant::Gemv(odd), Epilogue::Store).is_none());
    let tall = GemvTile::new(2, 8);
    assert!(module(DType::F32, DType::F32, Variant::Gemv(tall), Epilogue::Store).is_none());
    let unroll3 = GemvTile { unroll: 3, ..GemvTile::new(2, 1) };
    assert!(module(DType::F32, DType::F32, Variant::Gemv(unroll3), Epilogue::Store).is_none());
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

/// The cooperative-matrix configurations the lowering can pick: both fragment sizes naga writes,
/// every tile shape, and subgroups of 32 and 64.
fn coop_tiles() -> Vec<CoopTile> {
    let mut tiles = Vec::new();
    for frag in [8, 16] {
        for subgroup in [32, 64] {
            for shape in CoopShape::ALL {
                tiles.push(CoopTile { frag, subgroup, shape });
            }
        }
    }
    tiles
}

/// Every vector-load form of tile `t`: each K step and buffering.
fn coop_vec_tiles(t: CoopTile) -> Vec<CoopVecTile> {
    let mut vs = Vec::new();
    for bk in [32, 64] {
        for double_buffer in [false, true] {
            vs.push(CoopVecTile { tile: t, double_buffer, bk });
        }
    }
    vs
}

/// Every cooperative variant: element pairs, and vector loads single- and double-buffered.
fn coop_variants() -> Vec<Variant> {
    let mut vs = Vec::new();
    for t in coop_tiles() {
        vs.push(Variant::Coop(t));
        vs.extend(coop_vec_tiles(t).into_iter().map(Variant::CoopVec));
    }
    vs
}

#[test]
fn coop_vec_kernels_are_named_by_their_file_and_fit() {
    for t in coop_tiles() {
        let single = CoopVecTile::cvt(t, false);
        let src = module(DType::F16, DType::F16, Variant::CoopVec(single), Epilogue::Store).unwrap().unwrap();
        assert_eq!(shaders::kernel_file(&src), Some("linalg_coop_vec.wgsl"));
        assert!(shaders::is_trusted(&src));
        // One buffer takes what the element-pair kernel takes; two fit 48 KiB.
        assert_eq!(single.workgroup_bytes(), t.workgroup_bytes());
        let double = CoopVecTile { double_buffer: true, ..single };
        if t.shape != CoopShape::Huge {
            assert!(double.workgroup_bytes() <= 49152, "{double:?}: {}", double.workgroup_bytes());
        }
        let plain = module(DType::F16, DType::F16, Variant::Coop(t), Epilogue::Store).unwrap().unwrap();
        assert_eq!(shaders::kernel_file(&plain), Some("linalg_coop.wgsl"));
    }
}

#[test]
fn every_coop_variant_is_valid() {
    for v in coop_variants() {
        // Every epilogue on the element-pair and default vector kernels; the epilogue code is
        // shared, so the other K steps and bufferings take two (validation is slow).
        let full = match v {
            Variant::CoopVec(c) => c == CoopVecTile::cvt(c.tile, c.double_buffer),
            _ => true,
        };
        let few = [Epilogue::Store, Epilogue::BiasAct(Some(UnaryOp::Gelu))];
        let epis = if full { epilogues() } else { few.to_vec() };
        for epi in epis {
            if let Some(src) = module(DType::F16, DType::F16, v, epi) {
                let src = src.unwrap_or_else(|e| panic!("{v:?} {epi:?}: {e}"));
                validate(&format!("linalg coop {v:?} {epi:?}"), &src);
            }
        }
        let src = module(DType::F16, DType::F32, v, Epilogue::Store).expect("partial variant").expect("renders");
        validate(&format!("linalg coop partial {v:?}"), &src);
    }
}

#[test]
fn coop_is_f16_only_and_naga_sized() {
    let t = CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Large };
    for d in [DType::F32, DType::BF16, DType::F64] {
        assert!(module(d, d, Variant::Coop(t), Epilogue::Store).is_none(), "{d:?}");
        for v in coop_vec_tiles(t) {
            // The vector kernel rounds F32/BF16 to f16 (the reduced-precision option); no F64.
            let renders = module(d, d, Variant::CoopVec(v), Epilogue::Store).is_some();
            assert_eq!(renders, d != DType::F64, "{d:?} {v:?}");
        }
    }
    let odd = CoopTile { frag: 32, subgroup: 32, shape: CoopShape::Large };
    assert!(module(DType::F16, DType::F16, Variant::Coop(odd), Epilogue::Store).is_none());
}

#[test]
fn coop_small_tile_fits_default_workgroup_memory() {
    for frag in [8, 16] {
        let t = CoopTile { frag, subgroup: 32, shape: CoopShape::Small };
        assert!(t.workgroup_bytes() <= 16384, "{t:?}: {}", t.workgroup_bytes());
        assert_eq!(t.block(), (64, 64));
        let block = |shape| CoopTile { shape, ..t }.block();
        assert_eq!(block(CoopShape::Mid), (128, 64));
        assert_eq!(block(CoopShape::Large), (128, 128));
        assert_eq!(block(CoopShape::Wide), (128, 128));
        assert_eq!(block(CoopShape::Huge), (128, 256));
        assert_eq!(CoopTile { shape: CoopShape::Wide, ..t }.threads(), 128);
    }
}

/// lavapipe has no cooperative matrices, so no pipeline of this kernel is ever built in CI: the
/// SPIR-V writer (what wgpu's Vulkan backend runs) must accept it too, with and without the
/// bounds checks the kernel is built without.
#[test]
fn every_coop_variant_writes_spirv() {
    for t in coop_variants() {
        for epi in [Epilogue::Store, Epilogue::BiasAct(Some(UnaryOp::Tanh))] {
            let src = module(DType::F16, DType::F16, t, epi).expect("coop").expect("renders");
            write_spirv(&format!("{t:?} {epi:?}"), &src);
        }
    }
}

/// Writes `src` as SPIR-V with and without bounds checks; panics naming `what` on failure.
fn write_spirv(what: &str, src: &str) {
    use naga::back::spv;
    use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
    let m = naga::front::wgsl::parse_str(src).expect("parses");
    let caps = naga::valid::Capabilities::all();
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps).validate(&m).expect("valid");
    for policy in [BoundsCheckPolicy::Unchecked, BoundsCheckPolicy::Restrict] {
        let opts = spv::Options {
            lang_version: (1, 3),
            bounds_check_policies: BoundsCheckPolicies {
                index: policy,
                buffer: policy,
                image_load: policy,
                binding_array: policy,
            },
            ..spv::Options::default()
        };
        if let Err(e) = spv::write_vec(&m, &info, &opts, None) {
            panic!("{what} {policy:?}: {e:?}");
        }
    }
}

/// The reduced-precision option: F32 and BF16 operands rounded to f16 while staged, with every
/// epilogue and the f32 partial sums, every shape, K step and buffering; valid, trusted, and
/// written as SPIR-V.
#[test]
fn vector_staging_renders_f32_and_bf16_operands() {
    for d in [DType::F32, DType::BF16] {
        for shape in CoopShape::ALL {
            let tile = CoopTile { frag: 16, subgroup: 32, shape };
            for c in coop_vec_tiles(tile) {
                let v = Variant::CoopVec(c);
                let epis = if c == CoopVecTile::cvt(tile, true) { epilogues() } else { vec![Epilogue::Store] };
                for epi in epis {
                    if let Some(src) = module(d, d, v, epi) {
                        let src = src.unwrap_or_else(|e| panic!("{d:?} {v:?} {epi:?}: {e}"));
                        validate(&format!("linalg coop vec {d:?} {v:?} {epi:?}"), &src);
                    }
                }
                let src = module(d, DType::F32, v, Epilogue::Store).expect("partial").expect("renders");
                assert!(shaders::is_trusted(&src));
                assert_eq!(shaders::kernel_file(&src), Some("linalg_coop_vec.wgsl"));
                write_spirv(&format!("{d:?} {v:?}"), &src);
            }
        }
    }
}

/// K steps and buffers against 48 KiB of workgroup memory (an H200's): which forms the
/// lowering can choose there.
#[test]
fn coop_vec_workgroup_memory() {
    let bytes = |shape, double_buffer, bk| {
        CoopVecTile { tile: CoopTile { frag: 16, subgroup: 32, shape }, double_buffer, bk }.workgroup_bytes()
    };
    // 128 x 128: double-buffered with a K step of 32; with 64, one buffer.
    assert!(bytes(CoopShape::Large, true, 32) <= 49152);
    assert!(bytes(CoopShape::Large, false, 64) <= 49152 && bytes(CoopShape::Large, true, 64) > 49152);
    // 128 x 256: one buffer with a K step of 32, nothing with 64.
    assert!(bytes(CoopShape::Huge, false, 32) <= 49152 && bytes(CoopShape::Huge, true, 32) > 49152);
    assert!(bytes(CoopShape::Huge, false, 64) > 49152);
}

#[test]
fn reviewed_gemm_kernels_are_trusted_and_others_not() {
    let coop = Variant::Coop(CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Large });
    for v in VARIANTS.into_iter().chain([coop]) {
        let d = DType::F16;
        let plain = module(d, d, v, Epilogue::Store).expect("renders").expect("renders");
        assert!(shaders::is_trusted(&plain), "{v:?}");
        let gelu = module(d, d, v, Epilogue::BiasAct(Some(UnaryOp::Gelu))).expect("renders").expect("renders");
        assert!(shaders::is_trusted(&gelu), "{v:?}");
        // Activations outside the reviewed list keep the runtime checks.
        let sin = module(d, d, v, Epilogue::BiasAct(Some(UnaryOp::Sin))).expect("renders").expect("renders");
        assert!(!shaders::is_trusted(&sin), "{v:?}");
    }
    assert!(shaders::is_trusted(&splitk_module(DType::F32, Epilogue::Store).expect("renders").expect("renders")));
    assert!(!shaders::is_trusted(&permute_module(DType::F32).expect("renders")));
}

/// Every vector-load tiled kernel the lowering or an override can pick: both row and column
/// tiles, every K step, every operand layout and A staging, single- and double-buffered, with
/// and without prefetch.
fn vec_tiles() -> Vec<VecTile> {
    let mut tiles = Vec::new();
    for (buffers, prefetch) in [(1, true), (2, true), (1, false), (2, false)] {
        for rm in [4, 8] {
            for rn in [4, 8] {
                for bk in [8, 16, 32] {
                    for (a_kfast, a_rows) in [(false, false), (true, false), (true, true)] {
                        for b_nfast in [false, true] {
                            tiles.push(VecTile { rm, rn, bk, a_kfast, b_nfast, a_rows, prefetch, buffers });
                        }
                    }
                }
            }
        }
    }
    tiles
}

#[test]
fn every_tiled_vec_variant_is_valid_and_trusted() {
    let mut rendered = 0;
    for t in vec_tiles() {
        let v = Variant::TiledVec(t);
        let Some(src) = module(DType::F32, DType::F32, v, Epilogue::Store) else {
            // Only tiles whose threads stage whole vectors render: 64 rows or columns with BK 8.
            assert!(!t.renderable() && (t.rm == 4 || t.rn == 4) && t.bk == 8, "{t:?}");
            continue;
        };
        let src = src.unwrap_or_else(|e| panic!("{t:?}: {e}"));
        validate(&format!("linalg vec {t:?}"), &src);
        assert!(shaders::is_trusted(&src), "{t:?}");
        assert_eq!(shaders::kernel_file(&src), Some("linalg_tiled_vec.wgsl"));
        let epi = Epilogue::BiasAct(Some(UnaryOp::Gelu));
        let fused = module(DType::F32, DType::F32, v, epi).expect("fused").expect("renders");
        validate(&format!("linalg vec {t:?} {epi:?}"), &fused);
        assert!(shaders::is_trusted(&fused), "{t:?}");
        rendered += 1;
    }
    assert_eq!(rendered, 216);
    // Every epilogue on the default tile; activations outside the reviewed list keep the checks.
    let t = VecTile { rm: 8, rn: 8, bk: 16, a_kfast: true, b_nfast: true, a_rows: false, prefetch: true, buffers: 2 };
    for epi in epilogues() {
        if let Some(src) = module(DType::F32, DType::F32, Variant::TiledVec(t), epi) {
            let src = src.unwrap_or_else(|e| panic!("{epi:?}: {e}"));
            validate(&format!("linalg vec {epi:?}"), &src);
            assert_eq!(shaders::is_trusted(&src), shaders::linalg::trusted_epilogue(epi), "{epi:?}");
        }
    }
}

#[test]
fn tiled_vec_is_f32_only_and_fits_h200_workgroup_memory() {
    let t = VecTile { rm: 8, rn: 8, bk: 16, a_kfast: true, b_nfast: true, a_rows: false, prefetch: true, buffers: 2 };
    for d in [DType::F16, DType::BF16, DType::F64] {
        assert!(module(d, d, Variant::TiledVec(t), Epilogue::Store).is_none(), "{d:?}");
    }
    // Double-buffered up to BK 16, single-buffered up to BK 32.
    for t in vec_tiles().into_iter().filter(|t| t.renderable() && t.bk * t.buffers <= 32) {
        assert!(t.workgroup_bytes() <= 49152, "{t:?}: {}", t.workgroup_bytes());
    }
    assert_eq!(t.workgroup_bytes(), 2 * 16 * (33 + 33) * 16);
    assert_eq!(VecTile { buffers: 1, ..t }.workgroup_bytes(), 16 * (33 + 33) * 16);
    let odd = VecTile { rm: 12, ..t };
    assert!(module(DType::F32, DType::F32, Variant::TiledVec(odd), Epilogue::Store).is_none());
    assert_eq!(VecTile { a_rows: true, ..t }.workgroup_bytes(), 2 * (128 * 4 + 16 * 33) * 16);
    let odd = VecTile { a_rows: true, a_kfast: false, ..t };
    assert!(module(DType::F32, DType::F32, Variant::TiledVec(odd), Epilogue::Store).is_none());
    let odd = VecTile { buffers: 3, ..t };
    assert!(module(DType::F32, DType::F32, Variant::TiledVec(odd), Epilogue::Store).is_none());
}
