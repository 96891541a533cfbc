//! ResizeNearest (§2.9.5): `conv_resize.wgsl`, a copy of raw element bits, so a variant depends
//! only on the element's byte width.

use crate::movement::{raw_binding, Width};
use crate::{render, Access, COMMON};
use backend_api::DType;

crate::params! {
    /// `ResizeParams` of `conv_resize.wgsl`: an `[N·C, D, H, W]` input (spatial dims padded to
    /// three with factor 1).
    pub struct ResizeParams {
        /// Output elements (one invocation each).
        pub n: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
        /// Input D, H, W and their product.
        pub in_dims: [u32; 4],
        /// Output D, H, W and their product.
        pub out_dims: [u32; 4],
        /// Factor per axis (the fourth entry unused, 1).
        pub scales: [u32; 4],
    }
}

/// The ResizeNearest kernel template.
pub const CONV_RESIZE: &str = include_str!("../wgsl/conv_resize.wgsl");

/// The complete ResizeNearest module for elements of `d`: binding 1 is `x`, binding 2 `out`
/// (packed widths OR into zeroed memory).
pub fn module(d: DType) -> Result<String, String> {
    let w = Width::of(d);
    let tensors = raw_binding("x", 1, w, Access::Read) + &raw_binding("out", 2, w, Access::Write);
    let body = render(CONV_RESIZE, &[("TENSORS", &tensors)])?;
    // Trusted: no loops; e < n is in the output and the lowering sets out_dims = in_dims · scales,
    // so every source coordinate o div scales is inside the input.
    Ok(crate::trusted(&crate::module(&[COMMON, &body])))
}
