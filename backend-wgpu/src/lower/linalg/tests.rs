//! Variant choice, headroom and lowering of the GEMM family.

use super::*;
use shaders::linalg::GemvTile;
use shaders::linalg::{CoopShape, CoopTile, CoopVecTile};
use wgpu::wgt::{CooperativeMatrixProperties, CooperativeScalarType};

fn plan(ld: &[usize], rd: &[usize], at: &DotGeneralAttrs) -> DotPlan {
    plan_dot_general(ld, rd, at).unwrap()
}

fn attrs(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotGeneralAttrs {
    DotGeneralAttrs {
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
    }
}

#[test]
fn plain_matmul_is_a_view() {
    let p = plan(&[3, 4], &[4, 5], &attrs(&[], &[], &[1], &[0]));
    assert_eq!((p.m, p.n, p.k), (3, 5, 4));
    assert_eq!(p.lhs.view, Some((vec![], 4, 1)));
    assert_eq!(p.rhs.view, Some((vec![], 5, 1)));
}

#[test]
fn transposed_operands_are_views() {
    // lhs [K, M] contracted on axis 0, rhs [N, K] contracted on axis 1: A^T · B^T.
    let p = plan(&[4, 3], &[5, 4], &attrs(&[], &[], &[0], &[1]));
    assert_eq!((p.m, p.n, p.k), (3, 5, 4));
    assert_eq!(p.lhs.view, Some((vec![], 1, 3)));
    assert_eq!(p.rhs.view, Some((vec![], 1, 4)));
}

#[test]
fn batch_in_the_middle() {
    // lhs [M=2, B=3, K=4], rhs [B=3, K=4, N=5]: batch strides follow each operand's layout.
    let p = plan(&[2, 3, 4], &[3, 4, 5], &attrs(&[1], &[0], &[2], &[1]));
    assert_eq!(p.batch_dims, vec![3]);
    assert_eq!((p.m, p.n, p.k), (2, 5, 4));
    assert_eq!(p.lhs.view, Some((vec![4], 12, 1)));
    assert_eq!(p.rhs.view, Some((vec![20], 5, 1)));
    assert_eq!(p.lhs.perm, vec![1, 0, 2]);
    assert_eq!(p.rhs.perm, vec![0, 1, 2]);
}

#[test]
fn multi_axis_groups_merge_only_in_memory_order() {
    // Contracting axes (1, 2) of [2, 3, 4] merge; (2, 1) do not and need a copy.
    let ok = plan(&[2, 3, 4], &[3, 4, 6], &attrs(&[], &[], &[1, 2], &[0, 1]));
    assert_eq!((ok.m, ok.n, ok.k), (2, 6, 12));
    assert_eq!(ok.lhs.view, Some((vec![], 12, 1)));
    assert_eq!(ok.rhs.view, Some((vec![], 6, 1)));
    let swapped = plan(&[2, 3, 4], &[4, 3, 6], &attrs(&[], &[], &[2, 1], &[0, 1]));
    assert_eq!(swapped.lhs.view, None);
    assert_eq!(swapped.lhs.perm, vec![0, 2, 1]);
    assert_eq!(swapped.lhs.split, (0, 1));
    assert_eq!(swapped.rhs.view, Some((vec![], 6, 1)));
}

#[test]
fn free_axes_split_by_a_contracting_axis_need_a_copy() {
    // lhs [2, 4, 3] with contract axis 1: free axes 0 and 2 are not adjacent in memory.
    let p = plan(&[2, 4, 3], &[4, 5], &attrs(&[], &[], &[1], &[0]));
    assert_eq!((p.m, p.n, p.k), (6, 5, 4));
    assert_eq!(p.lhs.view, None);
    assert_eq!(p.lhs.perm, vec![0, 2, 1]);
    let w = Window { buf: crate::lower::Buf::Temp(0), offset: 0, bytes: 96 };
    let c = contiguous_operand(w, &[2, 4, 3], &p.lhs).unwrap();
    assert_eq!((c.rs, c.cs), (4, 1));
}

#[test]
fn outer_product_and_unit_axes() {
    // No contracting axes: K = 1, any strides.
    let p = plan(&[3], &[5], &attrs(&[], &[], &[], &[]));
    assert_eq!((p.m, p.n, p.k), (3, 5, 1));
    assert!(p.lhs.view.is_some() && p.rhs.view.is_some());
    // Unit axes never block a merge.
    let q = plan(&[2, 1, 3, 4], &[4, 5], &attrs(&[], &[], &[3], &[0]));
    assert_eq!(q.lhs.view, Some((vec![], 4, 1)));
    assert_eq!(q.m, 6);
}

#[test]
fn split_k_only_for_few_workgroups_and_long_k() {
    let skinny = Variant::Skinny { nfast: true };
    let tiled = Variant::Tiled(Tile::Small);
    assert_eq!(choose_split(skinny, 200, 2, 210), (1, 200));
    assert_eq!(choose_split(skinny, 1100, 2, 210), (4, 288));
    assert_eq!(choose_split(skinny, 4096, 64, 4096), (16, 256));
    assert_eq!(choose_split(skinny, 0, 1, 10), (1, 0));
    assert_eq!(choose_split(tiled, 1030, 4, 4225), (2, 528));
    assert_eq!(choose_split(tiled, 4096, 1024, 1 << 24), (1, 4096));
    // Every split is non-empty.
    for k in [513, 1000, 4097, 100_000] {
        let (s, kc) = choose_split(skinny, k, 1, 1);
        assert!(kc * (s - 1) < k && kc * s >= k, "k {k}: {s} x {kc}");
    }
}

#[test]
fn contracting_dim_zero() {
    let p = plan(&[3, 0], &[0, 5], &attrs(&[], &[], &[1], &[0]));
    assert_eq!((p.m, p.n, p.k), (3, 5, 0));
    assert!(p.lhs.view.is_some() && p.rhs.view.is_some());
}

pub(super) fn coop_config(
    size: u32,
    ab: CooperativeScalarType,
    cr: CooperativeScalarType,
) -> CooperativeMatrixProperties {
    CooperativeMatrixProperties {
        m_size: size,
        n_size: size,
        k_size: size,
        ab_type: ab,
        cr_type: cr,
        saturating_accumulation: false,
    }
}

/// A device like an NVIDIA GPU: subgroups of 32, f16, 48 KiB of workgroup memory, and the
/// cooperative configurations `coop`.
pub(super) fn coop_caps(coop: Vec<CooperativeMatrixProperties>) -> DeviceCaps {
    let mut caps = DeviceCaps::for_tests();
    caps.subgroups = Some(crate::device::SubgroupSizes { min: 32, max: 32 });
    caps.f16 = true;
    caps.limits.max_compute_workgroup_storage_size = 49152;
    caps.cooperative_matrix = coop;
    caps
}

pub(super) fn gemm_of(dtype: DType, m: usize, n: usize, k: usize) -> Gemm {
    let w = Window { buf: crate::lower::Buf::In(0), offset: 0, bytes: 0 };
    let s = |rs, cs| Strided { window: w, batch: vec![], rs, cs };
    Gemm { dtype, batch_dims: vec![], m, n, k, a: s(k, 1), b: s(n, 1), bias: None }
}

#[test]
fn f16_uses_the_largest_reported_f16_f32_square_fragment() {
    use CooperativeScalarType::{F16, F32};
    let caps = coop_caps(vec![coop_config(8, F16, F32), coop_config(16, F16, F32), coop_config(16, F16, F16)]);
    let big = choose_variant(&caps, &gemm_of(DType::F16, 4096, 4096, 4096), 1).unwrap();
    // 4096³: 128 x 256 tiles, single-buffered (two buffers exceed 48 KiB).
    let big_tile = CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Huge };
    assert_eq!(big, Variant::CoopVec(CoopVecTile::cvt(big_tile, false)));
    let ragged = choose_variant(&caps, &gemm_of(DType::F16, 37, 45, 19), 1).unwrap();
    assert_eq!(ragged, Variant::Coop(CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Small }));
    // Few rows stay on the skinny kernel; other dtypes on the tiled one.
    assert!(matches!(
        choose_variant(&caps, &gemm_of(DType::F16, 1, 4096, 4096), 1).unwrap(),
        Variant::Skinny { .. } | Variant::Gemv(_)
    ));
    for d in [DType::F32, DType::BF16, DType::F64] {
        assert!(matches!(choose_variant(&caps, &gemm_of(d, 256, 256, 256), 1).unwrap(), Variant::Tiled(_)), "{d:?}");
    }
    // Only an 8x8 configuration: 8x8 fragments.
    let eight = coop_caps(vec![coop_config(8, F16, F32)]);
    let v = choose_variant(&eight, &gemm_of(DType::F16, 64, 64, 60), 1).unwrap();
    assert_eq!(v, Variant::Coop(CoopTile { frag: 8, subgroup: 32, shape: CoopShape::Small }));
}

