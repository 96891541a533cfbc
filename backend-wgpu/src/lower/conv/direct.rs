//! The direct forms (`shaders::conv::direct`): one kernel per node, no scratch memory. Params are
//! normalised so that the kernels' i32 coordinate arithmetic cannot wrap: a stride that never
//! moves (one output position for Conv, at most one input position for ConvTranspose) and a
//! dilation that never applies (a kernel of size 1) become 1, and every coordinate a kernel forms
//! must stay below 2^31 (checked here, a `DeviceLimit` error otherwise).

use super::{bindings, ConvOp, ConvShape, SPATIAL};
use crate::lower::builder::{u32_of, Kernel, Lower, Operand};
use crate::lower::Grid;
use backend_api::shape::try_numel;
use backend_api::{bail, ensure, Result};
use shaders::conv::direct::{
    direct_module, DirectKernel, DEPTHWISE_TILE, DEPTHWISE_TILE_BYTES, DEPTHWISE_TILE_STAGED, DEPTHWISE_TILE_TAPS,
};
use shaders::conv::ConvParams;
use shaders::params::Params;

/// Kernels index elements with u32 and coordinates with i32: stay below 2^31.
const MAX_INDEX: usize = 1 << 31;

/// Outputs per invocation of the depthwise kernel (along the last spatial dim).
const DEPTHWISE_RUN: usize = 4;

/// Records the direct `kernel` for `s` (operand sizes checked by the caller).
pub(super) fn lower(
    b: &mut Lower<'_>,
    kernel: DirectKernel,
    s: &ConvShape,
    x: &Operand,
    w: &Operand,
    bias: Option<&Operand>,
    out: &Operand,
) -> Result<()> {
    let p = params(s, kernel)?;
    let source = direct_module(kernel, s.dtype, s.bias)?;
    let bindings = bindings([x, w], bias, out);
    b.zero_if_packed(out)?;
    let flops = flops(s);
    let grid = match kernel {
        // one workgroup per tile
        DirectKernel::DepthwiseTile => b.workgroups(p.total as usize)?,
        DirectKernel::Conv | DirectKernel::Depthwise | DirectKernel::Transpose => Grid::Threads(u64::from(p.total)),
    };
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops });
    Ok(())
}

/// Errs when an operand has 2^31 elements or more, exceeds one binding, or a coordinate the kernel
/// forms could reach 2^31.
pub(super) fn check_sizes<'o>(
    b: &Lower<'_>,
    label: &str,
    s: &ConvShape,
    ops: impl Iterator<Item = (&'o str, &'o Operand)>,
) -> Result<()> {
    let limit = b.caps().limits.max_storage_buffer_binding_size;
    for (name, o) in ops {
        ensure!(
            o.numel() < MAX_INDEX,
            DeviceLimit,
            "{label} {name} {:?} has 2^31 elements or more (the kernels index with 32 bits)",
            o.dims
        );
        ensure!(
            o.window.bytes <= limit,
            DeviceLimit,
            "{label} {name} {} {:?} is {} bytes, more than one storage binding holds on this device ({limit})",
            o.dtype,
            o.dims,
            o.window.bytes
        );
    }
    for d in 0..SPATIAL {
        // Conv forms o·stride + κ·dilation − pads_begin with o·stride + κ·dilation below the
        // padded input; ConvTranspose forms o + pads_begin − κ·dilation with κ·dilation below
        // the output padded at both ends plus one stride.
        let span = match s.op {
            ConvOp::Conv => [s.input[d], s.pads_begin[d], s.output[d], s.stride[d], s.kernel[d], s.dilation[d]],
            ConvOp::Transpose => [s.output[d], s.pads_begin[d], s.input[d], s.stride[d], s.kernel[d], s.dilation[d]],
        };
        let reach = span.iter().try_fold(0usize, |acc, &v| acc.checked_add(v));
        let ke = s.dilation[d].checked_mul(s.kernel[d]);
        if !matches!((reach, ke), (Some(r), Some(k)) if r < MAX_INDEX && k < MAX_INDEX) {
            bail!(
                DeviceLimit,
                "{label} spatial dim {d}: coordinates of input {}, output {}, kernel {}, stride {}, dilation {}, \
                 pads_begin {} reach 2^31 (the kernels use 32-bit coordinates)",
                s.input[d],
                s.output[d],
                s.kernel[d],
                s.stride[d],
                s.dilation[d],
                s.pads_begin[d]
            );
        }
    }
    Ok(())
}

