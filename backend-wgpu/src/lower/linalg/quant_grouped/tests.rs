//! The kernels, scratch and grids of the QuantGroupedMatMul lowering (the device runs are in
//! `tests/quant_grouped.rs` and the conformance suite).

use super::*;
use crate::device::DeviceCaps;
use crate::lower::builder::Lowering;
use crate::lower::{Buf, Grid};

fn op(buf: Buf, d: DType, dims: &[usize]) -> Operand {
    Operand::whole(buf, d, dims.to_vec()).unwrap()
}

/// A Q8_0 QuantGroupedMatMul of x `[m, 64]` (dtype `x`) with `e` experts of `[n, 64]` on `caps`.
fn lower_q8(caps: &DeviceCaps, x: DType, m: usize, n: usize, e: usize) -> Result<Lowering> {
    let mut b = Lower::new(caps, 1);
    let ws = [op(Buf::In(1), DType::U8, &[e, n, 68])];
    let ids = op(Buf::In(2), DType::I32, &[m]);
    let (xo, out) = (op(Buf::In(0), x, &[m, 64]), op(Buf::Out(0), x, &[m, n]));
    quant_grouped_matmul(&mut b, QuantFormat::Q8_0, &xo, &ws, &ids, &out)?;
    Ok(b.finish())
}

fn files(l: &Lowering) -> Vec<&'static str> {
    l.kernels().iter().filter_map(|k| shaders::kernel_file(&k.source)).collect()
}

#[test]
fn the_weight_is_read_in_place_by_the_grouped_quant_kernel() {
    let caps = DeviceCaps::for_tests();
    // 9 rows over 3 experts: at most 9 / 4 + 3 = 5 tiles of 4 rows.
    let l = lower_q8(&caps, DType::F32, 9, 10, 3).unwrap();
    let ks = l.kernels();
    let quant: Vec<_> =
        ks.iter().filter(|k| shaders::kernel_file(&k.source) == Some("linalg_quant_gemv.wgsl")).collect();
    assert_eq!(quant.len(), 1, "{:?}", files(&l));
    let k = quant[0];
    assert!(k.source.contains("var<storage, read_write> texp"), "the grouped form");
    // x sorted (scratch), w in place, the products (scratch), the tile expert table.
    assert_eq!(k.bindings.len(), 4);
    assert_eq!(k.bindings[1].0.buf, Buf::In(1));
    // One workgroup per (column, tile).
    assert_eq!(k.grid, Grid::Workgroups([50, 1, 1]));
    // No scratch anywhere near a dequantised W (3 x 10 x 64 f32), and the padded rows are 20.
    assert!(l.temps.iter().all(|&t| t < 3 * 10 * 64 * 4), "{:?}", l.temps);
    assert!(l.temps.contains(&(20 * 64 * 4)) && l.temps.contains(&(20 * 10 * 4)), "{:?}", l.temps);
    // The grouping steps of GroupedMatMul, both row moves as whole words; ids never on the host.
    let f = files(&l);
    for step in ["count", "scan", "tiles", "place"] {
        assert!(f.contains(&format!("linalg_grouped_{step}.wgsl").as_str()), "{step}: {f:?}");
    }
    assert_eq!(f.iter().filter(|&&f| f == "linalg_grouped_rows.wgsl").count(), 2, "{f:?}");
}

#[test]
fn packed_products_are_zeroed_first() {
    let caps = DeviceCaps::for_tests();
    let f32_kernels = lower_q8(&caps, DType::F32, 9, 10, 3).unwrap().kernels().len();
    assert_eq!(lower_q8(&caps, DType::BF16, 9, 10, 3).unwrap().kernels().len(), f32_kernels + 1);
}

#[test]
fn large_grids_fold_into_two_dimensions() {
    let mut caps = DeviceCaps::for_tests();
    caps.limits.max_compute_workgroups_per_dimension = 1000;
    // 17 rows, 2 experts: 17 / 4 + 2 = 6 tiles x 700 columns = 4200 workgroups.
    let l = lower_q8(&caps, DType::F32, 17, 700, 2).unwrap();
    let k =
        l.kernels().into_iter().find(|k| shaders::kernel_file(&k.source) == Some("linalg_quant_gemv.wgsl")).unwrap();
    let Grid::Workgroups([x, y, 1]) = k.grid else { panic!("not a 2-D grid") };
    assert!(x <= 1000 && y <= 1000 && x * y >= 4200, "{x} x {y}");
}

#[test]
fn no_experts_or_no_k_is_one_zeroing_pass_and_no_rows_nothing() {
    let caps = DeviceCaps::for_tests();
    let l = lower_q8(&caps, DType::F32, 7, 5, 0).unwrap();
    assert_eq!(l.kernels().len(), 1);
    assert!(l.temps.is_empty());
    let mut b = Lower::new(&caps, 1);
    let f = QuantFormat::Int8Block { block_size: 4 };
    let ws = [op(Buf::In(1), DType::I8, &[2, 3, 0]), op(Buf::In(2), DType::F32, &[2, 3, 0])];
    let (x, ids, out) =
        (op(Buf::In(0), DType::F16, &[5, 0]), op(Buf::In(3), DType::I64, &[5]), op(Buf::Out(0), DType::F16, &[5, 3]));
    quant_grouped_matmul(&mut b, f, &x, &ws, &ids, &out).unwrap();
    assert_eq!(b.finish().kernels().len(), 1);
    assert!(lower_q8(&caps, DType::F32, 0, 5, 3).unwrap().kernels().is_empty());
}

#[test]
fn bad_shapes_are_errors_naming_the_op_and_format() {
    let caps = DeviceCaps::for_tests();
    let mut b = Lower::new(&caps, 1);
    let (x, ids, out) =
        (op(Buf::In(0), DType::F32, &[4, 40]), op(Buf::In(2), DType::I32, &[4]), op(Buf::Out(0), DType::F32, &[4, 2]));
    // K = 40 is not a whole number of Q8_0 blocks.
    let e = quant_grouped_matmul(&mut b, QuantFormat::Q8_0, &x, &[op(Buf::In(1), DType::U8, &[3, 2, 34])], &ids, &out)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape);
    assert!(e.to_string().contains("QuantGroupedMatMul Q8_0"), "{e}");
    // Weight inputs with different E.
    let f = QuantFormat::Int8Block { block_size: 8 };
    let ws = [op(Buf::In(1), DType::I8, &[3, 2, 40]), op(Buf::In(2), DType::F32, &[2, 2, 5])];
    let e = quant_grouped_matmul(&mut b, f, &x, &ws, &ids, &out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    // Float expert ids.
    let ws = [op(Buf::In(1), DType::I8, &[3, 2, 40]), op(Buf::In(2), DType::F32, &[3, 2, 5])];
    let fids = op(Buf::In(3), DType::F32, &[4]);
    let e = quant_grouped_matmul(&mut b, f, &x, &ws, &fids, &out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DType, "{e}");
}
