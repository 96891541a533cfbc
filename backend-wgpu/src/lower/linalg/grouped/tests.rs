//! Kernel choice and sizing of the grouped GEMM (the device runs are in the conformance suite).

use super::super::tests::h200_caps;
use super::*;
use crate::lower::builder::Lowering;
use crate::lower::Buf;

/// The lowering of a GroupedMatMul `x [m, k]`, `w [e, k, n]`, I32 `expert [m]` on `caps`.
fn lower(caps: &DeviceCaps, d: DType, [m, n, k]: [usize; 3], e: usize) -> Lowering {
    let op = |buf, dt, dims| Operand::whole(buf, dt, dims).unwrap();
    let x = op(Buf::In(0), d, vec![m, k]);
    let w = op(Buf::In(1), d, vec![e, k, n]);
    let ids = op(Buf::In(2), DType::I32, vec![m]);
    let out = op(Buf::Out(0), d, vec![m, n]);
    let mut b = Lower::new(caps, 1);
    grouped_matmul(&mut b, &x, &w, &ids, &out).unwrap();
    b.finish()
}

/// The product kernel of a lowering (the one reading the weight-offset table).
fn product(l: &Lowering) -> Kernel {
    let ks = l.kernels();
    let k = ks.iter().find(|k| k.source.contains("fn dense_batch_offsets(")).expect("a grouped GEMM kernel");
    (*k).clone()
}

#[test]
fn f16_experts_use_the_tensor_core_kernel_on_devices_that_have_it() {
    // The benchmark's MoE layer: 8 experts of 1024 tokens, 4096 -> 14336.
    let l = lower(&h200_caps(), DType::F16, [8192, 14336, 4096], 8);
    let k = product(&l);
    assert_eq!(shaders::kernel_file(&k.source), Some("linalg_coop_vec.wgsl"));
    assert!(shaders::is_trusted(&k.source));
    // 128-row tiles: 8192 / 128 + 8 tiles of the batch, 14336 / 256 column tiles, no split.
    assert_eq!(k.grid, Grid::Workgroups([56, 1, 72]));
    assert_eq!(k.bindings.len(), 4);
    // Scratch: the sorted rows and their products hold 72 tiles of 128 rows.
    assert!(l.temps.contains(&(72 * 128 * 4096 * 2)) && l.temps.contains(&(72 * 128 * 14336 * 2)));
}

#[test]
fn without_cooperative_matrices_the_tiled_kernels_run_grouped() {
    let caps = DeviceCaps::for_tests();
    for d in [DType::F32, DType::F16, DType::BF16, DType::F64] {
        let k = product(&lower(&caps, d, [150, 130, 65], 9));
        let file = shaders::kernel_file(&k.source);
        assert!(matches!(file, Some("linalg.wgsl" | "linalg_tiled_vec.wgsl")), "{d:?}: {file:?}");
        assert!(!k.source.contains("coopMultiplyAdd"));
    }
}

#[test]
fn decode_rows_are_one_gemv_each() {
    let l = lower(&DeviceCaps::for_tests(), DType::F16, [4, 4096, 1024], 8);
    let k = product(&l);
    assert_eq!(shaders::kernel_file(&k.source), Some("linalg_gemv.wgsl"));
    // One padded row per row: the sorted rows are exactly x's size.
    assert!(l.temps.contains(&(4 * 1024 * 2)));
}

#[test]
fn no_experts_or_no_k_is_one_zeroing_pass() {
    let caps = DeviceCaps::for_tests();
    for (e, k) in [(0, 5), (3, 0)] {
        let l = lower(&caps, DType::F32, [7, 5, k], e);
        assert_eq!(l.kernels().len(), 1, "E = {e}, K = {k}");
        assert!(l.temps.is_empty());
    }
    assert!(lower(&caps, DType::F32, [0, 5, 3], 2).kernels().is_empty());
}

#[test]
fn mismatched_operands_are_errors() {
    let caps = DeviceCaps::for_tests();
    let op = |buf, dt, dims| Operand::whole(buf, dt, dims).unwrap();
    let x = op(Buf::In(0), DType::F32, vec![4, 3]);
    let w = op(Buf::In(1), DType::F32, vec![2, 5, 6]);
    let ids = op(Buf::In(2), DType::I32, vec![4]);
    let out = op(Buf::Out(0), DType::F32, vec![4, 6]);
    let e = grouped_matmul(&mut Lower::new(&caps, 1), &x, &w, &ids, &out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    let fids = op(Buf::In(2), DType::F32, vec![4]);
    let w = op(Buf::In(1), DType::F32, vec![2, 3, 6]);
    let e = grouped_matmul(&mut Lower::new(&caps, 1), &x, &w, &fids, &out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DType, "{e}");
}

#[test]
fn whole_word_rows_move_as_words_and_odd_half_rows_as_elements() {
    let caps = DeviceCaps::for_tests();
    let files = |l: &Lowering| -> Vec<&'static str> {
        l.kernels().iter().filter_map(|k| shaders::kernel_file(&k.source)).collect()
    };
    let even = lower(&caps, DType::F16, [20, 6, 4], 3);
    let f = files(&even);
    assert_eq!(f.iter().filter(|&&f| f == "linalg_grouped_rows.wgsl").count(), 2, "{f:?}");
    assert!(!f.contains(&"indexing_gather.wgsl"), "{f:?}");
    // Odd K and N: rows share words, so both moves are element Gathers.
    let odd = lower(&caps, DType::F16, [20, 5, 3], 3);
    let f = files(&odd);
    assert_eq!(f.iter().filter(|&&f| f == "indexing_gather.wgsl").count(), 2, "{f:?}");
    // 4-byte elements are always whole words.
    assert!(!files(&lower(&caps, DType::F32, [20, 5, 3], 3)).contains(&"indexing_gather.wgsl"));
}
