//! QuantMatMul (§2.6.5) for decode, at most [`QUANT_VEC_MAX_ROWS`] rows of x: the GEMV kernel
//! of `shaders::linalg::quant_vec`, which keeps every row of x in one workgroup so that each
//! weight byte is read once, as whole words, and decodes each block's scales once. The caller
//! (`quant.rs`) has checked the shapes and the 32-bit sizes of the generic kernel's params.

use super::super::builder::{u32_of, Lower, Operand};
use crate::device::DeviceCaps;
use backend_api::op::QuantFormat;
use backend_api::{bail, DType, Error, ErrorKind, Result};
use shaders::linalg::quant::QuantParams;
use shaders::linalg::quant_vec::{
    module_for, unit_elems, unit_items, QuantVecParams, QuantVecShape, QUANT_VEC_MAX_ROWS, QUANT_VEC_TREE_LANES,
    QUANT_VEC_WORKGROUP,
};
use shaders::params::Params;

/// Subgroup sizes the kernel's subgroup form takes as its lanes per column: smaller ones leave a
/// lane too much of a row, and 256 / size columns per workgroup must stay whole.
const SUBGROUP_LANES: std::ops::RangeInclusive<u32> = 8..=64;
/// Output columns per lane group: each x vector a lane loads serves this many columns, which
/// divides the x traffic through L1 (for 8 rows of F32 x it is 32 bytes per weight and column),
/// at the cost of registers for the accumulators (rows x columns) and of workgroups. On an H200
/// (`quant.columns` swept over 1, 2, 4 for seven formats at 1, 4 and 8 rows) 2 was fastest or
/// within 10% of it everywhere; 4 lost up to 25% at one row, 1 lost up to 2x at eight.
const COLUMNS: u32 = 2;

/// The kernel layout for `m` rows of x of dtype `x` and contraction length `k` on `caps`, or
/// `None` when the rows are too many for it (the generic kernel takes them).
pub fn shape(caps: &DeviceCaps, m: usize, k: usize, x: DType) -> Option<QuantVecShape> {
    let rows = u32::try_from(m).ok().filter(|r| (1..=QUANT_VEC_MAX_ROWS).contains(r))?;
    // The lanes of a column are one subgroup only where the device has a single subgroup size.
    let fixed = caps.subgroups.filter(|s| s.min == s.max && s.max.is_power_of_two() && SUBGROUP_LANES.contains(&s.max));
    let lanes = fixed.map_or(QUANT_VEC_TREE_LANES, |s| s.max);
    // Vector reads of x need every row to start on 4 elements and 16-byte aligned windows (every
    // bound window starts at a multiple of the storage offset alignment); F16/BF16 are read as
    // 8-byte vectors of 4.
    let vec_x = k.is_multiple_of(4)
        && caps.limits.min_storage_buffer_offset_alignment >= 16
        && matches!(x, DType::F32 | DType::F16 | DType::BF16);
    let columns = caps.tuning.quant_columns.unwrap_or(COLUMNS);
    Some(QuantVecShape { rows, lanes, columns, subgroups: fixed.is_some(), vec_x })
}

/// Records the kernel for `out = x · Wᵀ` with the generic kernel's params `q` (shapes checked).
pub fn quant_gemv(
    b: &mut Lower<'_>,
    format: QuantFormat,
    (x, ws, out): (&Operand, &[Operand], &Operand),
    q: &QuantParams,
    shape: QuantVecShape,
) -> Result<()> {
    let params = params(format, q, shape)?;
    let dtypes: Vec<_> = ws.iter().map(|w| w.dtype).collect();
    let Some(src) = module_for(format, x.dtype, &dtypes, shape) else {
        bail!(Unsupported, "x must be F32, F16 or BF16 and {shape:?} renderable")
    };
    let source = src.map_err(|e| Error::new(ErrorKind::DType, e))?;
    super::quant::push_kernel(b, source, (x, ws, out), (params.to_bytes(), params.groups), q)
}

