//! Im2Col (§2.9.4): `conv_im2col.wgsl`, a copy of raw element bits through the window addressing
//! of [`super::pool::WindowParams`], so a variant depends only on the element's byte width.

use super::pool::CONV_WINDOW_COMMON;
use crate::movement::{raw_binding, Width};
use crate::{render, Access, COMMON};
use backend_api::DType;

/// The Im2Col kernel template.
pub const CONV_IM2COL: &str = include_str!("../wgsl/conv_im2col.wgsl");

/// The complete Im2Col module for elements of `d`: binding 1 is `x`, binding 2 `out` (packed
/// widths OR into zeroed memory).
pub fn module(d: DType) -> Result<String, String> {
    let w = Width::of(d);
    let tensors = raw_binding("x", 1, w, Access::Read) + &raw_binding("out", 2, w, Access::Write);
    let zero = match w {
        Width::B8 => "vec2<u32>(0u, 0u)",
        Width::B1 | Width::B2 | Width::B4 => "0u",
    };
    let body = render(CONV_IM2COL, &[("TENSORS", &tensors), ("ZERO", zero)])?;
    // Trusted: no loops; e < n is in the output, its plane nc < N·C, and a point is read only
    // after its `< in_dims` test.
    Ok(crate::trusted(&crate::module(&[COMMON, CONV_WINDOW_COMMON, &body])))
}
