//! The op table: for every op of the spec (sub-ops expanded), its name, the dtypes it accepts and
//! its tolerance class (§1.11, §3). Backends, conformance and the report iterate this table;
//! nothing else lists the ops.

use crate::op::{BinaryOp, CompareOp, Op, ReduceOp, UnaryOp};
use crate::{DType, DTypeSet};

/// Tolerance classes (§1.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tolerance {
    /// Bit-equal after the equivalences of §1.11.
    Exact,
    /// 1e-6 (F32/F64), 1e-3 (F16), 8e-3 (BF16).
    Close,
    /// 1e-4, 2e-3, 1.6e-2.
    Approx,
    /// 1e-3, 1e-2, 5e-2.
    Loose,
}

impl Tolerance {
    /// `(rtol, atol)` for an output of `dtype` (0, 0 for Exact and for non-float outputs).
    pub fn rtol_atol(self, dtype: DType) -> (f64, f64) {
        let half = match dtype {
            DType::F16 => 1,
            DType::BF16 => 2,
            DType::F32 | DType::F64 | DType::C64 => 0,
            DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool => return (0.0, 0.0),
        };
        let t = match self {
            Tolerance::Exact => [0.0, 0.0, 0.0],
            Tolerance::Close => [1e-6, 1e-3, 8e-3],
            Tolerance::Approx => [1e-4, 2e-3, 1.6e-2],
            Tolerance::Loose => [1e-3, 1e-2, 5e-2],
        };
        (t[half], t[half])
    }
}

/// One row of the op table.
#[derive(Clone, Debug, PartialEq)]
pub struct OpEntry {
    /// The spec's name: `MatMul`, or `Family.SubOp` (`Unary.Exp`, `Reduce.Sum`).
    pub name: String,
    /// Dtypes of the op's main input that the spec allows.
    pub dtypes: DTypeSet,
    /// Class for float outputs.
    pub tolerance: Tolerance,
    /// Whether the absolute tolerance is magnitude-scaled ((M) in §3).
    pub magnitude: bool,
}

const NUM: DTypeSet = DTypeSet::NUMERIC;
const FLT: DTypeSet = DTypeSet::FLOAT;
const F32F: DTypeSet = DTypeSet::FLOAT32_FAMILY;
const ALL: DTypeSet = DTypeSet::ALL;

macro_rules! plain_ops {
    ($($name:literal => $dt:expr, $tol:ident, $m:literal;)*) => {
        &[$(($name, $dt, Tolerance::$tol, $m),)*]
    };
}

/// Ops without sub-ops: name, dtypes, class, magnitude-scaled.
const PLAIN: &[(&str, DTypeSet, Tolerance, bool)] = plain_ops! {
    "Input" => ALL, Exact, false;
    "Param" => ALL, Exact, false;
    "Constant" => ALL, Exact, false;
    "Where" => ALL, Exact, false;
    "Fma" => FLT, Close, false;
    "Cast" => ALL, Exact, false;
    "Reshape" => ALL, Exact, false;
    "Transpose" => ALL, Exact, false;
    "Narrow" => ALL, Exact, false;
    "Concat" => ALL, Exact, false;
    "Expand" => ALL, Exact, false;
    "Reverse" => ALL, Exact, false;
    "Pad" => ALL, Exact, false;
    "Gather" => ALL, Exact, false;
    "ScatterAdd" => NUM.union(DTypeSet::C64), Close, true;
    "GatherBackward" => FLT, Close, true;
    "ArgMax" => NUM.union(DTypeSet::BOOL), Exact, false;
    "ArgMin" => NUM.union(DTypeSet::BOOL), Exact, false;
    "TopK" => NUM, Exact, false;
    "Cumsum" => NUM, Approx, true;
    "CumsumBackward" => FLT, Approx, true;
    "MatMul" => FLT, Approx, true;
    "DotGeneral" => FLT, Approx, true;
    "FusedMatMulBiasAct" => FLT, Approx, true;
    "GroupedMatMul" => FLT, Approx, true;
    "QuantMatMul" => F32F, Approx, true;
    "QuantGroupedMatMul" => F32F, Approx, true;
    "Softmax" => FLT, Approx, false;
    "LogSoftmax" => FLT, Approx, false;
    "SoftmaxCrossEntropy" => FLT, Approx, false;
    "LayerNorm" => FLT, Approx, false;
    "RmsNorm" => FLT, Approx, false;
    "GroupNorm" => FLT, Approx, false;
    "LayerNorm2d" => FLT, Approx, false;
    "FusedResidualLayerNorm" => FLT, Approx, false;
    "FusedResidualRmsNorm" => FLT, Approx, false;
    "Attention" => F32F, Approx, true;
    "AttentionBackward" => F32F, Loose, false;
    "Rope" => F32F, Close, false;
    "RopeBackward" => F32F, Close, false;
    "Conv" => FLT, Approx, true;
    "ConvTranspose" => FLT, Approx, true;
    "Pool.Max" => NUM, Exact, false;
    "Pool.Avg" => FLT, Approx, false;
    "Im2Col" => ALL, Exact, false;
    "ResizeNearest" => ALL, Exact, false;
    "Rnn" => F32F, Approx, false;
    "Gru" => F32F, Approx, false;
    "Lstm" => F32F, Approx, false;
    "SelectiveScan" => F32F, Approx, false;
    "Mamba2" => F32F, Approx, false;
    "GatedDeltaNet" => F32F, Approx, false;
    "Scan" => ALL, Approx, false;
    "Fft" => DTypeSet::C64, Approx, true;
    "LogMel" => DTypeSet::C64, Approx, false;
    "WelchPeaks" => DTypeSet::C64, Approx, false;
    "RngBits" => DTypeSet::U32, Exact, false;
    "RngUniform" => FLT, Close, false;
    "RngNormal" => FLT, Approx, false;
    "Sample" => F32F, Exact, false;
    "If" => ALL, Approx, false;
    "While" => ALL, Approx, false;
    "ElementwiseRegion" => ALL, Approx, false;
    "BatchElementwiseRegion" => ALL, Approx, false;
    "TransformRegion" => ALL, Approx, false;
    "Custom" => ALL, Approx, false;
    "LayerNormBackward" => FLT, Approx, true;
    "RmsNormBackward" => FLT, Approx, true;
    "SoftmaxCrossEntropyBackward" => FLT, Approx, false;
    "LogMelBackward" => DTypeSet::C64, Approx, false;
};