#[test]
fn f16_falls_back_to_the_tiled_kernel_without_a_usable_configuration() {
    use CooperativeScalarType::{F16, F32};
    let g = gemm_of(DType::F16, 300, 300, 300);
    let tiled = |caps: &DeviceCaps| matches!(choose_variant(caps, &g, 1).unwrap(), Variant::Tiled(_));
    // No cooperative matrix (lavapipe), f16 accumulators only, fragment sizes naga cannot write.
    assert!(tiled(&coop_caps(vec![])));
    assert!(tiled(&coop_caps(vec![coop_config(16, F16, F16), coop_config(32, F16, F32)])));
    assert!(tiled(&coop_caps(vec![coop_config(16, F32, F32)])));
    // No f16 kernels, or several subgroup sizes.
    let mut no_f16 = coop_caps(vec![coop_config(16, F16, F32)]);
    no_f16.f16 = false;
    assert!(tiled(&no_f16));
    let mut varying = coop_caps(vec![coop_config(16, F16, F32)]);
    varying.subgroups = Some(crate::device::SubgroupSizes { min: 32, max: 64 });
    assert!(tiled(&varying));
    // WebGPU's default 16 KiB of workgroup memory: the small coop tile only.
    let mut small_mem = coop_caps(vec![coop_config(16, F16, F32)]);
    small_mem.limits.max_compute_workgroup_storage_size = 16384;
    let v = choose_variant(&small_mem, &gemm_of(DType::F16, 4096, 4096, 4096), 1).unwrap();
    let small = CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Small };
    assert_eq!(v, Variant::CoopVec(CoopVecTile::cvt(small, false)));
}

