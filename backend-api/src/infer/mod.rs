//! Shape and dtype inference and validation (§2): the only place that knows the shape rules, one
//! file per op family (the family's [`crate::Family::module`] name; `util` holds shared checks).
//!
//! `infer(op, input types)` checks arity, dtypes, shapes and attributes and returns the output
//! types. It is run by the builder for every new node and by [`crate::Graph::validate`].

mod attention;
mod backward;
mod control;
mod conv;
mod elementwise;
mod indexing;
mod leaf;
pub(crate) mod linalg;
mod movement;
mod norm;
mod random;
mod reduce;
mod region;
mod sequence;
mod signal;
#[cfg(feature = "splat")]
mod splat;
mod util;

use crate::op::Op;
use crate::{bail, DTypeSet, Result, TensorType};

pub use elementwise::broadcast_all;
pub(crate) use reduce::cumsum_backward;

/// Infers the output types of `op` applied to inputs of types `ins`, validating everything the
/// spec lets build-time code validate. Every output's byte size must fit
/// [`MAX_TENSOR_BYTES`](crate::shape::MAX_TENSOR_BYTES) (its static dims, for a symbolic shape):
/// an impossible size is a `Shape` error here, at build, never an overflow later.
pub fn infer(op: &Op, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let outs = infer_rule(op, ins)?;
    for (i, t) in outs.iter().enumerate() {
        size_ok(t).map_err(|e| e.context(format!("output {i}")))?;
    }
    Ok(outs)
}

/// Checks that a type's byte size (over its static dims) fits one tensor.
pub(crate) fn size_ok(t: &TensorType) -> Result<()> {
    let dims: Vec<usize> = t.shape.dims().iter().filter_map(crate::Dim::as_static).collect();
    match crate::shape::nbytes(t.dtype, &dims) {
        Ok(_) => Ok(()),
        Err(_) => {
            bail!(Shape, "{t} is larger than any tensor can be ({} bytes at most)", crate::shape::MAX_TENSOR_BYTES)
        }
    }
}

