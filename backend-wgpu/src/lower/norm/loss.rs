//! SoftmaxCrossEntropy (§2.7.3) along any class axis: one workgroup per slice with tree max and
//! sums (`shaders::norm::cross_entropy_module`, on `norm_common.wgsl`). [`loss_rows`] is shared
//! with the backward family's gradient, which runs on the same rows and params.

use super::super::builder::{u32_of, Kernel, Lower, Operand};
use super::{rows, NormKind, MAX_ELEMENTS};
use crate::pipelines::BindKind;
use backend_api::op::SoftmaxCrossEntropyAttrs;
use backend_api::{bail, ensure, Error, ErrorKind, Result};
use shaders::norm::NormParams;
use shaders::params::Params;

/// SoftmaxCrossEntropy of `logits` against `targets` (same dtype and dims) along `a.axis` into
/// `out`: one loss per slice (the logits' dims without the class axis).
pub fn softmax_cross_entropy(
    b: &mut Lower<'_>,
    a: &SoftmaxCrossEntropyAttrs,
    logits: &Operand,
    targets: &Operand,
    out: &Operand,
) -> Result<()> {
    let what = "SoftmaxCrossEntropy";
    let n = slices(what, logits, targets, a.axis)?;
    ensure!(
        out.dtype == logits.dtype && out.numel() == n,
        Shape,
        "{what} of {}{:?} along axis {} cannot write {}{:?}",
        logits.dtype,
        logits.dims,
        a.axis,
        out.dtype,
        out.dims
    );
    let src = shaders::norm::cross_entropy_module(logits.dtype);
    loss_rows(b, what, src, a.axis, &[logits, targets], out)
}

/// The number of slices (rows along `axis`) of `logits`, after checking that `targets` matches it.
pub(in crate::lower) fn slices(what: &str, logits: &Operand, targets: &Operand, axis: usize) -> Result<usize> {
    ensure!(
        targets.dtype == logits.dtype && targets.dims == logits.dims,
        Shape,
        "{what} targets {}{:?} must match the logits {}{:?}",
        targets.dtype,
        targets.dims,
        logits.dtype,
        logits.dims
    );
    // rows along the class axis are Softmax's rows
    Ok(rows(NormKind::Softmax, &logits.dims, axis)?.0)
}

/// One workgroup per slice of `ins[0]` (the logits) along `axis`, running the rendered loss
/// kernel `src` with the inputs `ins` and the output `out` bound in order.
pub(in crate::lower) fn loss_rows(
    b: &mut Lower<'_>,
    what: &str,
    src: Option<std::result::Result<String, String>>,
    axis: usize,
    ins: &[&Operand],
    out: &Operand,
) -> Result<()> {
    let Some(x) = ins.first() else { bail!(Arity, "{what} needs logits") };
    let d = x.dtype;
    let Some(src) = src else { bail!(Unsupported, "no GPU kernel for {what} on {d}") };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("{what} shader: {e}")))?;
    if x.numel() >= MAX_ELEMENTS {
        bail!(DeviceLimit, "{what} input {:?} has more than 2^31 elements", x.dims);
    }
    let (slices, len, inner) = rows(NormKind::Softmax, &x.dims, axis)?;
    if slices == 0 || out.numel() == 0 {
        return Ok(());
    }
    if len == 0 {
        bail!(Shape, "{what} class axis {axis} of {:?} is empty", x.dims);
    }
    let p = NormParams {
        rows: u32_of(slices, "slices")?,
        len: u32_of(len, "classes")?,
        inner: u32_of(inner, "class stride")?,
        ..NormParams::default()
    };
    let mut bindings: Vec<_> = ins.iter().map(|o| (o.window, BindKind::Read)).collect();
    bindings.push((out.window, BindKind::Write));
    b.zero_if_packed(out)?;
    let grid = b.workgroups(slices)?;
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}