#[test]
fn f16_vector_loads_only_for_whole_aligned_vectors() {
    use CooperativeScalarType::{F16, F32};
    let caps = coop_caps(vec![coop_config(16, F16, F32)]);
    let pick = |g: &Gemm| choose_variant(&caps, g, 1).unwrap();
    let large = CoopTile { frag: 16, subgroup: 32, shape: CoopShape::Large };
    // 2048³: too few 128 x 256 tiles; 128 x 128 with K step 64 in one buffer.
    let g = gemm_of(DType::F16, 2048, 2048, 2048);
    assert_eq!(pick(&g), Variant::CoopVec(CoopVecTile { tile: large, double_buffer: false, bk: 64 }));
    // K or N not a multiple of 8, a transposed operand, a strided or unaligned batch, or a
    // window that is not whole vectors: element pairs.
    assert_eq!(pick(&gemm_of(DType::F16, 2048, 2048, 2044)), Variant::Coop(large));
    assert_eq!(pick(&gemm_of(DType::F16, 2048, 2044, 2048)), Variant::Coop(large));
    let mut at = gemm_of(DType::F16, 2048, 2048, 2048);
    (at.a.rs, at.a.cs) = (1, 2048);
    assert_eq!(pick(&at), Variant::Coop(large));
    let mut bt = gemm_of(DType::F16, 2048, 2048, 2048);
    (bt.b.rs, bt.b.cs) = (1, 2048);
    assert_eq!(pick(&bt), Variant::Coop(large));
    let mut batch = gemm_of(DType::F16, 2048, 2048, 2048);
    batch.batch_dims = vec![2];
    batch.a.batch = vec![2048 * 2048 + 4];
    batch.b.batch = vec![0];
    assert_eq!(choose_variant(&caps, &batch, 2).unwrap(), Variant::Coop(large));
    let mut window = gemm_of(DType::F16, 2048, 2048, 2048);
    window.b.window.bytes = 2048 * 2048 * 2 + 8;
    assert_eq!(pick(&window), Variant::Coop(large));
}

#[test]
fn few_rows_with_aligned_n_contiguous_weights_use_the_wide_skinny_kernel() {
    let caps = DeviceCaps::for_tests();
    let pick = |g: &Gemm, batch| choose_variant(&caps, g, batch).unwrap();
    let mut g = gemm_of(DType::F16, 1, 4096, 4096);
    g.b.window.bytes = 4096 * 4096 * 2;
    // 512 vectors of 8 columns: 2 per workgroup keeps 256 workgroups, and no split-K.
    assert_eq!(pick(&g, 1), Variant::Gemv(GemvTile::new(2, 1)));
    assert_eq!(choose_split(pick(&g, 1), 4096, 256, 4096), (1, 4096));
    let mut f = gemm_of(DType::F32, 1, 4096, 4096);
    f.b.window.bytes = 4096 * 4096 * 4;
    assert_eq!(pick(&f, 1), Variant::Gemv(GemvTile::new(4, 1)));
    // A 256-wide layer: K lanes limited to half of K.
    let mut s = gemm_of(DType::F32, 1, 256, 256);
    s.b.window.bytes = 256 * 256 * 4;
    assert_eq!(pick(&s, 1), Variant::Gemv(GemvTile::new(2, 1)));
    let mut r = gemm_of(DType::BF16, 3, 256, 256);
    r.b.window.bytes = 256 * 256 * 2;
    assert_eq!(pick(&r, 1), Variant::Gemv(GemvTile::new(2, 4)));
    // Not whole vectors, transposed B, F64, K = 0: the per-element skinny kernel.
    let skinny = |g: &Gemm| matches!(pick(g, 1), Variant::Skinny { .. });
    let mut odd = gemm_of(DType::F16, 1, 12, 64);
    odd.b.window.bytes = 12 * 64 * 2;
    assert!(skinny(&odd));
    let mut ragged_window = gemm_of(DType::F32, 1, 8, 3);
    ragged_window.b.window.bytes = 8 * 3 * 4 + 4;
    assert!(skinny(&ragged_window));
    let mut t = g.b.clone();
    (t.rs, t.cs) = (1, 4094);
    assert!(skinny(&Gemm { b: t, ..gemm_of(DType::F16, 1, 4096, 4096) }));
    assert!(skinny(&gemm_of(DType::F64, 1, 256, 256)));
    assert!(skinny(&gemm_of(DType::F32, 1, 256, 0)));
    let mut unaligned_batch = gemm_of(DType::F32, 1, 8, 3);
    unaligned_batch.b.batch = vec![26];
    unaligned_batch.batch_dims = vec![2];
    assert!(skinny(&unaligned_batch));
    // Few workgroups and a very long K: split.
    let tiny = Variant::Gemv(GemvTile::new(1, 1));
    assert_eq!(choose_split(tiny, 1 << 16, 4, 16), (16, 4096));
    assert_eq!(choose_split(tiny, 4000, 4, 16), (1, 4000));
}

