//! The ops of the IR (§2 of the spec): a short enum of families with small attribute structs.
//!
//! Every op of SPEC-ops.md has a variant here, including those no backend lowers yet. Attribute
//! values stored in an `Op` are canonical (axes non-negative, defaults filled in); the builder
//! methods of [`crate::GraphBuilder`] accept the spec's looser forms and canonicalise.

mod ext;
mod subops;

pub use ext::*;
pub use subops::{BinaryOp, CompareOp, ReduceOp, UnaryOp};

use crate::{DType, Shape};
use std::sync::Arc;

/// A graph input, bound by name at run (§2.1.1).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct InputAttrs {
    /// Non-empty, unique among the graph's inputs and params.
    pub name: String,
    /// Declared dtype.
    pub dtype: DType,
    /// Declared shape; symbolic dims bind at run.
    pub shape: Shape,
}

/// A named weight uploaded with `set_param` (§2.1.2). Shapes are static.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ParamAttrs {
    /// Non-empty name.
    pub name: String,
    /// Declared dtype.
    pub dtype: DType,
    /// Declared static shape.
    pub shape: Vec<usize>,
}

/// A constant tensor stored in the graph (§2.1.3).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ConstantAttrs {
    /// Element type.
    pub dtype: DType,
    /// Static shape.
    pub shape: Vec<usize>,
    /// `numel · size(dtype)` little-endian bytes; shared so that cloning a graph is cheap.
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::hex_arc"))]
    pub data: Arc<[u8]>,
}

/// One entry of `Reshape`'s target shape (§2.3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DimSpec {
    /// A static size (0 means size 0, never "copy").
    Static(usize),
    /// A symbolic dim.
    Sym(String),
    /// `-1`: inferred from the element count; at most one per shape.
    Infer,
}

impl From<usize> for DimSpec {
    fn from(n: usize) -> DimSpec {
        DimSpec::Static(n)
    }
}

impl From<&str> for DimSpec {
    fn from(s: &str) -> DimSpec {
        DimSpec::Sym(s.to_string())
    }
}

/// `Narrow`: a strided slice along one axis (§2.3.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct NarrowAttrs {
    /// Canonical axis.
    pub axis: usize,
    /// Canonical start in `[0, d]`.
    pub start: usize,
    /// Number of elements taken.
    pub len: usize,
    /// Step ≥ 1.
    pub step: usize,
}

/// How `Pad` fills the border (§2.3.7).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum PadMode {
    /// A constant, converted to the dtype by the `Cast` rules (from F64).
    Constant {
        /// The fill value (finite).
        #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
        value: f64,
    },
    /// Mirror without repeating the edge (numpy `reflect`).
    Reflect,
    /// Replicate the edge.
    Edge,
}

/// `Pad` attributes (§2.3.7).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct PadAttrs {
    /// Elements added before each axis.
    pub pads_begin: Vec<usize>,
    /// Elements added after each axis.
    pub pads_end: Vec<usize>,
    /// Fill rule.
    pub mode: PadMode,
}

/// `Reduce` attributes (§2.5.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ReduceAttrs {
    /// The reduction.
    pub op: ReduceOp,
    /// Canonical, distinct axes (sorted ascending).
    pub axes: Vec<usize>,
    /// Keep reduced axes as size 1.
    pub keep_dims: bool,
}

/// `DotGeneral` attributes (§2.6.2). All axes canonical.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DotGeneralAttrs {
    /// Batch axes of `lhs`.
    pub lhs_batch: Vec<usize>,
    /// Batch axes of `rhs`, paired with `lhs_batch`.
    pub rhs_batch: Vec<usize>,
    /// Contracting axes of `lhs`.
    pub lhs_contract: Vec<usize>,
    /// Contracting axes of `rhs`, paired with `lhs_contract`.
    pub rhs_contract: Vec<usize>,
}

/// `LayerNorm` / `RmsNorm` attributes (§2.7.4–2.7.5). Has `beta` iff the node has 3 inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct NormAttrs {
    /// First normalised axis (canonical).
    pub axis: usize,
    /// Finite, ≥ 0.
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub eps: f32,
}

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
