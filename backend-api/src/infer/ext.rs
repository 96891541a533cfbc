//! Inference and validation of the ops outside the core set, one file per op family.

mod attention;
mod control;
mod conv;
mod indexing;
mod norm;
mod quant;
mod random;
mod region;
mod sequence;
mod signal;
#[cfg(feature = "splat")]
mod splat;
mod util;

pub(crate) use attention::{attention, attention_backward, rope};
pub(crate) use control::{if_, scan, while_};
pub(crate) use conv::{conv, conv_transpose, im2col, pool, resize_nearest};
pub(crate) use indexing::{arg_reduce, cumsum, cumsum_backward, gather, gather_backward, scatter_add, top_k};
pub(crate) use norm::{
    fused_residual_norm, group_norm, layer_norm_2d, norm_backward, softmax_cross_entropy,
    softmax_cross_entropy_backward,
};
pub(crate) use quant::{grouped_matmul, quant_grouped_matmul, quant_matmul};
pub(crate) use random::{rng_bits, rng_normal, rng_uniform, sample};
pub(crate) use region::{batch_elementwise_region, elementwise_region, transform_region};
pub(crate) use sequence::{gated_delta_net, mamba2, recurrent, selective_scan, RecurrentKind};
pub(crate) use signal::{fft, log_mel, log_mel_backward, welch_peaks};
#[cfg(feature = "splat")]
pub(crate) use splat::{splat_prepare, splat_rasterize, splat_render, splat_render_backward};

use crate::op::CustomAttrs;
use crate::{Result, TensorType};

/// `Custom` (§2.15.1): the registered definition validates and types the node.
pub(crate) fn custom(a: &CustomAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    crate::custom::infer_custom(&a.name, &a.attrs, ins)
}