#[test]
fn counters_near_32_bits_are_refused() {
    let near = usize::try_from(u32::MAX).unwrap() - 10;
    assert!(check_headroom(&gemm_of(DType::F32, 9, 9, 4096), 1, 4096).is_ok());
    assert!(check_headroom(&gemm_of(DType::F32, 9, 9, near), 1, near).is_err());
    assert!(check_headroom(&gemm_of(DType::F32, near, 1, 1), 1, 1).is_err());
    // The last split's range may reach past K.
    assert!(check_headroom(&gemm_of(DType::F32, 9, 9, 1 << 31), 3, 1 << 31).is_err());
}

/// The kernels of an F16 MatMul `[m, k] x [k, n]` lowered on `caps`.
fn lower_f16_matmul(caps: &DeviceCaps, m: usize, n: usize, k: usize) -> Vec<Kernel> {
    let op = |buf, dims| Operand::whole(buf, DType::F16, dims).unwrap();
    let (x, w) = (op(crate::lower::Buf::In(0), vec![m, k]), op(crate::lower::Buf::In(1), vec![k, n]));
    let out = op(crate::lower::Buf::Out(0), vec![m, n]);
    let mut b = Lower::new(caps, 1);
    matmul(&mut b, &x, &w, &out).unwrap();
    b.finish().kernels().into_iter().cloned().collect()
}

#[test]
fn f16_matmul_lowers_to_trusted_cooperative_kernels() {
    use CooperativeScalarType::{F16, F32};
    let caps = coop_caps(vec![coop_config(16, F16, F32)]);
    let uses_coop = |ks: &[Kernel]| ks.iter().any(|k| k.source.contains("coopMultiplyAdd"));
    let plain = lower_f16_matmul(&caps, 37, 45, 19);
    assert!(uses_coop(&plain));
    let is_vec = |ks: &[Kernel]| ks.iter().any(|k| shaders::kernel_file(&k.source) == Some("linalg_coop_vec.wgsl"));
    assert!(!is_vec(&plain));
    // Whole vectors (K and N multiples of 8): the vector-load kernel, also split over K.
    let vec = lower_f16_matmul(&caps, 40, 48, 24);
    assert!(uses_coop(&vec) && is_vec(&vec));
    assert!(shaders::is_trusted(&vec[vec.len() - 1].source));
    let vec_split = lower_f16_matmul(&caps, 65, 64, 4096);
    assert!(is_vec(&vec_split) && vec_split.iter().any(|k| k.source.contains("ld_part")));
    let product = plain.iter().find(|k| k.source.contains("coopMultiplyAdd")).unwrap();
    assert!(shaders::is_trusted(&product.source));
    // Few tiles and a long K: split-K partial sums, then the trusted reduction.
    let split = lower_f16_matmul(&caps, 65, 65, 4094);
    assert!(uses_coop(&split));
    assert!(split.iter().any(|k| k.source.contains("ld_part")));
    // Without cooperative matrices (lavapipe): the tiled kernel.
    assert!(!uses_coop(&lower_f16_matmul(&coop_caps(vec![]), 37, 45, 19)));
}

pub(super) fn h200_caps() -> DeviceCaps {
    use CooperativeScalarType::{F16, F32};
    coop_caps(vec![coop_config(16, F16, F32)])
}

#[test]
fn coop_defaults_and_overrides_pick_tiles_k_steps_and_buffers_where_they_fit() {
    let with = |pairs: &[&str]| {
        let mut caps = h200_caps();
        for p in pairs {
            caps.tuning.set_pair(p).unwrap();
        }
        caps
    };
    let tile = |shape| CoopTile { frag: 16, subgroup: 32, shape };
    let big = gemm_of(DType::F16, 4096, 4096, 4096);
    let pick = |caps: &DeviceCaps, g: &Gemm| choose_variant(caps, g, 1).unwrap();
    let vec = |shape, double_buffer, bk| Variant::CoopVec(CoopVecTile { tile: tile(shape), double_buffer, bk });
    // Default: 128 x 256, K step 32, one buffer (two exceed 48 KiB).
    assert_eq!(pick(&h200_caps(), &big), vec(CoopShape::Huge, false, 32));
    assert_eq!(pick(&with(&["coop.tile=large"]), &big), vec(CoopShape::Large, true, 32));
    assert_eq!(pick(&with(&["coop.tile=wide"]), &big), vec(CoopShape::Wide, true, 32));
    // K step 64: 128 x 256 does not fit even single-buffered, 128 x 128 single-buffered does.
    assert_eq!(pick(&with(&["coop.bk=64"]), &big), vec(CoopShape::Large, false, 64));
    // Both forced but together too big: the automatic choice (here the forced tile's).
    assert_eq!(pick(&with(&["coop.tile=huge", "coop.bk=64"]), &big), vec(CoopShape::Huge, false, 32));
    assert_eq!(pick(&with(&["coop.tile=large", "coop.buffers=1"]), &big), vec(CoopShape::Large, false, 32));
    // Two buffers where they do not fit: one.
    assert_eq!(pick(&with(&["coop.buffers=2"]), &big), vec(CoopShape::Huge, false, 32));
    // A device with 64 KiB of workgroup memory double-buffers the 128 x 256 tile.
    let mut roomy = h200_caps();
    roomy.limits.max_compute_workgroup_storage_size = 65536;
    assert_eq!(pick(&roomy, &big), vec(CoopShape::Huge, true, 32));
    // 128 invocations at most: neither 128 x 256 nor 128 x 128 (8 subgroups), the small tile.
    let mut few = h200_caps();
    few.limits.max_compute_invocations_per_workgroup = 128;
    assert_eq!(pick(&few, &big), vec(CoopShape::Small, true, 32));
    // The element-pair kernel on request; a layout without vectors ignores the staging.
    assert_eq!(pick(&with(&["coop.stage=pairs"]), &big), Variant::Coop(tile(CoopShape::Large)));
    assert_eq!(pick(&with(&["coop.stage=cvt"]), &big), vec(CoopShape::Huge, false, 32));
    let odd = gemm_of(DType::F16, 4096, 4096, 4090);
    assert_eq!(pick(&with(&["coop.stage=cvt"]), &odd), Variant::Coop(tile(CoopShape::Large)));
    // 1024³: the small tile, double-buffered.
    let mid = gemm_of(DType::F16, 1024, 1024, 1024);
    assert_eq!(pick(&h200_caps(), &mid), vec(CoopShape::Small, true, 32));
    assert_eq!(pick(&with(&["coop.tile=mid"]), &mid), vec(CoopShape::Mid, true, 32));
}