/// Splat ops exist only with the `splat` feature.
#[cfg(feature = "splat")]
const SPLAT: &[(&str, DTypeSet, Tolerance, bool)] = plain_ops! {
    "GaussianSplatPrepare" => DTypeSet::F32, Approx, false;
    "GaussianSplatRasterize" => DTypeSet::F32, Approx, false;
    "GaussianSplatRender" => DTypeSet::F32, Approx, false;
    "GaussianSplatRenderBackward" => DTypeSet::F32, Loose, false;
};
#[cfg(not(feature = "splat"))]
const SPLAT: &[(&str, DTypeSet, Tolerance, bool)] = &[];

/// Every op of the spec, sub-ops expanded, in the spec's order.
pub fn op_table() -> Vec<OpEntry> {
    let entry = |name: String, dtypes, tolerance, magnitude| OpEntry { name, dtypes, tolerance, magnitude };
    let mut t = Vec::new();
    let mut plain = PLAIN.iter().chain(SPLAT.iter()).map(|&(n, d, c, m)| entry(n.to_string(), d, c, m));
    t.extend(plain.by_ref().take(3));
    t.extend(UnaryOp::ALL.iter().map(|u| entry(format!("Unary.{}", u.name()), u.dtypes(), u.base_tolerance(), false)));
    t.extend(
        BinaryOp::ALL.iter().map(|b| entry(format!("Binary.{}", b.name()), b.dtypes(), b.base_tolerance(), false)),
    );
    t.extend(
        CompareOp::ALL.iter().map(|c| entry(format!("Compare.{}", c.name()), c.dtypes(), c.base_tolerance(), false)),
    );
    t.extend(plain.by_ref().take(13 - 3));
    t.extend(
        ReduceOp::ALL
            .iter()
            .map(|r| entry(format!("Reduce.{}", r.name()), r.dtypes(), r.base_tolerance(), r.magnitude_scaled())),
    );
    t.extend(plain);
    t
}

/// The table row of `name`, if any.
pub fn op_entry(name: &str) -> Option<OpEntry> {
    op_table().into_iter().find(|e| e.name == name)
}

