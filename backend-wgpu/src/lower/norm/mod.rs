//! Softmax, LogSoftmax (§2.7.1–2.7.2) along any axis and LayerNorm, RmsNorm (§2.7.4–2.7.5) over
//! the axes from `axis` to the end, with `shaders::norm`: one workgroup per row, read once when the
//! row fits the single-pass form (`shaders::norm::MAX_HELD` elements), once per pass otherwise.
//! SoftmaxCrossEntropy (§2.7.3) is in `loss.rs`, on the same rows; GroupNorm and LayerNorm2d
//! (§2.7.6–2.7.7) in `channel.rs`.
//!
//! A row is `len` elements at stride `inner` starting at `(o·len·inner + j)` for row `o·inner + j`:
//! Softmax along axis `a` has `len = dims[a]`, `inner = Π dims[a+1..]` (no transpose needed); the
//! norms have `len = H = Π dims[axis..]` and `inner = 1`.
//!
//! The builders take operands, so another lowering can run a softmax on its own scratch tensor
//! (see the composite-op test in `lower/tests.rs`).

mod channel;
mod fused;
mod loss;

pub use channel::{group_norm, layer_norm_2d};
pub use fused::fused_residual_norm;

pub use loss::softmax_cross_entropy;
pub(super) use loss::{loss_rows, slices};

use super::builder::{tensor_bytes, u32_of, Kernel, Lower, Operand};
use crate::pipelines::BindKind;
use backend_api::op::NormAttrs;
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::norm::{held4_per_thread, held_per_thread, module, module_held, module_held4, Held, NormKind, NormParams};
use shaders::params::Params;

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// Softmax of `x` along `axis` into `out` (same dtype and dims).
pub fn softmax(b: &mut Lower<'_>, axis: usize, x: &Operand, out: &Operand) -> Result<()> {
    row_kernel(b, NormKind::Softmax, axis, 0.0, &[x], out)
}

/// LogSoftmax of `x` along `axis` into `out`.
pub fn log_softmax(b: &mut Lower<'_>, axis: usize, x: &Operand, out: &Operand) -> Result<()> {
    row_kernel(b, NormKind::LogSoftmax, axis, 0.0, &[x], out)
}

/// LayerNorm of `x` over the axes from `a.axis` with `gamma` and an optional `beta`.
pub fn layer_norm(
    b: &mut Lower<'_>,
    a: &NormAttrs,
    x: &Operand,
    gamma: &Operand,
    beta: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let ins: Vec<&Operand> = [x, gamma].into_iter().chain(beta).collect();
    row_kernel(b, NormKind::LayerNorm, a.axis, a.eps, &ins, out)
}

/// RmsNorm of `x` over the axes from `a.axis` with `gamma` and an optional `beta`.
pub fn rms_norm(
    b: &mut Lower<'_>,
    a: &NormAttrs,
    x: &Operand,
    gamma: &Operand,
    beta: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let ins: Vec<&Operand> = [x, gamma].into_iter().chain(beta).collect();
    row_kernel(b, NormKind::RmsNorm, a.axis, a.eps, &ins, out)
}

/// (rows, len, inner) of the workgroup rows.
fn rows(kind: NormKind, dims: &[usize], axis: usize) -> Result<(usize, usize, usize)> {
    if axis >= dims.len() {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}");
    }
    let (Some(head), Some(tail), Some(&len)) = (dims.get(..axis), dims.get(axis..), dims.get(axis)) else {
        bail!(Axis, "axis {axis} out of range for shape {dims:?}")
    };
    let outer = try_numel(head)?;
    Ok(if kind.has_gamma() {
        (outer, try_numel(tail)?, 1)
    } else {
        let inner = try_numel(tail.get(1..).unwrap_or(&[]))?;
        (try_numel(&[outer, inner])?, len, inner)
    })
}