#[test]
fn coop_splits_k_only_for_few_workgroups_and_long_k() {
    let mut caps = h200_caps();
    let split = |caps: &DeviceCaps, m: usize, n: usize, k: usize| {
        let g = gemm_of(DType::F16, m, n, k);
        let v = choose_variant(caps, &g, 1).unwrap();
        let (bm, bn) = v.block(DType::F16);
        let wgs = m.div_ceil(bm as usize) * n.div_ceil(bn as usize);
        forced_split(&caps.tuning, v, k, m * n).unwrap_or_else(|| choose_split(v, k, wgs, m * n))
    };
    // 1024³: 256 workgroups of 64 x 64, no split.
    assert_eq!(split(&caps, 1024, 1024, 1024), (1, 1024));
    // 512 x 512 x 8192: 64 workgroups, two splits; a short K none.
    assert_eq!(split(&caps, 512, 512, 8192), (2, 4096));
    assert_eq!(split(&caps, 512, 512, 1536), (1, 1536));
    // coop.split forces the count, in ranges of whole 16 k.
    caps.tuning.set_pair("coop.split=1").unwrap();
    assert_eq!(split(&caps, 512, 512, 8192), (1, 8192));
    caps.tuning.set_pair("coop.split=2").unwrap();
    assert_eq!(split(&caps, 1024, 1024, 1024), (2, 512));
    caps.tuning.set_pair("coop.split=3").unwrap();
    let (s, kc) = split(&caps, 65, 64, 4104);
    assert!(kc % 16 == 0 && s * kc >= 4104 && (s - 1) * kc < 4104, "{s} x {kc}");
    assert_eq!(split(&caps, 64, 64, 24), (2, 16));
    // Other variants ignore it.
    assert_eq!(forced_split(&caps.tuning, Variant::Skinny { nfast: true }, 1030, 4096), None);
}

#[test]
fn reduced_precision_is_explicit_and_only_where_tensor_cores_and_vectors_exist() {
    let g32 = gemm_of(DType::F32, 512, 512, 512);
    let gb = gemm_of(DType::BF16, 512, 512, 512);
    let exact = h200_caps();
    // Exact by default: F32 and BF16 stay on the tiled kernel.
    assert!(matches!(choose_variant(&exact, &g32, 1).unwrap(), Variant::Tiled(_) | Variant::TiledVec(_)));
    assert!(matches!(choose_variant(&exact, &gb, 1).unwrap(), Variant::Tiled(_) | Variant::TiledVec(_)));
    let mut reduced = h200_caps();
    reduced.matmul_precision = crate::MatmulPrecision::F16;
    let vec = |v: Variant| matches!(v, Variant::CoopVec(_));
    assert!(vec(choose_variant(&reduced, &g32, 1).unwrap()));
    assert!(vec(choose_variant(&reduced, &gb, 1).unwrap()));
    // The F16 defaults apply: 128 x 256 tiles for 4096³.
    let big = choose_variant(&reduced, &gemm_of(DType::F32, 4096, 4096, 4096), 1).unwrap();
    assert_eq!(big, choose_variant(&reduced, &gemm_of(DType::F16, 4096, 4096, 4096), 1).unwrap());
    // Even the forced element-pair staging keeps the vector kernel, the only one that rounds.
    let mut forced = reduced.clone();
    forced.tuning.set_pair("coop.stage=pairs").unwrap();
    assert!(vec(choose_variant(&forced, &g32, 1).unwrap()));
    // Transposed operands, F64, F16 (unchanged), no tensor cores: as without the option.
    let mut t = gemm_of(DType::F32, 512, 512, 512);
    (t.b.rs, t.b.cs) = (1, 512);
    assert!(matches!(choose_variant(&reduced, &t, 1).unwrap(), Variant::Tiled(_) | Variant::TiledVec(_)));
    assert!(matches!(
        choose_variant(&reduced, &gemm_of(DType::F64, 512, 512, 512), 1).unwrap(),
        Variant::Tiled(_) | Variant::TiledVec(_)
    ));
    let f16 = gemm_of(DType::F16, 512, 512, 512);
    assert_eq!(choose_variant(&reduced, &f16, 1).unwrap(), choose_variant(&exact, &f16, 1).unwrap());
    let mut lavapipe = DeviceCaps::for_tests();
    lavapipe.matmul_precision = crate::MatmulPrecision::F16;
    assert!(matches!(choose_variant(&lavapipe, &g32, 1).unwrap(), Variant::Tiled(_) | Variant::TiledVec(_)));
}

