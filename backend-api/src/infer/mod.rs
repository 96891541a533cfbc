//! Shape and dtype inference and validation (§2): the only place that knows the shape rules.
//!
//! `infer(op, input types)` checks arity, dtypes, shapes and attributes and returns the output
//! types. It is run by the builder for every new node and by [`crate::Graph::validate`].

mod elementwise;
mod ext;
pub(crate) mod linalg;
mod movement;
mod norm;
mod reduce;

use crate::op::Op;
use crate::{bail, DTypeSet, Result, TensorType};

pub use elementwise::broadcast_all;
pub(crate) use ext::cumsum_backward;

/// Infers the output types of `op` applied to inputs of types `ins`, validating everything the
/// spec lets build-time code validate.
pub fn infer(op: &Op, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    match op {
        Op::Input(a) => elementwise::input(a, ins),
        Op::Param(a) => elementwise::param(a, ins),
        Op::Constant(a) => elementwise::constant(a, ins),
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
        Op::Gather(a) => ext::gather(a, ins),
        Op::ScatterAdd(a) => ext::scatter_add(a, ins),
        Op::GatherBackward(a) => ext::gather_backward(a, ins),
        Op::ArgMax(a) | Op::ArgMin(a) => ext::arg_reduce(a, ins),
        Op::TopK(a) => ext::top_k(a, ins),
        Op::Cumsum(a) => ext::cumsum(a, ins),
        Op::CumsumBackward(a) => ext::cumsum_backward(a, ins),
        Op::GroupedMatMul(a) => ext::grouped_matmul(a, ins),
        Op::QuantMatMul(a) => ext::quant_matmul(a, ins),
        Op::QuantGroupedMatMul(a) => ext::quant_grouped_matmul(a, ins),
        Op::SoftmaxCrossEntropy(a) => ext::softmax_cross_entropy(a, ins),
        Op::GroupNorm(a) => ext::group_norm(a, ins),
        Op::LayerNorm2d(a) => ext::layer_norm_2d(a, ins),
        Op::FusedResidualLayerNorm(a) | Op::FusedResidualRmsNorm(a) => ext::fused_residual_norm(a, ins),
        Op::Attention(a) => ext::attention(a, ins),
        Op::AttentionBackward(a) => ext::attention_backward(a, ins),
        Op::Rope(a) | Op::RopeBackward(a) => ext::rope(a, ins),
        Op::Conv(a) => ext::conv(a, ins),
        Op::ConvTranspose(a) => ext::conv_transpose(a, ins),
        Op::Pool(a) => ext::pool(a, ins),
        Op::Im2Col(a) => ext::im2col(a, ins),
        Op::ResizeNearest(a) => ext::resize_nearest(a, ins),
        Op::Rnn(a) => ext::recurrent(ext::RecurrentKind::Rnn, a, ins),
        Op::Gru(a) => ext::recurrent(ext::RecurrentKind::Gru, a, ins),
        Op::Lstm(a) => ext::recurrent(ext::RecurrentKind::Lstm, a, ins),
        Op::SelectiveScan(a) => ext::selective_scan(a, ins),
        Op::Mamba2(a) => ext::mamba2(a, ins),
        Op::GatedDeltaNet(a) => ext::gated_delta_net(a, ins),
        Op::Scan(a) => ext::scan(a, ins),
        Op::Fft(a) => ext::fft(a, ins),
        Op::LogMel(a) => ext::log_mel(a, ins),
        Op::WelchPeaks(a) => ext::welch_peaks(a, ins),
        Op::RngBits(a) => ext::rng_bits(a, ins),
        Op::RngUniform(a) => ext::rng_uniform(a, ins),
        Op::RngNormal(a) => ext::rng_normal(a, ins),
        Op::Sample(a) => ext::sample(a, ins),
        Op::If(a) => ext::if_(a, ins),
        Op::While(a) => ext::while_(a, ins),
        Op::ElementwiseRegion(a) => ext::elementwise_region(a, ins),
        Op::BatchElementwiseRegion(a) => ext::batch_elementwise_region(a, ins),
        Op::TransformRegion(a) => ext::transform_region(a, ins),
        Op::Custom(a) => ext::custom(a, ins),
        Op::LayerNormBackward(a) | Op::RmsNormBackward(a) => ext::norm_backward(a, ins),
        Op::SoftmaxCrossEntropyBackward(a) => ext::softmax_cross_entropy_backward(a, ins),
        Op::LogMelBackward(a) => ext::log_mel_backward(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(a) => ext::splat_prepare(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRasterize(a) => ext::splat_rasterize(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRender(a) => ext::splat_render(a, ins),
        #[cfg(feature = "splat")]
        Op::GaussianSplatRenderBackward(a) => ext::splat_render_backward(a, ins),
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