/// The kernel's params, after checking the headroom its loops need: a lane's item and element
/// counters run up to 256 past K, and a lane group's columns up to two workgroups' past N.
fn params(format: QuantFormat, q: &QuantParams, shape: QuantVecShape) -> Result<QuantVecParams> {
    let [n, k] = [q.n, q.k].map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    let wg = usize::try_from(QUANT_VEC_WORKGROUP).unwrap_or(usize::MAX);
    let cw = usize::try_from(shape.workgroup_columns()).unwrap_or(usize::MAX);
    u32_of(k.saturating_add(wg), "elements of K (plus a workgroup)")?;
    u32_of(n.saturating_add(cw.saturating_mul(2)), "output columns (plus two workgroups)")?;
    let ue = unit_elems(format);
    let units = q.k / ue;
    let items = units.checked_mul(unit_items(format));
    let Some(items) = items else { bail!(DeviceLimit, "{units} units of K do not fit 32 bits as items") };
    let columns = shape.workgroup_columns();
    Ok(QuantVecParams {
        m: q.m,
        n: q.n,
        k: q.k,
        wrow: q.wrow,
        srow: q.srow,
        qb: q.qb,
        items,
        kfull: units * ue,
        groups: q.n.div_ceil(columns),
        pad0: 0,
        pad1: 0,
        pad2: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::super::quant::quant_matmul;
    use super::*;
    use crate::device::SubgroupSizes;
    use crate::lower::{Buf, Grid};

    fn op(buf: Buf, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(buf, d, dims.to_vec()).unwrap()
    }

    /// The kernels of one Int4Block product `[m, k] x [n, k]ᵀ` (block 32) lowered on `caps`.
    fn lower_int4(caps: &DeviceCaps, x: DType, m: usize, n: usize, k: usize) -> crate::lower::Lowering {
        let mut b = Lower::new(caps, 1);
        let ws = [op(Buf::In(1), DType::U8, &[n, k.div_ceil(2)]), op(Buf::In(2), DType::F16, &[n, k.div_ceil(32)])];
        let (xo, out) = (op(Buf::In(0), x, &[m, k]), op(Buf::Out(0), x, &[m, n]));
        quant_matmul(&mut b, QuantFormat::Int4Block { block_size: 32 }, &xo, &ws, &out).unwrap();
        b.finish()
    }

    /// The params bytes as u32 words.
    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    fn nvidia() -> DeviceCaps {
        let mut caps = DeviceCaps::for_tests();
        caps.subgroups = Some(SubgroupSizes { min: 32, max: 32 });
        caps
    }

    #[test]
    fn up_to_eight_rows_take_the_gemv_kernel() {
        let caps = DeviceCaps::for_tests();
        for m in 1..=8 {
            let l = lower_int4(&caps, DType::F32, m, 10, 64);
            let ks = l.kernels();
            assert_eq!(ks.len(), 1);
            assert_eq!(shaders::kernel_file(&ks[0].source), Some("linalg_quant_vec.wgsl"), "m = {m}");
            assert!(ks[0].source.contains(&format!("const MR: u32 = {m}u;")));
            assert_eq!(ks[0].bindings.len(), 4);
        }
        let nine = lower_int4(&caps, DType::F32, 9, 10, 64);
        assert_eq!(shaders::kernel_file(&nine.kernels()[0].source), Some("linalg_quant_gemm.wgsl"));
        // Packed outputs are zeroed for the atomic stores first.
        assert_eq!(lower_int4(&caps, DType::BF16, 2, 10, 64).kernels().len(), 2);
    }

    #[test]
    fn subgroup_sums_only_with_one_subgroup_size() {
        let src = |caps: &DeviceCaps| lower_int4(caps, DType::F32, 1, 10, 64).kernels()[0].source.clone();
        let s = src(&nvidia());
        assert!(s.contains("subgroupAdd") && s.contains("const L: u32 = 32u;"));
        let mut varying = nvidia();
        varying.subgroups = Some(SubgroupSizes { min: 16, max: 64 });
        let t = src(&varying);
        assert!(!t.contains("subgroupAdd") && t.contains("const L: u32 = 32u;"));
        let mut wide = nvidia();
        wide.subgroups = Some(SubgroupSizes { min: 64, max: 64 });
        assert!(src(&wide).contains("const L: u32 = 64u;"));
        assert!(!src(&DeviceCaps::for_tests()).contains("subgroupAdd"));
    }

    #[test]
    fn x_is_read_as_vectors_when_rows_are_whole_vectors() {
        let caps = nvidia();
        for (x, k, vec) in
            [(DType::F32, 64, true), (DType::F16, 36, true), (DType::F32, 37, false), (DType::BF16, 6, false)]
        {
            let s = lower_int4(&caps, x, 3, 5, k).kernels().last().unwrap().source.clone();
            assert_eq!(s.contains("var<storage, read_write> x: array<vec"), vec, "{x} K = {k}");
        }
        let mut small = nvidia();
        small.limits.min_storage_buffer_offset_alignment = 4;
        let s = lower_int4(&small, DType::F32, 3, 5, 64).kernels()[0].source.clone();
        assert!(!s.contains("x: array<vec"));
    }

    #[test]
    fn columns_share_workgroups_and_large_grids_fold() {
        let mut caps = nvidia();
        caps.limits.max_compute_workgroups_per_dimension = 100;
        // 8 lane groups of 2 columns per workgroup: 14336 columns in 896 workgroups.
        let l = lower_int4(&caps, DType::F32, 1, 14336, 64);
        let Grid::Workgroups([x, y, 1]) = l.kernels()[0].grid else { panic!("not a 2-D grid") };
        assert!(x <= 100 && y <= 100 && x * y >= 896);
        let p = words(&l.kernels()[0].params);
        // m, n, k, wrow, srow, qb, items, kfull, groups
        assert_eq!(&p[..9], &[1, 14336, 64, 32, 2, 32, 8, 64, 896]);
        // `quant.columns` overrides the columns per lane group.
        caps.tuning.quant_columns = Some(4);
        let l = lower_int4(&caps, DType::F32, 1, 14336, 64);
        assert_eq!(words(&l.kernels()[0].params)[8], 448);
    }

    #[test]
    fn the_tail_of_k_is_outside_the_units() {
        let caps = DeviceCaps::for_tests();
        let l = lower_int4(&caps, DType::F32, 2, 3, 37);
        let p = words(&l.kernels()[0].params);
        assert_eq!((p[6], p[7], p[8]), (4, 32, 1));
    }
}
