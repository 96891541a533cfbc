//! Convolution-family lowerings (§2.9): Pool and Im2Col share the window addressing of
//! [`pool::WindowGeometry`]; ResizeNearest is a copy of its own.
//!
//! Conv and ConvTranspose (§2.9.1–2.9.2). [`conv`] and [`conv_transpose`] check the operands with
//! the op's own shape inference, describe the problem as a [`ConvShape`] (spatial lists padded to
//! three dims), pick a [`ConvForm`] with [`choose_form`] — a pure function of the shape and the
//! device's capabilities — and hand the problem to that form's builder. The direct forms are in
//! `direct.rs`; an implicit-GEMM (tensor-core) form for wide channel counts is meant to become
//! another arm of [`ConvForm`], chosen in [`choose_form`], with a builder of its own.

use super::builder::{Lower, Operand};
use crate::device::DeviceCaps;
use backend_api::op::{ConvAttrs, ConvTransposeAttrs, Op};
use backend_api::{bail, ensure, DType, Result, Shape, TensorType};

mod direct;
mod im2col;
mod pool;
mod resize;
#[cfg(test)]
mod tests;

pub use im2col::im2col;
pub use pool::pool;
pub use resize::resize_nearest;

/// Spatial dims every kernel handles (1-D and 2-D are padded with leading ones).
pub const SPATIAL: usize = 3;

/// Which of the two ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvOp {
    /// Conv (§2.9.1).
    Conv,
    /// ConvTranspose (§2.9.2).
    Transpose,
}

/// One convolution's sizes, spatial lists padded to [`SPATIAL`] dims with leading ones (size,
/// kernel, stride and dilation 1, no padding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvShape {
    /// Which op.
    pub op: ConvOp,
    /// Dtype of every operand.
    pub dtype: DType,
    /// Batch.
    pub n: usize,
    /// Channels of `x`.
    pub cin: usize,
    /// Channels of the output.
    pub cout: usize,
    /// Groups (≥ 1).
    pub groups: usize,
    /// Spatial dims of `x`.
    pub input: [usize; SPATIAL],
    /// Kernel box.
    pub kernel: [usize; SPATIAL],
    /// Spatial dims of the output.
    pub output: [usize; SPATIAL],
    /// Strides.
    pub stride: [usize; SPATIAL],
    /// Dilations.
    pub dilation: [usize; SPATIAL],
    /// Padding before each dim (the padding after only shapes the output).
    pub pads_begin: [usize; SPATIAL],
    /// Whether a bias input follows `w`.
    pub bias: bool,
}

impl ConvShape {
    /// Input channels per group.
    pub fn cgi(&self) -> usize {
        self.cin / self.groups
    }

    /// Output channels per group.
    pub fn cgo(&self) -> usize {
        self.cout / self.groups
    }
}

/// How a convolution is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvForm {
    /// Conv, one invocation per output element over the group's channels and the kernel box.
    Direct,
    /// Conv with `groups == Cin == Cout`: one invocation per four outputs along the last dim.
    Depthwise,
    /// ConvTranspose, gather form: one invocation per output element, no atomics.
    TransposeGather,
}

/// The form for `s` on a device with `caps`. The direct forms run everywhere; `caps` is where a
/// GEMM form will find cooperative-matrix support and workgroup-memory limits.
pub fn choose_form(s: &ConvShape, _caps: &DeviceCaps) -> ConvForm {
    match s.op {
        ConvOp::Transpose => ConvForm::TransposeGather,
        ConvOp::Conv if s.groups == s.cin && s.groups == s.cout => ConvForm::Depthwise,
        ConvOp::Conv => ConvForm::Direct,
    }
}

/// Conv of `x` with `w` (and `bias`) into `out`.
pub fn conv(
    b: &mut Lower<'_>,
    a: &ConvAttrs,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let s = shape(&Op::Conv(a.clone()), ConvOp::Conv, a, x, w, bias, out)?;
    lower_shape(b, &s, x, w, bias, out)
}

/// ConvTranspose of `x` with `w` (and `bias`) into `out`.
pub fn conv_transpose(
    b: &mut Lower<'_>,
    a: &ConvTransposeAttrs,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let s = shape(&Op::ConvTranspose(a.clone()), ConvOp::Transpose, &a.conv, x, w, bias, out)?;
    lower_shape(b, &s, x, w, bias, out)
}

fn lower_shape(
    b: &mut Lower<'_>,
    s: &ConvShape,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let form = choose_form(s, b.caps());
    match form {
        ConvForm::Direct | ConvForm::Depthwise | ConvForm::TransposeGather => {
            direct::lower(b, form, s, x, w, bias, out)
        }
    }
}

/// Checks `op` on the operands with its shape inference (it must make exactly `out`'s type) and
/// returns the padded [`ConvShape`].
fn shape(
    op: &Op,
    which: ConvOp,
    a: &ConvAttrs,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<ConvShape> {
    let label = backend_api::spec::op_label(op);
    let ty = |o: &Operand| TensorType { dtype: o.dtype, shape: Shape::of(&o.dims) };
    let ins: Vec<TensorType> = [x, w].into_iter().chain(bias).map(ty).collect();
    let want = backend_api::infer::infer(op, &ins).map_err(|e| e.context(format!("{label} operands")))?;
    ensure!(
        want.len() == 1 && want.first() == Some(&ty(out)),
        Shape,
        "{label} of {ins:?} makes {want:?}, not the {} {:?} operand it was given",
        out.dtype,
        out.dims
    );
    let sp = x.dims.len().saturating_sub(2);
    if !(1..=SPATIAL).contains(&sp) || w.dims.len() != sp + 2 || out.dims.len() != sp + 2 {
        bail!(Shape, "{label}: x {:?}, w {:?} and out {:?} need 1 to 3 spatial dims", x.dims, w.dims, out.dims);
    }
    // The last `sp` entries of a list (the spatial dims of a shape), after leading `fill`s.
    let pad = |l: &[usize], fill: usize, what: &str| -> Result<[usize; SPATIAL]> {
        let Some(tail) = l.get(l.len().saturating_sub(sp)..).filter(|t| t.len() == sp) else {
            bail!(Attribute, "{label} {what} {l:?} has fewer than {sp} entries");
        };
        let mut r = [fill; SPATIAL];
        r[SPATIAL - sp..].copy_from_slice(tail);
        Ok(r)
    };
    Ok(ConvShape {
        op: which,
        dtype: x.dtype,
        n: x.dims[0],
        cin: x.dims[1],
        cout: out.dims[1],
        groups: (a.groups as usize).max(1),
        input: pad(&x.dims, 1, "x")?,
        kernel: pad(&w.dims, 1, "w")?,
        output: pad(&out.dims, 1, "out")?,
        stride: pad(&a.stride, 1, "stride")?,
        dilation: pad(&a.dilation, 1, "dilation")?,
        pads_begin: pad(&a.pads_begin, 0, "pads_begin")?,
        bias: bias.is_some(),
    })
}