/// A device like an H200: 48 KiB of workgroup memory, no cooperative matrices used for F32.
fn h200_f32_caps() -> DeviceCaps {
    let mut caps = DeviceCaps::for_tests();
    caps.limits.max_compute_workgroup_storage_size = 49152;
    caps
}

/// An F32 GEMM of dense row-major operands in windows that hold them exactly.
fn f32_gemm(m: usize, n: usize, k: usize) -> Gemm {
    let mut g = gemm_of(DType::F32, m, n, k);
    g.a.window.bytes = (m * k * 4) as u64;
    g.b.window.bytes = (k * n * 4) as u64;
    g
}

fn vec_tile(rm: u32, rn: u32, bk: u32, a_kfast: bool, b_nfast: bool) -> Variant {
    Variant::TiledVec(shaders::linalg::VecTile {
        rm,
        rn,
        bk,
        a_kfast,
        b_nfast,
        a_rows: false,
        prefetch: true,
        buffers: 1,
    })
}

#[test]
fn aligned_f32_layouts_use_the_vector_load_kernel() {
    let caps = h200_f32_caps();
    let pick = |g: &Gemm, batch| choose_variant(&caps, g, batch).unwrap();
    // Many 128 x 128 tiles (also ragged, or over a batch): the vector-load kernel's 128 x 128
    // tile, K step 32, one buffer (35.6 TFLOP/s at 4096³ on an H200, the scalar kernel 33.8);
    // mid sizes: 64 x 64 (25.5 at 1024³, ahead of 128-row tiles with or without split-K).
    assert_eq!(pick(&f32_gemm(4096, 4096, 4096), 1), vec_tile(8, 8, 32, true, true));
    assert_eq!(pick(&f32_gemm(4000, 4000, 4000), 1), vec_tile(8, 8, 32, true, true));
    assert_eq!(pick(&f32_gemm(1024, 1024, 64), 4), vec_tile(8, 8, 32, true, true));
    assert_eq!(pick(&f32_gemm(1024, 1024, 1024), 1), vec_tile(4, 4, 32, true, true));
    assert_eq!(pick(&f32_gemm(2048, 1024, 1024), 1), vec_tile(4, 4, 32, true, true));
    assert_eq!(pick(&f32_gemm(1024, 2048, 1024), 1), vec_tile(4, 4, 32, true, true));
    assert_eq!(pick(&f32_gemm(36, 44, 20), 1), vec_tile(4, 4, 32, true, true));
    // Transposed operands: A M-contiguous, B K-contiguous.
    let mut t = f32_gemm(64, 68, 20);
    (t.a.rs, t.a.cs) = (1, 64);
    (t.b.rs, t.b.cs) = (1, 20);
    assert_eq!(pick(&t, 1), vec_tile(4, 4, 32, false, false));
    // Batched with aligned batch strides and a broadcast operand.
    let mut b = f32_gemm(36, 44, 20);
    b.batch_dims = vec![3];
    b.a.batch = vec![36 * 20];
    b.b.batch = vec![0];
    assert_eq!(pick(&b, 3), vec_tile(4, 4, 32, true, true));
    // The 64 x 64 tiles of 1024³ need no split-K; few workgroups with a long K still split.
    let mid = pick(&f32_gemm(1024, 1024, 1024), 1);
    assert_eq!(choose_split(mid, 1024, 256, 1 << 20), (1, 1024));
    assert_eq!(choose_split(mid, 4096, 16, 1 << 16), (8, 512));
}

