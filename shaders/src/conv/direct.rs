//! The direct convolution kernels: one invocation per output element (four along the innermost
//! dim in the depthwise form), looping over the input channels of the group and the kernel box.
//! Sums are computed in f32 for F32/F16/BF16 storage (like the matmul kernels) and in f64 for
//! F64; packed F16/BF16 outputs are ORed into zeroed memory.

use crate::{reg_type, render, tensor_binding, Access, COMMON};
use backend_api::{bail, DType, Error, ErrorKind, Result};

/// Params, addressing and the bias, shared by every direct kernel.
pub const CONV_DIRECT_COMMON: &str = include_str!("../wgsl/conv_direct_common.wgsl");
/// General Conv.
pub const CONV_DIRECT: &str = include_str!("../wgsl/conv_direct.wgsl");
/// Depthwise Conv (`groups == Cin == Cout`).
pub const CONV_DIRECT_DEPTHWISE: &str = include_str!("../wgsl/conv_direct_depthwise.wgsl");
/// Depthwise 2-D Conv staged through workgroup memory, one workgroup per output tile.
pub const CONV_DIRECT_DEPTHWISE_TILE: &str = include_str!("../wgsl/conv_direct_depthwise_tile.wgsl");
/// Output (rows, columns) of one workgroup of [`DirectKernel::DepthwiseTile`].
pub const DEPTHWISE_TILE: (usize, usize) = (32, 64);
/// Input elements [`DirectKernel::DepthwiseTile`] stages at most (its window with the halo).
pub const DEPTHWISE_TILE_STAGED: usize = 4096;
/// Kernel taps [`DirectKernel::DepthwiseTile`] stages at most (a channel's weights).
pub const DEPTHWISE_TILE_TAPS: usize = 256;
/// Bytes of workgroup memory [`DirectKernel::DepthwiseTile`] declares: the window and the
/// weights in f32, and a flag.
pub const DEPTHWISE_TILE_BYTES: u64 = 4 * (DEPTHWISE_TILE_STAGED as u64 + DEPTHWISE_TILE_TAPS as u64) + 4;
/// ConvTranspose, gather form.
pub const CONV_DIRECT_TRANSPOSE: &str = include_str!("../wgsl/conv_direct_transpose.wgsl");

/// Which direct kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DirectKernel {
    /// Conv, any groups: one invocation per output element.
    Conv,
    /// Conv with `groups == Cin == Cout`: one invocation per four outputs along the last dim.
    Depthwise,
    /// Depthwise 2-D Conv (a trivial depth dim) whose tile window fits
    /// [`DEPTHWISE_TILE_STAGED`] elements and kernel [`DEPTHWISE_TILE_TAPS`] taps: one workgroup per [`DEPTHWISE_TILE`] outputs of a
    /// plane, the input window staged in workgroup memory. F32, F16 and BF16.
    DepthwiseTile,
    /// ConvTranspose, gather form: one invocation per output element.
    Transpose,
}

impl DirectKernel {
    /// Every direct kernel.
    pub const ALL: [DirectKernel; 4] =
        [DirectKernel::Conv, DirectKernel::Depthwise, DirectKernel::DepthwiseTile, DirectKernel::Transpose];

    fn entry(self) -> &'static str {
        match self {
            DirectKernel::Conv => CONV_DIRECT,
            DirectKernel::Depthwise => CONV_DIRECT_DEPTHWISE,
            DirectKernel::DepthwiseTile => CONV_DIRECT_DEPTHWISE_TILE,
            DirectKernel::Transpose => CONV_DIRECT_TRANSPOSE,
        }
    }
}

/// The module of kernel `k` for float dtype `d`, with or without a bias. Bindings: 1 `x`, 2 `w`,
/// then 3 `b` (with a bias) and the output `out` last; all of dtype `d`. `Unsupported` for a
/// dtype that is not a float.
pub fn direct_module(k: DirectKernel, d: DType, bias: bool) -> Result<String> {
    if !matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
        bail!(Unsupported, "no direct convolution kernel for {d} (float dtypes only)");
    }
    if k == DirectKernel::DepthwiseTile && d == DType::F64 {
        bail!(Unsupported, "the staged depthwise kernel stages f32: no F64 form");
    }
    let mut tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("w", 2, d, Access::Read);
    if bias {
        tensors += &tensor_binding("b", 3, d, Access::Read);
    }
    tensors += &tensor_binding("out", if bias { 4 } else { 3 }, d, Access::Write);
    let bias_expr = if bias { "ld_b(co)" } else { "F(0)" };
    let slots = [("TENSORS", tensors.as_str()), ("F", reg_type(d)), ("BIAS", bias_expr)];
    let shader = |e: String| Error::new(ErrorKind::Device, format!("direct convolution shader: {e}"));
    let common = render(CONV_DIRECT_COMMON, &slots).map_err(shader)?;
    let entry = render(k.entry(), &[]).map_err(shader)?;
    let m = crate::module(&[COMMON, &common, &entry]);
    // The staged form's loops step towards bounds that cannot wrap (see its header).
    Ok(if k == DirectKernel::DepthwiseTile { crate::loops_bounded(&m) } else { m })
}
