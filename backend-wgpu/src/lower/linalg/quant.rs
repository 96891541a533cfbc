//! QuantMatMul (§2.6.5) with the weight left in its quantised bytes (no dequantised copy of `W`):
//! the decode GEMV (`quant_vec.rs`) for a few rows of x, the tiled GEMM (`quant_gemm.rs`) for
//! more, and where neither fits the device the generic kernel (`shaders::linalg::quant`), in
//! which every workgroup computes a few output rows of one column `n`, decoding the elements of
//! `W[n, :]` it needs as it goes.
//! Every format of §2.6.7 is lowered; the shapes were checked by shape inference and are checked
//! again here as far as the kernel's indexing relies on them.

use super::super::builder::{product_flops, u32_of, Kernel, Lower, Operand};
use crate::pipelines::BindKind;
use backend_api::op::QuantFormat;
use backend_api::{bail, ensure, Error, ErrorKind, Result};
use shaders::linalg::quant::{module_for, QuantParams, QUANT_CHUNK, QUANT_ROWS};
use shaders::params::Params;

/// `out = x · Wᵀ` for `W` stored in `format` as the weight inputs `ws` (in the format's order).
pub fn quant_matmul(b: &mut Lower<'_>, format: QuantFormat, x: &Operand, ws: &[Operand], out: &Operand) -> Result<()> {
    let what = || {
        let dims: Vec<_> = ws.iter().map(|w| (w.dtype, w.dims.clone())).collect();
        format!("QuantMatMul {} (x {}{:?}, weights {dims:?})", format.name(), x.dtype, x.dims)
    };
    let Some((&k, lead)) = x.dims.split_last() else { bail!(Shape, "{}: x must have rank >= 1", what()) };
    let Some(w) = ws.first() else { bail!(Arity, "{}: no weight input", what()) };
    ensure!(ws.len() == format.num_weight_inputs(), Arity, "{}: {} weight inputs", what(), ws.len());
    let &[n, wrow] = w.dims.as_slice() else { bail!(Shape, "{}: w must be [N, bytes]", what()) };
    let m = lead.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let Some(m) = m else { bail!(Shape, "{}: x has more than usize::MAX rows", what()) };
    ensure!(
        out.dims.split_last() == Some((&n, lead)),
        Shape,
        "{}: out {:?} is not x's leading dims ++ [N]",
        what(),
        out.dims
    );
    if m == 0 || n == 0 {
        return Ok(());
    }
    let params = params(format, ws, [m, n, k, wrow]).map_err(|e| e.context(what()))?;
    // Decode (few rows of x): the GEMV kernel that reads each weight byte once.
    if let Some(shape) = super::quant_vec::shape(b.caps(), m, k, x.dtype) {
        let operands = (x, ws, out);
        return super::quant_vec::quant_gemv(b, format, operands, &params, shape).map_err(|e| e.context(what()));
    }
    // Prefill: the tiled GEMM, which decodes each weight once per tile of rows.
    if let Some(form) = super::quant_gemm::form(b.caps()) {
        let operands = (x, ws, out);
        return super::quant_gemm::quant_gemm(b, format, operands, &params, form).map_err(|e| e.context(what()));
    }
    let dtypes: Vec<_> = ws.iter().map(|w| w.dtype).collect();
    let Some(src) = module_for(format, x.dtype, &dtypes) else {
        bail!(Unsupported, "{}: x must be F32, F16 or BF16", what())
    };
    let source = src.map_err(|e| Error::new(ErrorKind::DType, format!("{}: {e}", what())))?;
    push_kernel(b, source, (x, ws, out), (params.to_bytes(), params.groups), &params)
}

/// Records a QuantMatMul kernel over `groups` workgroups binding x, the weight inputs and out
/// (zeroing a packed out first: every element is stored once, by an atomic OR); its FLOPs are
/// those of the product `q` describes.
pub(super) fn push_kernel(
    b: &mut Lower<'_>,
    source: String,
    (x, ws, out): (&Operand, &[Operand], &Operand),
    (params, groups): (Vec<u8>, u32),
    q: &QuantParams,
) -> Result<()> {
    b.zero_if_packed(out)?;
    let mut bindings = vec![(x.window, BindKind::Read)];
    bindings.extend(ws.iter().map(|w| (w.window, BindKind::Read)));
    bindings.push((out.window, BindKind::Write));
    let grid = b.workgroups(usize::try_from(groups).unwrap_or(usize::MAX))?;
    let [m, n, k] = [q.m, q.n, q.k].map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    b.push(Kernel { source, bindings, params, grid, flops: product_flops(1, m, n, k, 1) });
    Ok(())
}

