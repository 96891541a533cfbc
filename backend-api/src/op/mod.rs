//! The ops of the IR (§2 of the spec): a short enum of families with small attribute structs, one
//! file per family (the family's [`crate::Family::module`] name).
//!
//! Every op of SPEC-ops.md has a variant here, including those no backend lowers yet. Attribute
//! values stored in an `Op` are canonical (axes non-negative, defaults filled in); the builder
//! methods of [`crate::GraphBuilder`] accept the spec's looser forms and canonicalise.

mod attention;
mod backward;
mod control;
mod conv;
mod custom;
mod indexing;
mod leaf;
mod linalg;
mod movement;
mod norm;
mod random;
mod reduce;
mod region;
mod sequence;
mod signal;
mod splat;
mod subops;

pub use attention::{
    AttentionAttrs, AttentionBackwardAttrs, AttnGrad, AttnLayout, MaskAlign, MaskKind, RopeAttrs, RopeStyle,
};
pub use backward::{NormBackwardAttrs, NormGrad};
pub use control::{IfAttrs, WhileAttrs};
pub use conv::{expand_list, ConvAttrs, ConvTransposeAttrs, Im2ColAttrs, PoolAttrs, PoolKind, ResizeNearestAttrs};
pub use custom::CustomAttrs;
pub use indexing::{GatherAttrs, GatherBackwardAttrs, ScatterAddAttrs};
pub use leaf::{ConstantAttrs, InputAttrs, ParamAttrs};
pub use linalg::{DotGeneralAttrs, GroupedMatMulAttrs, QuantFormat, QuantMatMulAttrs};
pub use movement::{DimSpec, NarrowAttrs, PadAttrs, PadMode};
pub use norm::{FusedResidualNormAttrs, GroupNormAttrs, LayerNorm2dAttrs, NormAttrs, SoftmaxCrossEntropyAttrs};
pub use random::{RngBitsAttrs, RngNormalAttrs, RngUniformAttrs, SampleAttrs};
pub use reduce::{ArgReduceAttrs, CumsumAttrs, ReduceAttrs, TopKAttrs};
pub use region::{RegionAttrs, RegionInstr, RegionProgram, TransformRegionAttrs, MAX_REGION_INPUTS, MAX_REGION_INSTRS};
pub use sequence::{GatedDeltaNetAttrs, RecurrentAttrs, RnnNonlinearity, ScanAttrs, StateSpaceAttrs};
pub use signal::{FftAttrs, FftNorm, FloorScope, LogMelAttrs, WelchPeaksAttrs};
pub use splat::SplatAttrs;
pub use subops::{BinaryOp, CompareOp, ReduceOp, UnaryOp};

use crate::{DType, Shape};