#[test]
fn misaligned_layouts_and_other_dtypes_keep_the_scalar_tiled_kernel() {
    let caps = h200_f32_caps();
    let scalar = |g: &Gemm, batch| matches!(choose_variant(&caps, g, batch).unwrap(), Variant::Tiled(_));
    // K (of a K-contiguous A) or N not a multiple of 4, K = 0.
    assert!(scalar(&f32_gemm(64, 64, 62), 1));
    assert!(scalar(&f32_gemm(64, 62, 64), 1));
    assert!(scalar(&f32_gemm(64, 64, 0), 1));
    // A row stride, a batch stride or a window that is not whole vectors; an empty window.
    let mut rs = f32_gemm(64, 64, 64);
    rs.a.rs = 66;
    assert!(scalar(&rs, 1));
    let mut bs = f32_gemm(64, 64, 64);
    bs.batch_dims = vec![2];
    (bs.a.batch, bs.b.batch) = (vec![64 * 64 + 2], vec![0]);
    assert!(scalar(&bs, 2));
    let mut w = f32_gemm(64, 64, 64);
    w.b.window.bytes += 8;
    assert!(scalar(&w, 1));
    let mut empty = f32_gemm(64, 64, 64);
    empty.a.window.bytes = 0;
    assert!(scalar(&empty, 1));
    // M-contiguous A with M not a multiple of 4; a strided (non-contiguous) operand.
    let mut at = f32_gemm(66, 64, 64);
    (at.a.rs, at.a.cs) = (1, 68);
    assert!(scalar(&at, 1));
    let mut strided = f32_gemm(64, 64, 64);
    strided.b.cs = 2;
    assert!(scalar(&strided, 1));
    // Other dtypes, WebGPU's default 16 KiB of workgroup memory, and `gemm.vec=off`.
    for d in [DType::F16, DType::BF16, DType::F64] {
        assert!(scalar(&gemm_of(d, 256, 256, 256), 1), "{d:?}");
    }
    let small = DeviceCaps::for_tests();
    assert!(matches!(choose_variant(&small, &f32_gemm(256, 256, 256), 1).unwrap(), Variant::Tiled(_)));
    let mut off = h200_f32_caps();
    off.tuning.gemm_vec = Some(false);
    assert_eq!(choose_variant(&off, &f32_gemm(4096, 4096, 4096), 1).unwrap(), Variant::Tiled(Tile::Large));
}

#[test]
fn tuning_forces_gemm_tiles_steps_and_splits_only_where_exact() {
    let with = |f: &dyn Fn(&mut crate::Tuning)| {
        let mut caps = h200_f32_caps();
        f(&mut caps.tuning);
        caps
    };
    let pick = |caps: &DeviceCaps, g: &Gemm| choose_variant(caps, g, 1).unwrap();
    let g = f32_gemm(68, 72, 36);
    let two = |v: Variant| match v {
        Variant::TiledVec(t) => Variant::TiledVec(shaders::linalg::VecTile { buffers: 2, ..t }),
        other => other,
    };
    assert_eq!(pick(&with(&|t| t.gemm_tile = Some((128, 64))), &g), vec_tile(8, 4, 32, true, true));
    assert_eq!(pick(&with(&|t| t.gemm_bk = Some(16)), &g), vec_tile(4, 4, 16, true, true));
    // BK 8 leaves 64-row tiles with partial vectors per thread: the forced tile keeps BK 32.
    assert_eq!(pick(&with(&|t| t.gemm_bk = Some(8)), &g), vec_tile(4, 4, 32, true, true));
    // 128 x 128 with BK 32 does not fit 48 KiB twice: two buffers then keep the default BK.
    let big = with(&|t| {
        t.gemm_tile = Some((128, 128));
        t.gemm_bk = Some(16);
        t.gemm_buffers = Some(2);
    });
    assert_eq!(pick(&big, &g), two(vec_tile(8, 8, 16, true, true)));
    let big32 = with(&|t| {
        t.gemm_tile = Some((128, 128));
        t.gemm_buffers = Some(2);
    });
    assert_eq!(pick(&big32, &g), vec_tile(8, 8, 32, true, true));
    let eight = with(&|t| {
        t.gemm_tile = Some((128, 128));
        t.gemm_bk = Some(8);
    });
    assert_eq!(pick(&eight, &g), vec_tile(8, 8, 8, true, true));
    // Two buffers where they fit.
    assert_eq!(pick(&with(&|t| t.gemm_buffers = Some(2)), &g), two(vec_tile(4, 4, 32, true, true)));
    // A staged as loaded where K-contiguous; a transposed A keeps its k-major tile.
    let rows = with(&|t| t.gemm_a_rows = Some(true));
    let as_rows = |v: Variant| match v {
        Variant::TiledVec(t) => Variant::TiledVec(shaders::linalg::VecTile { a_rows: true, ..t }),
        other => other,
    };
    assert_eq!(pick(&rows, &g), as_rows(vec_tile(4, 4, 32, true, true)));
    let mut at = f32_gemm(64, 68, 20);
    (at.a.rs, at.a.cs) = (1, 64);
    assert_eq!(pick(&rows, &at), vec_tile(4, 4, 32, false, true));
    let late = with(&|t| t.gemm_prefetch = Some(false));
    let Variant::TiledVec(t) = pick(&late, &g) else { panic!("the vector-load kernel") };
    assert!(!t.prefetch);
    // Large problems: the 128 x 128 tile; forced to two buffers it keeps K step 16.
    let large = f32_gemm(4096, 4096, 4096);
    let large_two = with(&|t| {
        t.gemm_bk = Some(16);
        t.gemm_buffers = Some(2);
    });
    assert_eq!(pick(&large_two, &large), two(vec_tile(8, 8, 16, true, true)));
    // The scalar kernel has the square tiles only; F64 the small one only.
    let scalar_big = with(&|t| {
        t.gemm_vec = Some(false);
        t.gemm_tile = Some((128, 128));
    });
    assert_eq!(pick(&scalar_big, &g), Variant::Tiled(Tile::Large));
    assert_eq!(pick(&scalar_big, &gemm_of(DType::F64, 68, 72, 36)), Variant::Tiled(Tile::Small));
    let scalar_rect = with(&|t| {
        t.gemm_vec = Some(false);
        t.gemm_tile = Some((128, 64));
    });
    assert_eq!(pick(&scalar_rect, &f32_gemm(4096, 4096, 4096)), Variant::Tiled(Tile::Large));
    // Forced splits: tiled variants only, ranges on multiples of 16, at most one per 16 k.
    let split = with(&|t| t.gemm_split = Some(3)).tuning;
    let v = vec_tile(4, 4, 16, true, true);
    assert_eq!(forced_split(&split, v, 1000, 100), Some((3, 336)));
    assert_eq!(forced_split(&split, Variant::Tiled(Tile::Small), 20, 100), Some((2, 16)));
    assert_eq!(forced_split(&split, v, 16, 100), Some((1, 16)));
    assert_eq!(forced_split(&split, v, 0, 100), Some((1, 0)));
    assert_eq!(forced_split(&split, Variant::Skinny { nfast: true }, 1000, 100), None);
    assert_eq!(forced_split(&crate::Tuning::default(), v, 1000, 100), None);
    // `gemv.split` for the GEMV kernel.
    let gemv = Variant::Gemv(shaders::linalg::GemvTile::new(4, 1));
    let mut t = crate::Tuning::default();
    assert_eq!(forced_split(&t, gemv, 4096, 4096), None);
    t.gemv_split = Some(8);
    assert_eq!(forced_split(&t, gemv, 4096, 4096), Some((8, 512)));
    assert_eq!(forced_split(&t, gemv, 100, 16), Some((7, 16)));
    assert_eq!(forced_split(&t, gemv, 16, 16), Some((1, 16)));
}