/// What the trusted single-pass kernels rely on (`norm_*_held.wgsl`): x and out hold their
/// elements, gamma and beta (indexed by the row position) hold `len` each.
fn check_windows(kind: NormKind, ins: &[&Operand], out: &Operand, len: usize) -> Result<()> {
    for (k, o) in ins.iter().copied().chain([out]).enumerate() {
        let need = tensor_bytes(o.dtype, &o.dims)?;
        ensure!(
            o.window.bytes >= need,
            Shape,
            "{kind:?} operand {k} {:?} has a window of {} bytes",
            o.dims,
            o.window.bytes
        );
    }
    for (k, o) in ins.iter().enumerate().skip(1) {
        ensure!(
            o.dtype == out.dtype && o.numel() == len,
            Shape,
            "{kind:?} operand {k} {}{:?} must have the {len} elements of a row of {}",
            o.dtype,
            o.dims,
            out.dtype
        );
    }
    Ok(())
}

/// The module for rows of `len` elements at stride `inner` from `render` (the variant of a form):
/// the single-pass form where the row fits (four-wide where it can be), else the multi-pass one.
fn pick_source(
    b: &Lower<'_>,
    kind: NormKind,
    d: DType,
    (len, inner): (usize, usize),
    render: impl Fn(Option<Held>) -> Option<std::result::Result<String, String>>,
) -> Result<String> {
    // Rows that fit in registers are read once (single pass); longer ones once per pass. The
    // single-pass reductions use subgroup operations where the device has them (f32 maths only).
    let subgroups = b.caps().subgroups.is_some() && d != DType::F64;
    // Contiguous F32 rows of a multiple of 4 elements are read and written as vec4: every bound
    // window starts at a multiple of the storage offset alignment, so an alignment of 16 or more
    // puts each row start (a multiple of 4 elements) on 16 bytes.
    let aligned = b.caps().limits.min_storage_buffer_offset_alignment >= 16;
    let four = (inner == 1 && aligned).then(|| held4_per_thread(len)).flatten();
    let four = four.and_then(|k| render(Some(Held { k, subgroups, vec4: true })));
    let scalar = || held_per_thread(len).and_then(|k| render(Some(Held { k, subgroups, vec4: false })));
    let Some(src) = four.or_else(scalar).or_else(|| render(None)) else {
        bail!(Unsupported, "no GPU kernel for {kind:?} on {d}");
    };
    src.map_err(|e| Error::new(ErrorKind::Device, format!("norm shader: {e}")))
}

