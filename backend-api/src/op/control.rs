//! Attributes of control flow (§2.13), and the subgraphs of any op.

use crate::op::Op;
use crate::Graph;

/// `If` (§2.13.1).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct IfAttrs {
    /// Evaluated when `cond` is true; takes the captures.
    pub then_graph: Graph,
    /// Evaluated when `cond` is false; same signature as `then_graph`.
    pub else_graph: Graph,
}

/// `While` (§2.13.2).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct WhileAttrs {
    /// Takes the loop values, returns one Bool with one element.
    pub cond_graph: Graph,
    /// Takes the loop values, returns new loop values of the same types.
    pub body_graph: Graph,
    /// Upper bound on body evaluations; reaching it is not an error.
    pub max_iterations: u64,
}

impl Op {
    /// The subgraphs the op holds (bodies of `If`, `While`, `Scan`), in attribute order; empty for
    /// every other op.
    pub fn subgraphs(&self) -> Vec<&Graph> {
        match self {
            Op::If(a) => vec![&a.then_graph, &a.else_graph],
            Op::While(a) => vec![&a.cond_graph, &a.body_graph],
            Op::Scan(a) => vec![&a.body],
            Op::Input(_) | Op::Param(_) | Op::Constant(_) | Op::Unary(_) | Op::Binary(_) | Op::Compare(_) => vec![],
            Op::Where | Op::Fma | Op::Cast { .. } | Op::Reshape { .. } | Op::Transpose { .. } => vec![],
            Op::Narrow(_) | Op::Concat { .. } | Op::Expand { .. } | Op::Reverse { .. } | Op::Pad(_) => vec![],
            Op::Gather(_) | Op::ScatterAdd(_) | Op::GatherBackward(_) | Op::Reduce(_) => vec![],
            Op::ArgMax(_) | Op::ArgMin(_) | Op::TopK(_) | Op::Cumsum(_) | Op::CumsumBackward(_) => vec![],
            Op::MatMul | Op::DotGeneral(_) | Op::FusedMatMulBiasAct { .. } | Op::GroupedMatMul(_) => vec![],
            Op::QuantMatMul(_) | Op::QuantGroupedMatMul(_) | Op::Softmax { .. } | Op::LogSoftmax { .. } => vec![],
            Op::SoftmaxCrossEntropy(_) | Op::LayerNorm(_) | Op::RmsNorm(_) | Op::GroupNorm(_) => vec![],
            Op::LayerNorm2d(_) | Op::FusedResidualLayerNorm(_) | Op::FusedResidualRmsNorm(_) => vec![],
            Op::Attention(_) | Op::AttentionBackward(_) | Op::Rope(_) | Op::RopeBackward(_) => vec![],
            Op::Conv(_) | Op::ConvTranspose(_) | Op::Pool(_) | Op::Im2Col(_) | Op::ResizeNearest(_) => vec![],
            Op::Rnn(_) | Op::Gru(_) | Op::Lstm(_) | Op::SelectiveScan(_) | Op::Mamba2(_) => vec![],
            Op::GatedDeltaNet(_) | Op::Fft(_) | Op::LogMel(_) | Op::WelchPeaks(_) => vec![],
            Op::RngBits(_) | Op::RngUniform(_) | Op::RngNormal(_) | Op::Sample(_) => vec![],
            Op::ElementwiseRegion(_) | Op::BatchElementwiseRegion(_) | Op::TransformRegion(_) => vec![],
            Op::Custom(_) | Op::LayerNormBackward(_) | Op::RmsNormBackward(_) => vec![],
            Op::SoftmaxCrossEntropyBackward(_) | Op::LogMelBackward(_) => vec![],
            #[cfg(feature = "splat")]
            Op::GaussianSplatPrepare(_)
            | Op::GaussianSplatRasterize(_)
            | Op::GaussianSplatRender(_)
            | Op::GaussianSplatRenderBackward(_) => vec![],
        }
    }

    /// The subgraphs the op holds, mutably (for rewriting them, as legalisation does), in the order
    /// of [`Op::subgraphs`].
    pub fn subgraphs_mut(&mut self) -> Vec<&mut Graph> {
        match self {
            Op::If(a) => vec![&mut a.then_graph, &mut a.else_graph],
            Op::While(a) => vec![&mut a.cond_graph, &mut a.body_graph],
            Op::Scan(a) => vec![&mut a.body],
            Op::Input(_) | Op::Param(_) | Op::Constant(_) | Op::Unary(_) | Op::Binary(_) | Op::Compare(_) => vec![],
            Op::Where | Op::Fma | Op::Cast { .. } | Op::Reshape { .. } | Op::Transpose { .. } => vec![],
            Op::Narrow(_) | Op::Concat { .. } | Op::Expand { .. } | Op::Reverse { .. } | Op::Pad(_) => vec![],
            Op::Gather(_) | Op::ScatterAdd(_) | Op::GatherBackward(_) | Op::Reduce(_) => vec![],
            Op::ArgMax(_) | Op::ArgMin(_) | Op::TopK(_) | Op::Cumsum(_) | Op::CumsumBackward(_) => vec![],
            Op::MatMul | Op::DotGeneral(_) | Op::FusedMatMulBiasAct { .. } | Op::GroupedMatMul(_) => vec![],
            Op::QuantMatMul(_) | Op::QuantGroupedMatMul(_) | Op::Softmax { .. } | Op::LogSoftmax { .. } => vec![],
            Op::SoftmaxCrossEntropy(_) | Op::LayerNorm(_) | Op::RmsNorm(_) | Op::GroupNorm(_) => vec![],
            Op::LayerNorm2d(_) | Op::FusedResidualLayerNorm(_) | Op::FusedResidualRmsNorm(_) => vec![],
            Op::Attention(_) | Op::AttentionBackward(_) | Op::Rope(_) | Op::RopeBackward(_) => vec![],
            Op::Conv(_) | Op::ConvTranspose(_) | Op::Pool(_) | Op::Im2Col(_) | Op::ResizeNearest(_) => vec![],
            Op::Rnn(_) | Op::Gru(_) | Op::Lstm(_) | Op::SelectiveScan(_) | Op::Mamba2(_) => vec![],
            Op::GatedDeltaNet(_) | Op::Fft(_) | Op::LogMel(_) | Op::WelchPeaks(_) => vec![],
            Op::RngBits(_) | Op::RngUniform(_) | Op::RngNormal(_) | Op::Sample(_) => vec![],
            Op::ElementwiseRegion(_) | Op::BatchElementwiseRegion(_) | Op::TransformRegion(_) => vec![],
            Op::Custom(_) | Op::LayerNormBackward(_) | Op::RmsNormBackward(_) => vec![],
            Op::SoftmaxCrossEntropyBackward(_) | Op::LogMelBackward(_) => vec![],
            #[cfg(feature = "splat")]
            Op::GaussianSplatPrepare(_)
            | Op::GaussianSplatRasterize(_)
            | Op::GaussianSplatRender(_)
            | Op::GaussianSplatRenderBackward(_) => vec![],
        }
    }
}
