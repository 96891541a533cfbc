//! Pool (§2.9.3): `conv_pool_max.wgsl` for every numeric dtype (the maximum computed in the
//! dtype's register type, floats through the NaN-propagating `max_f32` / `max_f64`),
//! `conv_pool_avg.wgsl` for the float dtypes (sums in f32, or f64 for F64). Both address windows
//! through `conv_window_common.wgsl` and its [`WindowParams`], which Im2Col shares.

use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH, MATH64};
use backend_api::op::PoolKind;
use backend_api::{DType, DTypeSet};

crate::params! {
    /// `WindowParams` of `conv_window_common.wgsl`: one windowed op over an `[N·C, D, H, W]`
    /// input (spatial dims padded to three; `.w` entries are the products named below).
    pub struct WindowParams {
        /// Output elements (one invocation each).
        pub n: u32,
        /// Pool.Avg: 1 to divide by the padded-extent count, 0 by the inside count.
        pub count_include_pad: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Input D, H, W and their product.
        pub in_dims: [u32; 4],
        /// Output grid OD, OH, OW and their product `L`.
        pub out_dims: [u32; 4],
        /// Kernel size per axis and its volume `Πk`.
        pub kernel: [u32; 4],
        /// Stride per axis.
        pub stride: [u32; 4],
        /// Dilation per axis.
        pub dilation: [u32; 4],
        /// Padding before each axis.
        pub pads_begin: [u32; 4],
        /// Padding after each axis.
        pub pads_end: [u32; 4],
    }
}

/// Window addressing shared with Im2Col.
pub const CONV_WINDOW_COMMON: &str = include_str!("../wgsl/conv_window_common.wgsl");
/// The max-pool kernel template.
pub const CONV_POOL_MAX: &str = include_str!("../wgsl/conv_pool_max.wgsl");
/// The average-pool kernel template.
pub const CONV_POOL_AVG: &str = include_str!("../wgsl/conv_pool_avg.wgsl");

/// Whether the spec defines Pool of `kind` on `d` (and so this family has a kernel for it).
pub fn supported(kind: PoolKind, d: DType) -> bool {
    match kind {
        PoolKind::Max => DTypeSet::NUMERIC.contains(d),
        PoolKind::Avg => DTypeSet::FLOAT.contains(d),
    }
}

/// The complete Pool module of `kind` on `d`: binding 1 is the input `x`, binding 2 the output
/// `out`. Errs for a dtype the spec does not define the pool on.
pub fn module(kind: PoolKind, d: DType) -> Result<String, String> {
    if !supported(kind, d) {
        return Err(format!("Pool.{kind:?} is not defined for {d}"));
    }
    let tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, d, Access::Write);
    let r = reg_type(d);
    let body = match kind {
        PoolKind::Max => {
            let Some((lowest, _)) = crate::reduce::bounds(d) else { return Err(format!("no lowest {d} value")) };
            let max = match d {
                DType::F64 => "max_f64(a, b)",
                DType::F32 | DType::F16 | DType::BF16 => "max_f32(a, b)",
                DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => "max(a, b)",
            };
            render(CONV_POOL_MAX, &[("TENSORS", &tensors), ("R", r), ("LOWEST", lowest), ("MAX", max)])?
        }
        PoolKind::Avg => render(CONV_POOL_AVG, &[("TENSORS", &tensors), ("ACC", r)])?,
    };
    let math64 = if d == DType::F64 { MATH64 } else { "" };
    // Trusted: every loop counts up to a kernel size from the uniform; element e < n is in the
    // output, its plane nc < N·C, and every read point passed its `< in_dims` tests, so each
    // access is in bounds for any params (see `conv_window_common.wgsl`).
    Ok(crate::trusted(&crate::module(&[COMMON, MATH, math64, CONV_WINDOW_COMMON, &body])))
}