/// One op with its attributes. Families with sub-ops nest an enum (`Unary(UnaryOp)`), so that
/// adding a sub-op is a compile error wherever it is not handled.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum Op {
    // ---- leaves (§2.1)
    /// A graph input.
    Input(InputAttrs),
    /// A named weight.
    Param(ParamAttrs),
    /// A constant tensor.
    Constant(ConstantAttrs),
    // ---- elementwise (§2.2)
    /// `y = f(x)`.
    Unary(UnaryOp),
    /// `out = g(a, b)` with broadcasting.
    Binary(BinaryOp),
    /// Bool comparison with broadcasting.
    Compare(CompareOp),
    /// `cond ? x : y` with broadcasting.
    Where,
    /// `a·b + c` with broadcasting.
    Fma,
    /// Value conversion to `to`.
    Cast {
        /// Target dtype.
        to: DType,
    },
    // ---- shape and movement (§2.3)
    /// Same elements, new shape.
    Reshape {
        /// Target dims (`Infer` at most once).
        new_shape: Vec<DimSpec>,
    },
    /// Axis permutation.
    Transpose {
        /// A permutation of `0..rank`.
        perm: Vec<usize>,
    },
    /// Strided slice along one axis.
    Narrow(NarrowAttrs),
    /// Inputs joined along an axis.
    Concat {
        /// Canonical axis.
        axis: usize,
    },
    /// numpy `broadcast_to`.
    Expand {
        /// Target shape.
        shape: Shape,
    },
    /// Flip along a set of axes.
    Reverse {
        /// Canonical distinct axes.
        axes: Vec<usize>,
    },
    /// Border padding.
    Pad(PadAttrs),
    // ---- indexing (§2.4)
    /// Gather along an axis.
    Gather(GatherAttrs),
    /// Scatter-add along an axis.
    ScatterAdd(ScatterAddAttrs),
    /// Gradient of `Gather`.
    GatherBackward(GatherBackwardAttrs),
    // ---- reductions and scans (§2.5)
    /// Sum/Mean/Max/Min/Prod over axes.
    Reduce(ReduceAttrs),
    /// Index of the maximum.
    ArgMax(ArgReduceAttrs),
    /// Index of the minimum.
    ArgMin(ArgReduceAttrs),
    /// The k largest/smallest values and their indices.
    TopK(TopKAttrs),
    /// Prefix sums.
    Cumsum(CumsumAttrs),
    /// Gradient of `Cumsum`.
    CumsumBackward(CumsumAttrs),
    // ---- linear algebra (§2.6)
    /// Batched matrix product with broadcast batch dims.
    MatMul,
    /// General contraction.
    DotGeneral(DotGeneralAttrs),
    /// `act(MatMul(a, b) + bias)`.
    FusedMatMulBiasAct {
        /// Optional float unary activation.
        activation: Option<UnaryOp>,
    },
    /// Mixture-of-experts matmul.
    GroupedMatMul(GroupedMatMulAttrs),
    /// Matmul with a block-quantised weight.
    QuantMatMul(QuantMatMulAttrs),
    /// Grouped matmul with block-quantised weights.
    QuantGroupedMatMul(QuantMatMulAttrs),
    // ---- normalisation (§2.7)
    /// Softmax along an axis.
    Softmax {
        /// Canonical axis.
        axis: usize,
    },
    /// Log-softmax along an axis.
    LogSoftmax {
        /// Canonical axis.
        axis: usize,
    },
    /// Soft-target cross-entropy per slice.
    SoftmaxCrossEntropy(SoftmaxCrossEntropyAttrs),
    /// Layer normalisation over the trailing axes.
    LayerNorm(NormAttrs),
    /// RMS normalisation over the trailing axes.
    RmsNorm(NormAttrs),
    /// Group normalisation.
    GroupNorm(GroupNormAttrs),
    /// Channel normalisation per spatial position.
    LayerNorm2d(LayerNorm2dAttrs),
    /// Residual add + LayerNorm.
    FusedResidualLayerNorm(FusedResidualNormAttrs),
    /// Residual add + RmsNorm.
    FusedResidualRmsNorm(FusedResidualNormAttrs),
    // ---- attention and position (§2.8)
    /// Scaled dot-product attention.
    Attention(AttentionAttrs),
    /// Gradient of `Attention`.
    AttentionBackward(AttentionBackwardAttrs),
    /// Rotary position embedding.
    Rope(RopeAttrs),
    /// Gradient of `Rope`.
    RopeBackward(RopeAttrs),
    // ---- convolution, pooling, resize (§2.9)
    /// N-d convolution.
    Conv(ConvAttrs),
    /// N-d transposed convolution.
    ConvTranspose(ConvTransposeAttrs),
    /// Max/avg pooling.
    Pool(PoolAttrs),
    /// Sliding-window unfold.
    Im2Col(Im2ColAttrs),
    /// Integer-factor nearest upsampling.
    ResizeNearest(ResizeNearestAttrs),
    // ---- sequence models (§2.10)
    /// Elman RNN.
    Rnn(RecurrentAttrs),
    /// GRU.
    Gru(RecurrentAttrs),
    /// LSTM.
    Lstm(RecurrentAttrs),
    /// Mamba-1 selective scan.
    SelectiveScan(StateSpaceAttrs),
    /// Mamba-2 SSD recurrence.
    Mamba2(StateSpaceAttrs),
    /// Gated delta rule.
    GatedDeltaNet(GatedDeltaNetAttrs),
    /// General loop over a leading axis.
    Scan(ScanAttrs),
    // ---- signal (§2.11)
    /// Complex FFT over the last axis.
    Fft(FftAttrs),
    /// Whisper-style log-mel spectrogram.
    LogMel(LogMelAttrs),
    /// Strongest bins of a Welch spectrum.
    WelchPeaks(WelchPeaksAttrs),
    // ---- randomness (§2.12)
    /// Raw Philox words.
    RngBits(RngBitsAttrs),
    /// Uniform floats.
    RngUniform(RngUniformAttrs),
    /// Normal floats.
    RngNormal(RngNormalAttrs),
    /// Token sampling.
    Sample(SampleAttrs),
    // ---- control flow (§2.13)
    /// Two-way branch.
    If(IfAttrs),
    /// Bounded loop.
    While(WhileAttrs),
    // ---- fused regions (§2.14)
    /// Fused elementwise program.
    ElementwiseRegion(RegionAttrs),
    /// One-input program over many tensors, stacked.
    BatchElementwiseRegion(RegionAttrs),
    /// Elementwise program with one nearest-upsampled input.
    TransformRegion(TransformRegionAttrs),
    // ---- custom (§2.15)
    /// A registered custom op.
    Custom(CustomAttrs),
    // ---- training backward (§2.16)
    /// Gradient of `LayerNorm`.
    LayerNormBackward(NormBackwardAttrs),
    /// Gradient of `RmsNorm`.
    RmsNormBackward(NormBackwardAttrs),
    /// Gradient of `SoftmaxCrossEntropy`.
    SoftmaxCrossEntropyBackward(SoftmaxCrossEntropyAttrs),
    /// Gradient of `LogMel`.
    LogMelBackward(LogMelAttrs),
    // ---- Gaussian splatting (§2.17)
    /// Project Gaussians to screen space.
    #[cfg(feature = "splat")]
    GaussianSplatPrepare(SplatAttrs),
    /// Rasterise projected Gaussians.
    #[cfg(feature = "splat")]
    GaussianSplatRasterize(SplatAttrs),
    /// Prepare + rasterise.
    #[cfg(feature = "splat")]
    GaussianSplatRender(SplatAttrs),
    /// Gradient of `GaussianSplatRender`.
    #[cfg(feature = "splat")]
    GaussianSplatRenderBackward(SplatAttrs),
}
