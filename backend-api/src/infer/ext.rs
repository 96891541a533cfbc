//! Inference of the ops outside the core set (placeholders until the IR-extension work lands).
#![allow(unused_variables)]

use crate::op::*;
use crate::{bail, Result, TensorType};

/// Which recurrent cell (§2.10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecurrentKind { Rnn, Gru, Lstm }

pub(crate) fn recurrent(kind: RecurrentKind, a: &RecurrentAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for {kind:?} is not written yet")
}

pub(crate) fn gather(a: &GatherAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for gather is not written yet")
}

pub(crate) fn scatter_add(a: &ScatterAddAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for scatter_add is not written yet")
}

pub(crate) fn gather_backward(a: &GatherBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for gather_backward is not written yet")
}

pub(crate) fn arg_reduce(a: &ArgReduceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for arg_reduce is not written yet")
}

pub(crate) fn top_k(a: &TopKAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for top_k is not written yet")
}

pub(crate) fn cumsum(a: &CumsumAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for cumsum is not written yet")
}

pub(crate) fn grouped_matmul(a: &GroupedMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for grouped_matmul is not written yet")
}

pub(crate) fn quant_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for quant_matmul is not written yet")
}

pub(crate) fn quant_grouped_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for quant_grouped_matmul is not written yet")
}

pub(crate) fn softmax_cross_entropy(a: &SoftmaxCrossEntropyAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for softmax_cross_entropy is not written yet")
}

pub(crate) fn group_norm(a: &GroupNormAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for group_norm is not written yet")
}

pub(crate) fn layer_norm_2d(a: &LayerNorm2dAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for layer_norm_2d is not written yet")
}

pub(crate) fn fused_residual_norm(a: &FusedResidualNormAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for fused_residual_norm is not written yet")
}

pub(crate) fn attention(a: &AttentionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for attention is not written yet")
}

pub(crate) fn attention_backward(a: &AttentionBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for attention_backward is not written yet")
}

pub(crate) fn rope(a: &RopeAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for rope is not written yet")
}

pub(crate) fn conv(a: &ConvAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for conv is not written yet")
}

pub(crate) fn conv_transpose(a: &ConvTransposeAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for conv_transpose is not written yet")
}

pub(crate) fn pool(a: &PoolAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for pool is not written yet")
}

pub(crate) fn im2col(a: &Im2ColAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for im2col is not written yet")
}

pub(crate) fn resize_nearest(a: &ResizeNearestAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for resize_nearest is not written yet")
}

pub(crate) fn selective_scan(a: &StateSpaceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for selective_scan is not written yet")
}

pub(crate) fn mamba2(a: &StateSpaceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for mamba2 is not written yet")
}

pub(crate) fn gated_delta_net(a: &GatedDeltaNetAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for gated_delta_net is not written yet")
}

pub(crate) fn scan(a: &ScanAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for scan is not written yet")
}

pub(crate) fn fft(a: &FftAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for fft is not written yet")
}

pub(crate) fn log_mel(a: &LogMelAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for log_mel is not written yet")
}

pub(crate) fn welch_peaks(a: &WelchPeaksAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for welch_peaks is not written yet")
}

pub(crate) fn rng_bits(a: &RngBitsAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for rng_bits is not written yet")
}

pub(crate) fn rng_uniform(a: &RngUniformAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for rng_uniform is not written yet")
}

pub(crate) fn rng_normal(a: &RngNormalAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for rng_normal is not written yet")
}

pub(crate) fn sample(a: &SampleAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for sample is not written yet")
}

pub(crate) fn if_(a: &IfAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for if_ is not written yet")
}

pub(crate) fn while_(a: &WhileAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for while_ is not written yet")
}

pub(crate) fn elementwise_region(a: &RegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for elementwise_region is not written yet")
}

pub(crate) fn batch_elementwise_region(a: &RegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for batch_elementwise_region is not written yet")
}

pub(crate) fn transform_region(a: &TransformRegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for transform_region is not written yet")
}

pub(crate) fn custom(a: &CustomAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for custom is not written yet")
}

pub(crate) fn norm_backward(a: &NormBackwardAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for norm_backward is not written yet")
}

pub(crate) fn softmax_cross_entropy_backward(a: &SoftmaxCrossEntropyAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for softmax_cross_entropy_backward is not written yet")
}

pub(crate) fn log_mel_backward(a: &LogMelAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for log_mel_backward is not written yet")
}

#[cfg(feature = "splat")]
pub(crate) fn splat_prepare(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for splat_prepare is not written yet")
}

#[cfg(feature = "splat")]
pub(crate) fn splat_rasterize(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for splat_rasterize is not written yet")
}

#[cfg(feature = "splat")]
pub(crate) fn splat_render(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for splat_render is not written yet")
}

#[cfg(feature = "splat")]
pub(crate) fn splat_render_backward(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    bail!(Unsupported, "shape inference for splat_render_backward is not written yet")
}
