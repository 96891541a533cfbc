//! Convolution-family lowerings (§2.9): Pool and Im2Col share the window addressing of
//! [`pool::WindowGeometry`]; ResizeNearest is a copy of its own.
//!
//! Conv and ConvTranspose (§2.9.1–2.9.2). [`conv`] and [`conv_transpose`] check the operands with
//! the op's own shape inference, describe the problem as a [`ConvShape`] (spatial lists padded to
//! three dims), pick a [`ConvForm`] with [`choose_form`] — a pure function of the shape and the
//! device's capabilities — and hand the problem to that form's builder. The direct forms are in
//! `direct.rs`; Conv with wide channel counts runs as an implicit GEMM on the dense product
//! kernels (`gemm.rs`: register-tiled scalar, or tensor cores where the device has them).

use super::builder::{Lower, Operand, Window};
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::op::{ConvAttrs, ConvTransposeAttrs, Op};
use backend_api::{bail, ensure, DType, Result, Shape, TensorType};
use shaders::conv::direct::DirectKernel;
use shaders::conv::gemm::GemmKernel;

mod direct;
mod gemm;
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

impl ConvOp {
    /// The op's name, for errors.
    pub fn label(self) -> &'static str {
        match self {
            ConvOp::Conv => "Conv",
            ConvOp::Transpose => "ConvTranspose",
        }
    }
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
    /// Depthwise 2-D Conv whose output tile's input window fits workgroup memory: one workgroup
    /// per tile of a plane, the window staged once.
    DepthwiseTile,
    /// ConvTranspose, gather form: one invocation per output element, no atomics.
    TransposeGather,
    /// Conv as an implicit GEMM `W · im2col(x)` per (batch item, group) on a dense product
    /// kernel, the im2col formed on the fly (no scratch memory).
    ImplicitGemm(GemmKernel),
}

/// Conv takes the implicit GEMM from this many output channels per group: the GEMM's smallest
/// tile is 64 rows of output channels (the cooperative one 64 too), so below 16 more than three
/// quarters of every tile is idle, and the direct kernel, which reads each weight once per output,
/// is cheap at such widths.
pub const GEMM_MIN_COUT: usize = 16;
/// …and from this many products per output (input channels per group × kernel taps): one K step
/// of the scalar kernel is 16 (the cooperative one 32), so shorter sums leave most of each staged
/// step empty while the direct kernel's loop is short anyway.
pub const GEMM_MIN_K: usize = 16;

/// The form for `s` on a device with `caps`: depthwise Conv its own kernels (the staged tile
/// where [`direct::depthwise_tile_fits`], else four outputs per invocation); Conv with at least
/// [`GEMM_MIN_COUT`] output channels per group and [`GEMM_MIN_K`] products per output the
/// implicit GEMM where the device runs one for the dtype (F32, F16, BF16; `caps` decides between
/// tensor cores and the scalar kernel); other Conv the direct kernel.
pub fn choose_form(s: &ConvShape, caps: &DeviceCaps) -> ConvForm {
    match s.op {
        ConvOp::Transpose => ConvForm::TransposeGather,
        ConvOp::Conv if s.groups == s.cin && s.groups == s.cout => {
            if direct::depthwise_tile_fits(s, caps) {
                ConvForm::DepthwiseTile
            } else {
                ConvForm::Depthwise
            }
        }
        ConvOp::Conv => {
            let k = s.cgi().saturating_mul(backend_api::shape::try_numel(&s.kernel).unwrap_or(usize::MAX));
            let wide = s.cgo() >= GEMM_MIN_COUT && k >= GEMM_MIN_K;
            match gemm::gemm_kernel(s, caps).filter(|_| wide) {
                Some(g) => ConvForm::ImplicitGemm(g),
                None => ConvForm::Direct,
            }
        }
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
    let ops = [("x", x), ("w", w), ("out", out)].into_iter().chain(bias.map(|o| ("bias", o)));
    direct::check_sizes(b, s.op.label(), s, ops)?;
    match choose_form(s, b.caps()) {
        ConvForm::Direct => direct::lower(b, DirectKernel::Conv, s, x, w, bias, out),
        ConvForm::Depthwise => direct::lower(b, DirectKernel::Depthwise, s, x, w, bias, out),
        ConvForm::DepthwiseTile => direct::lower(b, DirectKernel::DepthwiseTile, s, x, w, bias, out),
        ConvForm::TransposeGather => direct::lower(b, DirectKernel::Transpose, s, x, w, bias, out),
        ConvForm::ImplicitGemm(k) => gemm::lower(b, k, s, x, w, bias, out),
    }
}

/// The bindings of a convolution kernel: `inputs` read in that order, then `bias`, then `out`
/// written. An empty input (Cin = 0, or an empty spatial dim with padding around it) is never
/// read: the output is bound in its place, since an empty range is bound as 4 bytes, less than
/// one element of an 8-byte dtype.
fn bindings(inputs: [&Operand; 2], bias: Option<&Operand>, out: &Operand) -> Vec<(Window, BindKind)> {
    let read = |o: &Operand| if o.window.bytes == 0 { out.window } else { o.window };
    let mut v: Vec<(Window, BindKind)> = inputs.iter().map(|o| (read(o), BindKind::Read)).collect();
    v.extend(bias.map(|o| (o.window, BindKind::Read)));
    v.push((out.window, BindKind::Write));
    v
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