/// One row kernel: `ins` are x, then gamma and beta for the norms.
fn row_kernel(b: &mut Lower<'_>, kind: NormKind, axis: usize, eps: f32, ins: &[&Operand], out: &Operand) -> Result<()> {
    let Some(x) = ins.first() else { bail!(Arity, "{kind:?} needs an input") };
    let d = x.dtype;
    ensure!(
        out.dtype == d && out.dims == x.dims,
        Shape,
        "{kind:?} of {d}{:?} cannot write {}{:?}",
        x.dims,
        out.dtype,
        out.dims
    );
    let beta = kind.has_gamma() && ins.len() == 3;
    let (rows, len, inner) = rows(kind, &x.dims, axis)?;
    let source = pick_source(b, kind, d, (len, inner), |held| match held {
        None => module(kind, d, beta),
        Some(h) if h.vec4 => module_held4(kind, d, beta, h.k, h.subgroups),
        Some(h) => module_held(kind, d, beta, h.k, h.subgroups),
    })?;
    let n = x.numel();
    if n == 0 {
        return Ok(());
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{kind:?} input {:?} has more than 2^31 elements", x.dims);
    }
    check_windows(kind, ins, out, len)?;
    let p = NormParams {
        rows: u32_of(rows, "rows")?,
        len: u32_of(len, "row elements")?,
        inner: u32_of(inner, "row stride")?,
        eps,
        ..NormParams::default()
    };
    let mut bindings: Vec<_> = ins.iter().map(|o| (o.window, BindKind::Read)).collect();
    bindings.push((out.window, BindKind::Write));
    b.zero_if_packed(out)?;
    let grid = b.workgroups(rows)?;
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_along_any_axis() {
        assert_eq!(rows(NormKind::Softmax, &[2, 3, 4], 1).unwrap(), (8, 3, 4));
        assert_eq!(rows(NormKind::Softmax, &[2, 3, 4], 2).unwrap(), (6, 4, 1));
        assert_eq!(rows(NormKind::LogSoftmax, &[5], 0).unwrap(), (1, 5, 1));
        assert_eq!(rows(NormKind::LayerNorm, &[2, 3, 4], 1).unwrap(), (2, 12, 1));
        assert_eq!(rows(NormKind::RmsNorm, &[2, 3, 4], 0).unwrap(), (1, 24, 1));
        assert!(rows(NormKind::RmsNorm, &[2], 1).is_err());
    }

    fn softmax_source(dims: &[usize], axis: usize) -> String {
        softmax_source_on(&crate::device::DeviceCaps::for_tests(), DType::F32, dims, axis)
    }

    fn softmax_source_on(caps: &crate::device::DeviceCaps, d: DType, dims: &[usize], axis: usize) -> String {
        let mut b = Lower::new(caps, 1);
        let x = Operand::whole(crate::lower::Buf::In(0), d, dims.to_vec()).unwrap();
        let out = Operand::whole(crate::lower::Buf::Out(0), d, dims.to_vec()).unwrap();
        softmax(&mut b, axis, &x, &out).unwrap();
        let l = b.finish();
        // packed dtypes zero the output first; the row kernel is last
        l.kernels().last().expect("a row kernel").source.clone()
    }

    #[test]
    fn rows_that_fit_are_single_pass() {
        let max = shaders::norm::MAX_HELD;
        // K registers per invocation: v0 .. v(K-1)
        let held = |dims: &[usize], axis: usize, k: usize| {
            let src = softmax_source(dims, axis);
            src.contains(&format!("var v{} ", k - 1)) && !src.contains(&format!("var v{k} "))
        };
        assert!(held(&[3, 5], 1, 1));
        assert!(held(&[2, 257], 1, 2));
        assert!(held(&[max, 2], 0, 32));
        assert!(!softmax_source(&[2, max + 1], 1).contains("var v0 "));
        assert!(!softmax_source(&[2, 5], 1).contains("subgroupAdd"));
    }

    #[test]
    fn single_pass_rows_reduce_with_subgroups_where_the_device_has_them() {
        let mut caps = crate::device::DeviceCaps::for_tests();
        caps.subgroups = Some(crate::device::SubgroupSizes { min: 4, max: 64 });
        assert!(softmax_source_on(&caps, DType::F32, &[2, 5], 1).contains("subgroupAdd"));
        assert!(softmax_source_on(&caps, DType::BF16, &[2, 5], 1).contains("subgroupMax"));
        // f64 keeps the workgroup-memory reductions; long rows keep the multi-pass kernel
        assert!(!softmax_source_on(&caps, DType::F64, &[2, 5], 1).contains("subgroupAdd"));
        assert!(!softmax_source_on(&caps, DType::F32, &[2, 9000], 1).contains("subgroupAdd"));
    }

    #[test]
    fn aligned_contiguous_f32_rows_of_a_multiple_of_4_are_four_wide() {
        let mut caps = crate::device::DeviceCaps::for_tests();
        caps.limits.min_storage_buffer_offset_alignment = 32;
        let four = |caps: &crate::device::DeviceCaps, d: DType, dims: &[usize], axis: usize| {
            softmax_source_on(caps, d, dims, axis).contains("array<vec4<f32>>")
        };
        assert!(four(&caps, DType::F32, &[3, 8], 1));
        assert!(four(&caps, DType::F32, &[2, 4096], 1));
        // a ragged row, a strided row, another dtype keep the scalar form
        assert!(!four(&caps, DType::F32, &[3, 6], 1));
        assert!(!four(&caps, DType::F32, &[8, 4], 0));
        assert!(!four(&caps, DType::F16, &[3, 8], 1));
        caps.limits.min_storage_buffer_offset_alignment = 4;
        assert!(!four(&caps, DType::F32, &[3, 8], 1));
    }
}
