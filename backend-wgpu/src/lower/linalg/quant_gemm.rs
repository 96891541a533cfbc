//! QuantMatMul (§2.6.5) for prefill, more rows of x than the decode GEMV takes: the tiled GEMM of
//! `shaders::linalg::quant_gemm`, which decodes each weight once per tile of rows into workgroup
//! memory (W stays quantised in device memory). The tensor-core form runs only under
//! [`MatmulPrecision::F16`] (it rounds x and the decoded weights to f16, which the op contract's
//! f32 decode does not allow by default), on devices with f16 cooperative matrices; the scalar
//! form (exact f32) everywhere else. The caller (`quant.rs`) has checked the shapes and the
//! 32-bit sizes of the generic kernel's params.

use super::super::builder::{u32_of, Lower, Operand};
use super::coop::coop_tile;
use crate::device::DeviceCaps;
use crate::MatmulPrecision;
use backend_api::op::QuantFormat;
use backend_api::{bail, Error, ErrorKind, Result};
use shaders::linalg::quant::QuantParams;
use shaders::linalg::quant_gemm::{module_for, QuantGemmForm, QuantGemmParams, QUANT_GEMM_BK};
use shaders::linalg::quant_vec::{unit_elems, unit_items};
use shaders::params::Params;

/// The form for a product on `caps`, or `None` when no form fits the device (workgroup memory,
/// invocations), in which case the generic kernel takes the product.
pub fn form(caps: &DeviceCaps) -> Option<QuantGemmForm> {
    let fits = |f: &QuantGemmForm| {
        f.renderable()
            && f.workgroup_bytes() <= u64::from(caps.limits.max_compute_workgroup_storage_size)
            && f.threads() <= caps.limits.max_compute_invocations_per_workgroup
            && f.threads() <= caps.limits.max_compute_workgroup_size_x
    };
    let coop = (caps.matmul_precision == MatmulPrecision::F16)
        .then(|| coop_tile(caps, false))
        .flatten()
        .map(|t| QuantGemmForm::Coop { frag: t.frag, subgroup: t.subgroup });
    coop.into_iter().chain([QuantGemmForm::Scalar]).find(fits)
}

/// Records the kernel for `out = x · Wᵀ` with the generic kernel's params `q` (shapes checked).
pub fn quant_gemm(
    b: &mut Lower<'_>,
    format: QuantFormat,
    (x, ws, out): (&Operand, &[Operand], &Operand),
    q: &QuantParams,
    form: QuantGemmForm,
) -> Result<()> {
    let params = params(format, q, form)?;
    let dtypes: Vec<_> = ws.iter().map(|w| w.dtype).collect();
    // 16-byte loads of x: whole vectors of 8 (or 4 F32) elements per row.
    let xvec = q.k.is_multiple_of(8) && x.window.bytes.is_multiple_of(16);
    let Some(src) = module_for(format, x.dtype, &dtypes, form, xvec) else {
        bail!(Unsupported, "x must be F32, F16 or BF16 and {form:?} renderable")
    };
    let source = src.map_err(|e| Error::new(ErrorKind::DType, e))?;
    super::quant::push_kernel(b, source, (x, ws, out), (params.to_bytes(), params.groups), q)
}