/// The kernels of a MatMul `[m, k] x [k, n]` of dtype `d` lowered on `caps`.
fn lower_matmul(caps: &DeviceCaps, d: DType, m: usize, n: usize, k: usize) -> Vec<Kernel> {
    let op = |buf, dims| Operand::whole(buf, d, dims).unwrap();
    let (x, w) = (op(crate::lower::Buf::In(0), vec![m, k]), op(crate::lower::Buf::In(1), vec![k, n]));
    let out = op(crate::lower::Buf::Out(0), vec![m, n]);
    let mut b = Lower::new(caps, 1);
    matmul(&mut b, &x, &w, &out).unwrap();
    b.finish().kernels().into_iter().cloned().collect()
}

#[test]
fn f32_matmul_lowers_to_the_trusted_vector_load_kernel() {
    let caps = h200_f32_caps();
    let files = |ks: &[Kernel]| ks.iter().filter_map(|k| shaders::kernel_file(&k.source)).collect::<Vec<_>>();
    let aligned = lower_matmul(&caps, DType::F32, 37, 44, 20);
    assert_eq!(files(&aligned), ["linalg_tiled_vec.wgsl"]);
    assert!(shaders::is_trusted(&aligned[0].source));
    assert_eq!(files(&lower_matmul(&caps, DType::F32, 37, 45, 19)), ["linalg.wgsl"]);
    // Forced split: partial sums from the vector-load kernel, then the reduction.
    let mut split = h200_f32_caps();
    split.tuning.gemm_split = Some(2);
    let ks = lower_matmul(&split, DType::F32, 37, 44, 40);
    assert_eq!(files(&ks), ["linalg_tiled_vec.wgsl", "linalg_splitk.wgsl"]);
}

#[test]
fn packed_tiled_outputs_skip_the_zeroing_pass_only_where_every_word_is_written_whole() {
    let caps = h200_f32_caps();
    let files = |ks: &[Kernel]| ks.iter().filter_map(|k| shaders::kernel_file(&k.source)).collect::<Vec<_>>();
    // N a multiple of 4, K not split: two whole words per `store4`, no zeroing.
    assert_eq!(files(&lower_matmul(&caps, DType::F16, 37, 44, 20)), ["linalg.wgsl"]);
    // N = 46: edge columns are stored element by element into zeroed words.
    assert_eq!(files(&lower_matmul(&caps, DType::BF16, 37, 46, 20)), ["zero.wgsl", "linalg.wgsl"]);
    // K split: the reduction stores elements.
    let mut split = h200_f32_caps();
    split.tuning.gemm_split = Some(2);
    assert_eq!(
        files(&lower_matmul(&split, DType::F16, 37, 44, 40)),
        ["zero.wgsl", "linalg.wgsl", "linalg_splitk.wgsl"]
    );
    // The cooperative kernels store through the same `store4`.
    let coop = coop_caps(vec![coop_config(16, CooperativeScalarType::F16, CooperativeScalarType::F32)]);
    assert!(!files(&lower_matmul(&coop, DType::F16, 64, 64, 64)).contains(&"zero.wgsl"));
}