/// The kernel's params: strides that never move and dilations that never apply become 1.
fn params(s: &ConvShape, kernel: DirectKernel) -> Result<ConvParams> {
    let mut stride = [1u32; 4];
    let mut dilation = [1u32; 4];
    let lanes = |v: &[usize; SPATIAL], what: &str| -> Result<[u32; 4]> {
        let mut r = [1u32; 4];
        for (d, &x) in v.iter().enumerate() {
            r[d] = u32_of(x, what)?;
        }
        Ok(r)
    };
    for d in 0..SPATIAL {
        let moves = match s.op {
            ConvOp::Conv => s.output[d] > 1,
            ConvOp::Transpose => s.input[d] > 1,
        };
        if moves {
            stride[d] = u32_of(s.stride[d], "stride")?;
        }
        if s.kernel[d] > 1 {
            dilation[d] = u32_of(s.dilation[d], "dilation")?;
        }
    }
    let rows = try_numel(&[s.n, s.cout, s.output[0], s.output[1]])?;
    let (quads, total) = match kernel {
        DirectKernel::Depthwise => {
            let quads = s.output[2].div_ceil(DEPTHWISE_RUN);
            (quads, try_numel(&[rows, quads])?)
        }
        // `quads` holds the tiles across a plane; `total` counts every tile of every plane
        DirectKernel::DepthwiseTile => {
            let (th, tw) = DEPTHWISE_TILE;
            let across = s.output[2].div_ceil(tw);
            (across, try_numel(&[s.n, s.cout, s.output[0], s.output[1].div_ceil(th), across])?)
        }
        DirectKernel::Conv | DirectKernel::Transpose => (0, try_numel(&[rows, s.output[2]])?),
    };
    let mut pads = lanes(&s.pads_begin, "pads_begin")?;
    pads[3] = 0;
    Ok(ConvParams {
        total: u32_of(total, "convolution invocations")?,
        cout: u32_of(s.cout, "output channels")?,
        cin: u32_of(s.cin, "input channels")?,
        cgi: u32_of(s.cgi(), "input channels per group")?,
        cgo: u32_of(s.cgo(), "output channels per group")?,
        in_total: u32_of(try_numel(&s.input)?, "input positions")?,
        k_total: u32_of(try_numel(&s.kernel)?, "kernel taps")?,
        quads: u32_of(quads, "output quads")?,
        out_sp: lanes(&s.output, "output positions")?,
        in_sp: lanes(&s.input, "input positions")?,
        k: lanes(&s.kernel, "kernel taps")?,
        stride,
        dilation,
        pads,
    })
}

/// Whether depthwise Conv `s` can take [`DirectKernel::DepthwiseTile`]: F32, F16 or BF16, two
/// spatial dims (a trivial depth dim, more than one output row), and a tile window (halo
/// included, with the strides and dilations the params normalise) of at most
/// [`DEPTHWISE_TILE_STAGED`] elements, at most [`DEPTHWISE_TILE_TAPS`] kernel taps, and a device
/// with the kernel's workgroup memory.
pub(super) fn depthwise_tile_fits(s: &ConvShape, caps: &crate::device::DeviceCaps) -> bool {
    let memory = u64::from(caps.limits.max_compute_workgroup_storage_size) >= DEPTHWISE_TILE_BYTES;
    let flat = s.input[0] == 1 && s.kernel[0] == 1 && s.output[0] == 1 && s.pads_begin[0] == 0;
    let float = matches!(s.dtype, backend_api::DType::F32 | backend_api::DType::F16 | backend_api::DType::BF16);
    let (th, tw) = DEPTHWISE_TILE;
    // the window's extent along dim d for `count` outputs, as the kernel computes it
    let extent = |d: usize, count: usize| -> Option<usize> {
        let stride = if s.output[d] > 1 { s.stride[d] } else { 1 };
        let dil = if s.kernel[d] > 1 { s.dilation[d] } else { 1 };
        (count - 1).checked_mul(stride)?.checked_add(s.kernel[d].saturating_sub(1).checked_mul(dil)?)?.checked_add(1)
    };
    let staged = extent(1, th).zip(extent(2, tw)).and_then(|(h, w)| h.checked_mul(w));
    let taps = s.kernel[1].checked_mul(s.kernel[2]);
    flat && float
        && memory
        && s.output[1] > 1
        && staged.is_some_and(|n| n <= DEPTHWISE_TILE_STAGED)
        && taps.is_some_and(|t| (1..=DEPTHWISE_TILE_TAPS).contains(&t))
}

/// 2 · outputs · (Cin/G) · taps for Conv, 2 · inputs · (Cout/G) · taps for ConvTranspose (taps in
/// the padding counted too); `None` on overflow.
fn flops(s: &ConvShape) -> Option<u64> {
    let (sites, per) = match s.op {
        ConvOp::Conv => (try_numel(&[s.n, s.cout]).ok()?.checked_mul(try_numel(&s.output).ok()?)?, s.cgi()),
        ConvOp::Transpose => (try_numel(&[s.n, s.cin]).ok()?.checked_mul(try_numel(&s.input).ok()?)?, s.cgo()),
    };
    let taps = try_numel(&s.kernel).ok()?;
    [sites, per, taps].iter().try_fold(2u64, |acc, &v| acc.checked_mul(u64::try_from(v).ok()?))
}
