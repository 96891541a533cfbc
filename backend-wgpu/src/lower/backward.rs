//! The backward family (§2.16) on the builder: SoftmaxCrossEntropyBackward (§2.16.3), one
//! workgroup per slice (`shaders::backward::cross_entropy_module`) on the norm family's loss rows.

use super::builder::{Lower, Operand};
use super::norm::{loss_rows, slices};
use backend_api::op::SoftmaxCrossEntropyAttrs;
use backend_api::{ensure, Result};

/// The gradient of SoftmaxCrossEntropy with respect to `logits` (into `out`, the logits' dtype and
/// dims) from the targets and `d_loss` (one value per slice): `(softmax(logits) − targets)·d_loss`.
pub fn softmax_cross_entropy_backward(
    b: &mut Lower<'_>,
    a: &SoftmaxCrossEntropyAttrs,
    logits: &Operand,
    targets: &Operand,
    d_loss: &Operand,
    out: &Operand,
) -> Result<()> {
    let what = "SoftmaxCrossEntropyBackward";
    let n = slices(what, logits, targets, a.axis)?;
    ensure!(
        d_loss.dtype == logits.dtype && d_loss.numel() == n,
        Shape,
        "{what} d_loss {}{:?} must have one {} per slice of the logits {:?} along axis {}",
        d_loss.dtype,
        d_loss.dims,
        logits.dtype,
        logits.dims,
        a.axis
    );
    ensure!(
        out.dtype == logits.dtype && out.dims == logits.dims,
        Shape,
        "{what} of {}{:?} cannot write {}{:?}",
        logits.dtype,
        logits.dims,
        out.dtype,
        out.dims
    );
    let src = shaders::backward::cross_entropy_module(logits.dtype);
    loss_rows(b, what, src, a.axis, &[logits, targets, d_loss], out)
}