/// The op's own shape rule.
fn infer_rule(op: &Op, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    match op {
        Op::Input(a) => leaf::input(a, ins),
        Op::Param(a) => leaf::param(a, ins),
        Op::Constant(a) => leaf::constant(a, ins),
        Op::Unary(u) => elementwise::unary(*u, ins),
        Op::Binary(b) => elementwise::binary(*b, ins),
        Op::Compare(c) => elementwise::compare(*c, ins),
        Op::Where => elementwise::where_(ins),
        Op::Fma => elementwise::fma(ins),
        Op::Cast { to } => elementwise::cast(*to, ins),
        Op::Reshape { new_shape } => movement::reshape(new_shape, ins),
        Op::Transpose { perm } => movement::transpose(perm, ins),
        Op::Narrow(a) => movement::narrow(a, ins),
        Op::Concat { axis } => movement::concat(*axis, ins),
        Op::Expand { shape } => movement::expand(shape, ins),
        Op::Reverse { axes } => movement::reverse(axes, ins),
        Op::Pad(a) => movement::pad(a, ins),
        Op::Reduce(a) => reduce::reduce(a, ins),
        Op::MatMul => linalg::matmul(ins),
        Op::DotGeneral(a) => linalg::dot_general(a, ins),
        Op::FusedMatMulBiasAct { activation } => linalg::fused_matmul(*activation, ins),
        Op::Softmax { axis } | Op::LogSoftmax { axis } => norm::softmax(*axis, ins),
        Op::LayerNorm(a) | Op::RmsNorm(a) => norm::norm(a, ins),
        Op::Gather(a) => indexing::gather(a, ins),
        Op::ScatterAdd(a) => indexing::scatter_add(a, ins),
        Op::GatherBackward(a) => indexing::gather_backward(a, ins),
        Op::ArgMax(a) | Op::ArgMin(a) => reduce::arg_reduce(a, ins),
        Op::TopK(a) => reduce::top_k(a, ins),
        Op::Cumsum(a) => reduce::cumsum(a, ins),
        Op::CumsumBackward(a) => reduce::cumsum_backward(a, ins),
        Op::GroupedMatMul(a) => linalg::grouped_matmul(a, ins),
        Op::QuantMatMul(a) => linalg::quant_matmul(a, ins),
        Op::QuantGroupedMatMul(a) => linalg::quant_grouped_matmul(a, ins),
        Op::SoftmaxCrossEntropy(a) => norm::softmax_cross_entropy(a, ins),
        Op::GroupNorm(a) => norm::group_norm(a, ins),
        Op::LayerNorm2d(a) => norm::layer_norm_2d(a, ins),
        Op::FusedResidualLayerNorm(a) | Op::FusedResidualRmsNorm(a) => norm::fused_residual_norm(a, ins),
        Op::Attention(a) => attention::attention(a, ins),
        Op::AttentionBackward(a) => attention::attention_backward(a, ins),
        Op::Rope(a) | Op::RopeBackward(a) => attention::rope(a, ins),
        Op::Conv(a) => conv::conv(a, ins),
        Op::ConvTranspose(a) => conv::conv_transpose(a, ins),
        Op::Pool(a) => conv::pool(a, ins),
        Op::Im2Col(a) => conv::im2col(a, ins),
        Op::ResizeNearest(a) => conv::resize_nearest(a, ins),
        Op::Rnn(a) => sequence::recurrent(sequence::RecurrentKind::Rnn, a, ins),
        Op::Gru(a) => sequence::recurrent(sequence::RecurrentKind::Gru, a, ins),
        Op::Lstm(a) => sequence::recurrent(sequence::RecurrentKind::Lstm, a, ins),
        Op::SelectiveScan(a) => sequence::selective_scan(a, ins),
        Op::Mamba2(a) => sequence::mamba2(a, ins),
        Op::GatedDeltaNet(a) => sequence::gated_delta_net(a, ins),
        Op::Scan(a) => sequence::scan(a, ins),
        Op::Fft(a) => signal::fft(a, ins),
        Op::LogMel(a) => signal::log_mel(a, ins),
        Op::WelchPeaks(a) => signal::welch_peaks(a, ins),
        Op::RngBits(a) => random::rng_bits(a, ins),
        Op::RngUniform(a) => random::rng_uniform(a, ins),
        Op::RngNormal(a) => random::rng_normal(a, ins),
        Op::Sample(a) => random::sample(a, ins),
        Op::If(a) => control::if_(a, ins),
        Op::While(a) => control::while_(a, ins),
        Op::ElementwiseRegion(a) => region::elementwise_region(a, ins),
        Op::BatchElementwiseRegion(a) => region::batch_elementwise_region(a, ins),
        Op::TransformRegion(a) => region::transform_region(a, ins),
        Op::Custom(a) => crate::custom::infer_custom(&a.name, &a.attrs, ins),
        Op::LayerNormBackward(a) | Op::RmsNormBackward(a) => backward::norm_backward(a, ins),
        Op::SoftmaxCrossEntropyBackward(a) => backward::softmax_cross_entropy_backward(a, ins),
        Op::LogMelBackward(a) => backward::log_mel_backward(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(a) => splat::splat_prepare(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRasterize(a) => splat::splat_rasterize(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRender(a) => splat::splat_render(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRenderBackward(a) => splat::splat_render_backward(a, ins),
    }
}

/// Checks the input count.
pub(crate) fn arity(ins: &[TensorType], n: usize, what: &str) -> Result<()> {
    if ins.len() != n {
        bail!(Arity, "{what} takes {n} input(s), got {}", ins.len());
    }
    Ok(())
}

/// Checks that `t`'s dtype is in `allowed`.
pub(crate) fn dtype_in(t: &TensorType, allowed: DTypeSet, what: &str) -> Result<()> {
    if !allowed.contains(t.dtype) {
        bail!(DType, "{what} has dtype {} but must be one of {allowed}", t.dtype);
    }
    Ok(())
}

/// Checks that every input has the dtype of the first.
pub(crate) fn same_dtype(ins: &[TensorType], what: &str) -> Result<()> {
    if let Some(first) = ins.first() {
        for (i, t) in ins.iter().enumerate().skip(1) {
            if t.dtype != first.dtype {
                bail!(DType, "{what}: input {i} is {} but input 0 is {}; use Cast", t, first);
            }
        }
    }
    Ok(())
}

/// Checks an already canonical axis against a rank.
pub(crate) fn axis_ok(axis: usize, rank: usize, what: &str) -> Result<()> {
    if axis >= rank {
        bail!(Axis, "{what}: axis {axis} out of range for rank {rank}");
    }
    Ok(())
}

/// Checks the maximum rank (§1.2).
pub(crate) fn rank_ok(t: &TensorType) -> Result<()> {
    if t.rank() > crate::shape::MAX_RANK {
        bail!(Shape, "rank {} of {t} exceeds the maximum rank {}", t.rank(), crate::shape::MAX_RANK);
    }
    Ok(())
}
