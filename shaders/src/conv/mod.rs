//! Variants of the convolution family (§2.9): Pool and Im2Col on the shared sliding-window
//! addressing of `conv_window_common.wgsl` ([`pool`], [`im2col`]), ResizeNearest ([`resize`]).

pub mod im2col;
pub mod pool;
pub mod resize;

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] =
    &[<pool::WindowParams as crate::params::Params>::LAYOUT, <resize::ResizeParams as crate::params::Params>::LAYOUT];