/// The kernel's params, after checking the headroom its indices need: K-steps reach K + BK, and
/// tiles reach one tile past M and N.
fn params(format: QuantFormat, q: &QuantParams, form: QuantGemmForm) -> Result<QuantGemmParams> {
    let [m, n, k] = [q.m, q.n, q.k].map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    let tile = usize::try_from(form.tile()).unwrap_or(usize::MAX);
    let bk = usize::try_from(QUANT_GEMM_BK).unwrap_or(usize::MAX);
    u32_of(k.saturating_add(bk), "elements of K (plus a step)")?;
    u32_of(m.saturating_add(tile), "rows of x (plus a tile)")?;
    u32_of(n.saturating_add(tile), "output columns (plus a tile)")?;
    let units = q.k / unit_elems(format);
    let Some(items) = units.checked_mul(unit_items(format)) else {
        bail!(DeviceLimit, "{units} units of K do not fit 32 bits as items")
    };
    let mtiles = m.div_ceil(tile);
    let groups = u32_of(mtiles.saturating_mul(n.div_ceil(tile)), "workgroups")?;
    Ok(QuantGemmParams {
        m: q.m,
        n: q.n,
        k: q.k,
        wrow: q.wrow,
        srow: q.srow,
        qb: q.qb,
        items,
        mtiles: u32_of(mtiles, "row tiles")?,
        groups,
        steps: q.k.div_ceil(QUANT_GEMM_BK),
        pad0: 0,
        pad1: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::super::quant::quant_matmul;
    use super::*;
    use crate::device::SubgroupSizes;
    use crate::lower::{Buf, Grid};
    use backend_api::DType;

    fn op(buf: Buf, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(buf, d, dims.to_vec()).unwrap()
    }

    /// The kernels of one Q4_K product `[m, 512] x [n, 512]ᵀ` lowered on `caps`.
    fn lower_q4k(caps: &DeviceCaps, x: DType, m: usize, n: usize) -> crate::lower::Lowering {
        let mut b = Lower::new(caps, 1);
        let ws = [op(Buf::In(1), DType::U8, &[n, 288])];
        let (xo, out) = (op(Buf::In(0), x, &[m, 512]), op(Buf::Out(0), x, &[m, n]));
        quant_matmul(&mut b, QuantFormat::Q4_K, &xo, &ws, &out).unwrap();
        b.finish()
    }

    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn more_than_eight_rows_take_the_scalar_gemm() {
        let caps = DeviceCaps::for_tests();
        let l = lower_q4k(&caps, DType::F32, 9, 130);
        let ks = l.kernels();
        assert_eq!(ks.len(), 1);
        assert!(l.temps.is_empty(), "no dequantised copy of W");
        assert_eq!(shaders::kernel_file(&ks[0].source), Some("linalg_quant_gemm.wgsl"));
        assert!(ks[0].source.contains("const TM: u32 = 64u;") && !ks[0].source.contains("coopMultiplyAdd"));
        // m, n, k, wrow, srow, qb, items, mtiles, groups, steps: 3 column tiles of 64.
        assert_eq!(&words(&ks[0].params)[..10], &[9, 130, 512, 288, 0, 0, 32, 1, 3, 16]);
        assert_eq!(lower_q4k(&caps, DType::F16, 9, 130).kernels().len(), 2, "packed outputs zeroed first");
    }

    #[test]
    fn tensor_cores_only_under_the_f16_precision() {
        let mut caps = DeviceCaps::for_tests();
        caps.subgroups = Some(SubgroupSizes { min: 32, max: 32 });
        caps.f16 = true;
        caps.cooperative_matrix = vec![wgpu::wgt::CooperativeMatrixProperties {
            m_size: 16,
            n_size: 16,
            k_size: 16,
            ab_type: wgpu::wgt::CooperativeScalarType::F16,
            cr_type: wgpu::wgt::CooperativeScalarType::F32,
            saturating_accumulation: false,
        }];
        caps.limits.max_compute_workgroup_storage_size = 49152;
        assert_eq!(form(&caps), Some(QuantGemmForm::Scalar));
        caps.matmul_precision = MatmulPrecision::F16;
        assert_eq!(form(&caps), Some(QuantGemmForm::Coop { frag: 16, subgroup: 32 }));
        let l = lower_q4k(&caps, DType::F16, 300, 130);
        let ks = l.kernels();
        let k = ks.last().unwrap();
        assert!(k.source.contains("coopMultiplyAdd"));
        // 3 row tiles x 2 column tiles of 128.
        assert_eq!(words(&k.params)[7..9], [3, 6]);
        // Too little workgroup memory: the scalar form.
        caps.limits.max_compute_workgroup_storage_size = 16384;
        assert_eq!(form(&caps), Some(QuantGemmForm::Scalar));
        caps.limits.max_compute_workgroup_storage_size = 8192;
        assert_eq!(form(&caps), None);
    }

    #[test]
    fn large_grids_fold_into_two_dimensions() {
        let mut caps = DeviceCaps::for_tests();
        caps.limits.max_compute_workgroups_per_dimension = 100;
        let l = lower_q4k(&caps, DType::F32, 640, 1280);
        let Grid::Workgroups([x, y, 1]) = l.kernels()[0].grid else { panic!("not a 2-D grid") };
        assert!(x <= 100 && y <= 100 && x * y >= 200);
    }
}
