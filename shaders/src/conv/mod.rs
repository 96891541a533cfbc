//! Variants of the convolution family (§2.9): Pool and Im2Col on the shared sliding-window
//! addressing of `conv_window_common.wgsl` ([`pool`], [`im2col`]), ResizeNearest ([`resize`]),
//! and the Conv/ConvTranspose kernels: the direct forms in [`direct`] (general Conv, depthwise
//! Conv, ConvTranspose in gather form) and Conv as an implicit GEMM on the dense product kernels
//! in [`gemm`]; the lowering picks the form (`backend-wgpu/src/lower/conv/mod.rs`).

pub mod direct;
pub mod gemm;
pub mod im2col;
pub mod pool;
pub mod resize;
crate::params! {
    /// `ConvParams` of `conv_direct_common.wgsl`. Spatial lists are padded to three dims with
    /// leading ones (size, kernel, stride, dilation 1; pads 0); the fourth lane is unused.
    pub struct ConvParams {
        /// Invocations that do work: output elements (depthwise: rows · quads).
        pub total: u32,
        /// Output channels.
        pub cout: u32,
        /// Input channels.
        pub cin: u32,
        /// Input channels per group.
        pub cgi: u32,
        /// Output channels per group.
        pub cgo: u32,
        /// Elements of one input channel (the product of the input's spatial dims).
        pub in_total: u32,
        /// Taps of one kernel (the product of the kernel's spatial dims).
        pub k_total: u32,
        /// Depthwise form: groups of four outputs per output row (`⌈W_out / 4⌉`); else unused.
        pub quads: u32,
        /// Output spatial dims.
        pub out_sp: [u32; 4],
        /// Input spatial dims.
        pub in_sp: [u32; 4],
        /// Kernel spatial dims.
        pub k: [u32; 4],
        /// Strides.
        pub stride: [u32; 4],
        /// Dilations.
        pub dilation: [u32; 4],
        /// Padding before each dim.
        pub pads: [u32; 4],
    }
}

/// The params structs of this module (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[
    <pool::WindowParams as crate::params::Params>::LAYOUT,
    <resize::ResizeParams as crate::params::Params>::LAYOUT,
    <ConvParams as crate::params::Params>::LAYOUT,
    <gemm::ConvGemmParams as crate::params::Params>::LAYOUT,
    <gemm::ConvCheckParams as crate::params::Params>::LAYOUT,
];