/// The kernel's params for `[M, N, K, bytes per row of w]`, after checking that every index the
/// kernel forms fits 32 bits: elements of x and out, bytes of w, scale elements, `K + CH`
/// (saturated sizes fail the 32-bit check like any other too-large size).
pub(super) fn params(format: QuantFormat, ws: &[Operand], [m, n, k, wrow]: [usize; 4]) -> Result<QuantParams> {
    for (i, w) in ws.iter().enumerate() {
        u32_of(w.numel(), &format!("elements of weight input {i}"))?;
    }
    u32_of(m.saturating_mul(k), "elements of x")?;
    u32_of(m.saturating_mul(n), "elements of out")?;
    let chunk = usize::try_from(QUANT_CHUNK).unwrap_or(usize::MAX);
    u32_of(k.saturating_add(chunk), "elements of K (plus a chunk)")?;
    let rows = usize::try_from(QUANT_ROWS).unwrap_or(1);
    let groups = m.div_ceil(rows).saturating_mul(n);
    let (srow, qb) = scale_layout(format, ws, k)?;
    Ok(QuantParams {
        m: u32_of(m, "rows of x")?,
        n: u32_of(n, "output columns")?,
        k: u32_of(k, "elements of K")?,
        wrow: u32_of(wrow, "bytes per row of w")?,
        srow: u32_of(srow, "scales per row")?,
        qb: u32_of(qb, "elements per scale")?,
        groups: u32_of(groups, "workgroups")?,
        pad0: 0,
    })
}

/// `(srow, qb)`: elements per row of the scale input and elements of K per scale (see
/// [`QuantParams`]); zeros where the format does not use them.
fn scale_layout(format: QuantFormat, ws: &[Operand], k: usize) -> Result<(usize, usize)> {
    let scale_dims = ws.get(1).map(|s| s.dims.as_slice()).unwrap_or(&[]);
    Ok(match format {
        QuantFormat::Int8Block { block_size }
        | QuantFormat::Int8BlockAsym { block_size }
        | QuantFormat::Int4Block { block_size } => {
            let qb = usize::try_from(block_size).unwrap_or(usize::MAX);
            ensure!(qb >= 1, Attribute, "block_size must be >= 1");
            let &[_, nb] = scale_dims else { bail!(Shape, "scale must be [N, ceil(K / B)]") };
            ensure!(nb == k.div_ceil(qb), Shape, "scale has {nb} blocks per row, not ceil(K / B)");
            (nb, qb)
        }
        // A per-tensor scale ([]) is read at 0 for every row.
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => (usize::from(scale_dims.len() == 1), 0),
        QuantFormat::Nvfp4 => {
            ensure!(k.is_multiple_of(16), Shape, "Nvfp4 needs K a multiple of 16");
            (k / 16, 0)
        }
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => {
            let Some((qk, _)) = format.ggml_block() else { bail!(Attribute, "not a GGML block format") };
            ensure!(k.is_multiple_of(qk), Shape, "K must be a multiple of {qk}");
            (0, 0)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceCaps;
    use crate::lower::{Buf, Grid};
    use backend_api::DType;

    fn op(buf: Buf, d: DType, dims: &[usize]) -> Operand {
        Operand::whole(buf, d, dims.to_vec()).unwrap()
    }

    /// One Q8_0 product `[m, 64] x [n, 64]ᵀ` lowered on `caps`.
    fn lower_q8(caps: &DeviceCaps, x: DType, m: usize, n: usize) -> crate::lower::Lowering {
        let mut b = Lower::new(caps, 1);
        let ws = [op(Buf::In(1), DType::U8, &[n, 68])];
        let (xo, out) = (op(Buf::In(0), x, &[m, 64]), op(Buf::Out(0), x, &[m, n]));
        quant_matmul(&mut b, QuantFormat::Q8_0, &xo, &ws, &out).unwrap();
        b.finish()
    }

    #[test]
    fn the_weight_is_read_in_place_without_scratch() {
        // Too little workgroup memory for the GEMM: the generic kernel.
        let mut caps = DeviceCaps::for_tests();
        caps.limits.max_compute_workgroup_storage_size = 8192;
        let l = lower_q8(&caps, DType::F32, 9, 10);
        assert!(l.temps.is_empty(), "no dequantised copy of W");
        let ks = l.kernels();
        assert_eq!(ks.len(), 1);
        assert_eq!(shaders::kernel_file(&ks[0].source), Some("linalg_quant_gemv.wgsl"));
        assert_eq!(ks[0].bindings[1].0.buf, Buf::In(1));
        // Packed outputs are zeroed for the atomic stores first.
        assert_eq!(lower_q8(&caps, DType::F16, 9, 10).kernels().len(), 2);
    }

    #[test]
    fn large_grids_fold_into_two_dimensions() {
        let mut caps = DeviceCaps::for_tests();
        caps.limits.max_compute_workgroup_storage_size = 8192;
        caps.limits.max_compute_workgroups_per_dimension = 1000;
        // 5 row blocks of 4 x 700 columns = 3500 workgroups.
        let l = lower_q8(&caps, DType::F32, 17, 700);
        let Grid::Workgroups([x, y, 1]) = l.kernels()[0].grid else { panic!("not a 2-D grid") };
        assert!(x <= 1000 && y <= 1000 && x * y >= 3500);
    }

    #[test]
    fn k_must_be_whole_blocks() {
        let caps = DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let ws = [op(Buf::In(1), DType::U8, &[2, 34])];
        let (x, out) = (op(Buf::In(0), DType::F32, &[1, 40]), op(Buf::Out(0), DType::F32, &[1, 2]));
        let e = quant_matmul(&mut b, QuantFormat::Q8_0, &x, &ws, &out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Shape);
        assert!(e.to_string().contains("Q8_0"), "{e}");
    }
}