/// The spec's name of a node's op (`Unary.Exp`, `Reduce.Sum`, `MatMul`): the key of its table row.
pub fn op_label(op: &Op) -> String {
    let s: &str = match op {
        Op::Input(_) => "Input",
        Op::Param(_) => "Param",
        Op::Constant(_) => "Constant",
        Op::Unary(u) => return format!("Unary.{}", u.name()),
        Op::Binary(b) => return format!("Binary.{}", b.name()),
        Op::Compare(c) => return format!("Compare.{}", c.name()),
        Op::Reduce(r) => return format!("Reduce.{}", r.op.name()),
        Op::Where => "Where",
        Op::Fma => "Fma",
        Op::Cast { .. } => "Cast",
        Op::Reshape { .. } => "Reshape",
        Op::Transpose { .. } => "Transpose",
        Op::Narrow(_) => "Narrow",
        Op::Concat { .. } => "Concat",
        Op::Expand { .. } => "Expand",
        Op::Reverse { .. } => "Reverse",
        Op::Pad(_) => "Pad",
        Op::Gather(_) => "Gather",
        Op::ScatterAdd(_) => "ScatterAdd",
        Op::GatherBackward(_) => "GatherBackward",
        Op::ArgMax(_) => "ArgMax",
        Op::ArgMin(_) => "ArgMin",
        Op::TopK(_) => "TopK",
        Op::Cumsum(_) => "Cumsum",
        Op::CumsumBackward(_) => "CumsumBackward",
        Op::MatMul => "MatMul",
        Op::DotGeneral(_) => "DotGeneral",
        Op::FusedMatMulBiasAct { .. } => "FusedMatMulBiasAct",
        Op::GroupedMatMul(_) => "GroupedMatMul",
        Op::QuantMatMul(_) => "QuantMatMul",
        Op::QuantGroupedMatMul(_) => "QuantGroupedMatMul",
        Op::Softmax { .. } => "Softmax",
        Op::LogSoftmax { .. } => "LogSoftmax",
        Op::SoftmaxCrossEntropy(_) => "SoftmaxCrossEntropy",
        Op::LayerNorm(_) => "LayerNorm",
        Op::RmsNorm(_) => "RmsNorm",
        Op::GroupNorm(_) => "GroupNorm",
        Op::LayerNorm2d(_) => "LayerNorm2d",
        Op::FusedResidualLayerNorm(_) => "FusedResidualLayerNorm",
        Op::FusedResidualRmsNorm(_) => "FusedResidualRmsNorm",
        Op::Attention(_) => "Attention",
        Op::AttentionBackward(_) => "AttentionBackward",
        Op::Rope(_) => "Rope",
        Op::RopeBackward(_) => "RopeBackward",
        Op::Conv(_) => "Conv",
        Op::ConvTranspose(_) => "ConvTranspose",
        Op::Pool(p) => match p.kind {
            crate::op::PoolKind::Max => "Pool.Max",
            crate::op::PoolKind::Avg => "Pool.Avg",
        },
        Op::Im2Col(_) => "Im2Col",
        Op::ResizeNearest(_) => "ResizeNearest",
        Op::Rnn(_) => "Rnn",
        Op::Gru(_) => "Gru",
        Op::Lstm(_) => "Lstm",
        Op::SelectiveScan(_) => "SelectiveScan",
        Op::Mamba2(_) => "Mamba2",
        Op::GatedDeltaNet(_) => "GatedDeltaNet",
        Op::Scan(_) => "Scan",
        Op::Fft(_) => "Fft",
        Op::LogMel(_) => "LogMel",
        Op::WelchPeaks(_) => "WelchPeaks",
        Op::RngBits(_) => "RngBits",
        Op::RngUniform(_) => "RngUniform",
        Op::RngNormal(_) => "RngNormal",
        Op::Sample(_) => "Sample",
        Op::If(_) => "If",
        Op::While(_) => "While",
        Op::ElementwiseRegion(_) => "ElementwiseRegion",
        Op::BatchElementwiseRegion(_) => "BatchElementwiseRegion",
        Op::TransformRegion(_) => "TransformRegion",
        Op::Custom(_) => "Custom",
        Op::LayerNormBackward(_) => "LayerNormBackward",
        Op::RmsNormBackward(_) => "RmsNormBackward",
        Op::SoftmaxCrossEntropyBackward(_) => "SoftmaxCrossEntropyBackward",
        Op::LogMelBackward(_) => "LogMelBackward",
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(_) => "GaussianSplatPrepare",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRasterize(_) => "GaussianSplatRasterize",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRender(_) => "GaussianSplatRender",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRenderBackward(_) => "GaussianSplatRenderBackward",
    };
    s.to_string()
}

/// The tolerance class and magnitude flag for a node of `op` producing `dtype`.
/// Integer, Bool and index outputs are always compared exactly.
pub fn tolerance_for(op: &Op, dtype: DType) -> (Tolerance, bool) {
    if !dtype.is_float() && dtype != DType::C64 {
        return (Tolerance::Exact, false);
    }
    match op {
        Op::Unary(u) => (u.tolerance(dtype), false),
        Op::Binary(b) => (b.tolerance(dtype), false),
        Op::FusedMatMulBiasAct { activation: Some(u) } => (u.tolerance(dtype).max(Tolerance::Approx), true),
        _ => match op_entry(&op_label(op)) {
            Some(e) => (e.tolerance, e.magnitude),
            None => (Tolerance::Approx, false),
        },
    }
}
