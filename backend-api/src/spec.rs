//! The op table: one declaration per op of the spec (§3), from which everything that lists ops is
//! derived — the op's label, its family, its table rows (sub-ops expanded), arity, dtypes and
//! tolerance class. Backends say which [`OpKind`]s they lower; conformance, the report and the
//! capabilities of each backend iterate this table. Nothing else lists the ops.

use crate::op::{BinaryOp, CompareOp, Op, PoolKind, ReduceOp, UnaryOp};
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

/// An op family: one per section of §2. Its [`Family::module`] is the name of the module that
/// holds the family's code in every crate (`backend-api/src/op/<m>`, `backend-cpu-ref/src/ops/<m>`,
/// `shaders/src/<m>`, `backend-wgpu/src/lower/<m>`, `conformance/src/problems/<m>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// §2.1 Input, Param, Constant.
    Leaf,
    /// §2.2 Unary, Binary, Compare, Where, Fma, Cast.
    Elementwise,
    /// §2.3 shape and movement.
    Movement,
    /// §2.4 Gather, ScatterAdd, GatherBackward.
    Indexing,
    /// §2.5 reductions and scans (Reduce, ArgMax/ArgMin, TopK, Cumsum, CumsumBackward).
    Reduce,
    /// §2.6 linear algebra, quantised matmul included.
    Linalg,
    /// §2.7 normalisation (softmax, cross-entropy and the norms).
    Norm,
    /// §2.8 attention and position (Attention, Rope and their gradients).
    Attention,
    /// §2.9 convolution, pooling, resize.
    Conv,
    /// §2.10 sequence models (recurrences, state-space scans, Scan).
    Sequence,
    /// §2.11 signal processing.
    Signal,
    /// §2.12 randomness.
    Random,
    /// §2.13 control flow.
    Control,
    /// §2.14 fused regions.
    Region,
    /// §2.15 custom ops.
    Custom,
    /// §2.16 training backward ops (gradients that have no section of their forward op's).
    Backward,
    /// §2.17 Gaussian splatting.
    Splat,
}

impl Family {
    /// Every family, in the spec's order.
    pub const ALL: &'static [Family] = &[
        Family::Leaf,
        Family::Elementwise,
        Family::Movement,
        Family::Indexing,
        Family::Reduce,
        Family::Linalg,
        Family::Norm,
        Family::Attention,
        Family::Conv,
        Family::Sequence,
        Family::Signal,
        Family::Random,
        Family::Control,
        Family::Region,
        Family::Custom,
        Family::Backward,
        Family::Splat,
    ];

    /// The module name of the family in every crate.
    pub const fn module(self) -> &'static str {
        match self {
            Family::Leaf => "leaf",
            Family::Elementwise => "elementwise",
            Family::Movement => "movement",
            Family::Indexing => "indexing",
            Family::Reduce => "reduce",
            Family::Linalg => "linalg",
            Family::Norm => "norm",
            Family::Attention => "attention",
            Family::Conv => "conv",
            Family::Sequence => "sequence",
            Family::Signal => "signal",
            Family::Random => "random",
            Family::Control => "control",
            Family::Region => "region",
            Family::Custom => "custom",
            Family::Backward => "backward",
            Family::Splat => "splat",
        }
    }

    /// The section of the spec that defines the family (`"2.5"`).
    pub const fn section(self) -> &'static str {
        match self {
            Family::Leaf => "2.1",
            Family::Elementwise => "2.2",
            Family::Movement => "2.3",
            Family::Indexing => "2.4",
            Family::Reduce => "2.5",
            Family::Linalg => "2.6",
            Family::Norm => "2.7",
            Family::Attention => "2.8",
            Family::Conv => "2.9",
            Family::Sequence => "2.10",
            Family::Signal => "2.11",
            Family::Random => "2.12",
            Family::Control => "2.13",
            Family::Region => "2.14",
            Family::Custom => "2.15",
            Family::Backward => "2.16",
            Family::Splat => "2.17",
        }
    }
}

/// How many inputs a node of an op takes. Inference (`crate::infer`) checks the exact count with
/// the op's attributes; this is the bound the table states without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arity {
    /// Exactly this many.
    Exactly(usize),
    /// From the first to the second, inclusive; the attributes decide which.
    Between(usize, usize),
    /// At least this many (variadic: Concat, captures, programs).
    AtLeast(usize),
}

impl std::fmt::Display for Arity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arity::Exactly(k) => write!(f, "exactly {k}"),
            Arity::Between(lo, hi) => write!(f, "{lo} to {hi}"),
            Arity::AtLeast(k) => write!(f, "at least {k}"),
        }
    }
}

impl Arity {
    /// Whether `n` inputs are within the bound.
    pub fn admits(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::Between(lo, hi) => (lo..=hi).contains(&n),
            Arity::AtLeast(k) => n >= k,
        }
    }
}

/// How an op's table rows are formed: one row, or one per sub-op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Rows {
    One,
    Unary,
    Binary,
    Compare,
    Reduce,
    Pool,
}

const NUM: DTypeSet = DTypeSet::NUMERIC;
const FLT: DTypeSet = DTypeSet::FLOAT;
const F32F: DTypeSet = DTypeSet::FLOAT32_FAMILY;
const ALL: DTypeSet = DTypeSet::ALL;
const C64: DTypeSet = DTypeSet::C64;
const NUM_C64: DTypeSet = DTypeSet::NUMERIC.union(DTypeSet::C64);
const NUM_BOOL: DTypeSet = DTypeSet::NUMERIC.union(DTypeSet::BOOL);
/// Placeholder for ops whose rows come from their sub-op table.
const SUB: DTypeSet = DTypeSet::EMPTY;

use Arity::{AtLeast, Between, Exactly};

macro_rules! op_kinds {
    ($($(#[$attr:meta])* $kind:ident => $family:ident, $arity:expr, $rows:ident, $dt:expr, $tol:ident, $m:literal;)*) => {
        /// One variant per op of the spec, in the order of §3 (sub-ops are not expanded:
        /// `Unary` is one kind with 24 table rows). [`Op::kind`] maps a node's op to it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $($(#[$attr])* #[doc = concat!("`", stringify!($kind), "`")] $kind,)*
        }

        impl OpKind {
            /// Every op of the spec (those of enabled features), in the order of §3.
            pub const ALL: &'static [OpKind] = &[$($(#[$attr])* OpKind::$kind,)*];

            /// The spec's name of the op (`Softmax`, `Unary`).
            pub const fn name(self) -> &'static str {
                match self { $($(#[$attr])* OpKind::$kind => stringify!($kind),)* }
            }

            /// The op's family (its section of §2).
            pub const fn family(self) -> Family {
                match self { $($(#[$attr])* OpKind::$kind => Family::$family,)* }
            }

            /// How many inputs a node of the op takes.
            pub const fn arity(self) -> Arity {
                match self { $($(#[$attr])* OpKind::$kind => $arity,)* }
            }

            const fn rows_kind(self) -> Rows {
                match self { $($(#[$attr])* OpKind::$kind => Rows::$rows,)* }
            }

            const fn plain(self) -> (DTypeSet, Tolerance, bool) {
                match self { $($(#[$attr])* OpKind::$kind => ($dt, Tolerance::$tol, $m),)* }
            }
        }
    };
}

op_kinds! {
    Input => Leaf, Exactly(0), One, ALL, Exact, false;
    Param => Leaf, Exactly(0), One, ALL, Exact, false;
    Constant => Leaf, Exactly(0), One, ALL, Exact, false;
    Unary => Elementwise, Exactly(1), Unary, SUB, Exact, false;
    Binary => Elementwise, Exactly(2), Binary, SUB, Exact, false;
    Compare => Elementwise, Exactly(2), Compare, SUB, Exact, false;
    Where => Elementwise, Exactly(3), One, ALL, Exact, false;
    Fma => Elementwise, Exactly(3), One, FLT, Close, false;
    Cast => Elementwise, Exactly(1), One, ALL, Exact, false;
    Reshape => Movement, Exactly(1), One, ALL, Exact, false;
    Transpose => Movement, Exactly(1), One, ALL, Exact, false;
    Narrow => Movement, Exactly(1), One, ALL, Exact, false;
    Concat => Movement, AtLeast(1), One, ALL, Exact, false;
    Expand => Movement, Exactly(1), One, ALL, Exact, false;
    Reverse => Movement, Exactly(1), One, ALL, Exact, false;
    Pad => Movement, Exactly(1), One, ALL, Exact, false;
    Gather => Indexing, Exactly(2), One, ALL, Exact, false;
    ScatterAdd => Indexing, Exactly(3), One, NUM_C64, Close, true;
    GatherBackward => Indexing, Exactly(2), One, FLT, Close, true;
    Reduce => Reduce, Exactly(1), Reduce, SUB, Exact, false;
    ArgMax => Reduce, Exactly(1), One, NUM_BOOL, Exact, false;
    ArgMin => Reduce, Exactly(1), One, NUM_BOOL, Exact, false;
    TopK => Reduce, Exactly(1), One, NUM, Exact, false;
    Cumsum => Reduce, Exactly(1), One, NUM, Approx, true;
    CumsumBackward => Reduce, Exactly(1), One, FLT, Approx, true;
    MatMul => Linalg, Exactly(2), One, FLT, Approx, true;
    DotGeneral => Linalg, Exactly(2), One, FLT, Approx, true;
    FusedMatMulBiasAct => Linalg, Exactly(3), One, FLT, Approx, true;
    GroupedMatMul => Linalg, Exactly(3), One, FLT, Approx, true;
    QuantMatMul => Linalg, Between(2, 4), One, F32F, Approx, true;
    QuantGroupedMatMul => Linalg, Between(3, 5), One, F32F, Approx, true;
    Softmax => Norm, Exactly(1), One, FLT, Approx, false;
    LogSoftmax => Norm, Exactly(1), One, FLT, Approx, false;
    SoftmaxCrossEntropy => Norm, Exactly(2), One, FLT, Approx, false;
    LayerNorm => Norm, Between(2, 3), One, FLT, Approx, false;
    RmsNorm => Norm, Between(2, 3), One, FLT, Approx, false;
    GroupNorm => Norm, Between(2, 3), One, FLT, Approx, false;
    LayerNorm2d => Norm, Between(2, 3), One, FLT, Approx, false;
    FusedResidualLayerNorm => Norm, Between(3, 5), One, FLT, Approx, false;
    FusedResidualRmsNorm => Norm, Between(3, 5), One, FLT, Approx, false;
    Attention => Attention, Between(3, 5), One, F32F, Approx, true;
    AttentionBackward => Attention, Between(4, 6), One, F32F, Loose, false;
    Rope => Attention, Exactly(3), One, F32F, Close, false;
    RopeBackward => Attention, Exactly(3), One, F32F, Close, false;
    Conv => Conv, Between(2, 3), One, FLT, Approx, true;
    ConvTranspose => Conv, Between(2, 3), One, FLT, Approx, true;
    Pool => Conv, Exactly(1), Pool, SUB, Exact, false;
    Im2Col => Conv, Exactly(1), One, ALL, Exact, false;
    ResizeNearest => Conv, Exactly(1), One, ALL, Exact, false;
    Rnn => Sequence, AtLeast(3), One, F32F, Approx, false;
    Gru => Sequence, AtLeast(3), One, F32F, Approx, false;
    Lstm => Sequence, AtLeast(3), One, F32F, Approx, false;
    SelectiveScan => Sequence, Between(5, 6), One, F32F, Approx, false;
    Mamba2 => Sequence, Between(5, 6), One, F32F, Approx, false;
    GatedDeltaNet => Sequence, Between(5, 6), One, F32F, Approx, false;
    Scan => Sequence, AtLeast(0), One, ALL, Approx, false;
    Fft => Signal, Exactly(1), One, C64, Approx, true;
    LogMel => Signal, Exactly(2), One, C64, Approx, false;
    WelchPeaks => Signal, Exactly(1), One, C64, Approx, false;
    RngBits => Random, Exactly(1), One, DTypeSet::U32, Exact, false;
    RngUniform => Random, Exactly(1), One, FLT, Close, false;
    RngNormal => Random, Exactly(1), One, FLT, Approx, false;
    Sample => Random, Exactly(2), One, F32F, Exact, false;
    If => Control, AtLeast(1), One, ALL, Approx, false;
    While => Control, AtLeast(0), One, ALL, Approx, false;
    ElementwiseRegion => Region, AtLeast(0), One, ALL, Approx, false;
    BatchElementwiseRegion => Region, AtLeast(1), One, ALL, Approx, false;
    TransformRegion => Region, AtLeast(1), One, ALL, Approx, false;
    Custom => Custom, AtLeast(0), One, ALL, Approx, false;
    LayerNormBackward => Backward, Exactly(3), One, FLT, Approx, true;
    RmsNormBackward => Backward, Exactly(3), One, FLT, Approx, true;
    SoftmaxCrossEntropyBackward => Backward, Exactly(3), One, FLT, Approx, false;
    LogMelBackward => Backward, Exactly(3), One, C64, Approx, false;
    #[cfg(feature = "splat")]
    GaussianSplatPrepare => Splat, Exactly(6), One, DTypeSet::F32, Approx, false;
    #[cfg(feature = "splat")]
    GaussianSplatRasterize => Splat, Exactly(7), One, DTypeSet::F32, Approx, false;
    #[cfg(feature = "splat")]
    GaussianSplatRender => Splat, Exactly(6), One, DTypeSet::F32, Approx, false;
    #[cfg(feature = "splat")]
    GaussianSplatRenderBackward => Splat, Exactly(7), One, DTypeSet::F32, Loose, false;
}

/// One row of the op table: an op, or one sub-op of an op with sub-ops.
#[derive(Clone, Debug, PartialEq)]
pub struct OpEntry {
    /// The spec's name: `MatMul`, or `Family.SubOp` (`Unary.Exp`, `Reduce.Sum`, `Pool.Max`).
    pub name: String,
    /// The op.
    pub kind: OpKind,
    /// Dtypes of the op's main input that the spec allows.
    pub dtypes: DTypeSet,
    /// Class for float outputs.
    pub tolerance: Tolerance,
    /// Whether the absolute tolerance is magnitude-scaled ((M) in §3).
    pub magnitude: bool,
}

impl OpEntry {
    /// The row's family.
    pub fn family(&self) -> Family {
        self.kind.family()
    }
}

impl OpKind {
    /// The table rows of this op: one, or one per sub-op (`Unary.Exp`, …), in the spec's order.
    pub fn rows(self) -> Vec<OpEntry> {
        let row =
            |name: String, dtypes, tolerance, magnitude| OpEntry { name, kind: self, dtypes, tolerance, magnitude };
        let n = self.name();
        match self.rows_kind() {
            Rows::One => {
                let (d, t, m) = self.plain();
                vec![row(n.to_string(), d, t, m)]
            }
            Rows::Unary => UnaryOp::ALL
                .iter()
                .map(|u| row(format!("{n}.{}", u.name()), u.dtypes(), u.base_tolerance(), false))
                .collect(),
            Rows::Binary => BinaryOp::ALL
                .iter()
                .map(|b| row(format!("{n}.{}", b.name()), b.dtypes(), b.base_tolerance(), false))
                .collect(),
            Rows::Compare => CompareOp::ALL
                .iter()
                .map(|c| row(format!("{n}.{}", c.name()), c.dtypes(), c.base_tolerance(), false))
                .collect(),
            Rows::Reduce => ReduceOp::ALL
                .iter()
                .map(|r| row(format!("{n}.{}", r.name()), r.dtypes(), r.base_tolerance(), r.magnitude_scaled()))
                .collect(),
            Rows::Pool => vec![
                row(format!("{n}.Max"), NUM, Tolerance::Exact, false),
                row(format!("{n}.Avg"), FLT, Tolerance::Approx, false),
            ],
        }
    }

    /// The labels of this op's table rows.
    pub fn labels(self) -> Vec<String> {
        self.rows().into_iter().map(|e| e.name).collect()
    }

    /// The kind named `name` (`"Softmax"`, `"Unary"`), if any.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// Every row of the op table (sub-ops expanded), in the spec's order.
pub fn op_table() -> Vec<OpEntry> {
    OpKind::ALL.iter().flat_map(|k| k.rows()).collect()
}

/// The table row of `name`, if any.
pub fn op_entry(name: &str) -> Option<OpEntry> {
    let kind = OpKind::from_name(name.split('.').next().unwrap_or(name))?;
    kind.rows().into_iter().find(|e| e.name == name)
}

/// The labels of every row of the kinds `pred` accepts: how a backend derives its
/// `Capabilities::ops` from the kinds it lowers.
pub fn labels_where(pred: impl Fn(OpKind) -> bool) -> Vec<String> {
    OpKind::ALL.iter().copied().filter(|k| pred(*k)).flat_map(|k| k.labels()).collect()
}

impl Op {
    /// The op's kind: its entry in the op table.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Input(_) => OpKind::Input,
            Op::Param(_) => OpKind::Param,
            Op::Constant(_) => OpKind::Constant,
            Op::Unary(_) => OpKind::Unary,
            Op::Binary(_) => OpKind::Binary,
            Op::Compare(_) => OpKind::Compare,
            Op::Where => OpKind::Where,
            Op::Fma => OpKind::Fma,
            Op::Cast { .. } => OpKind::Cast,
            Op::Reshape { .. } => OpKind::Reshape,
            Op::Transpose { .. } => OpKind::Transpose,
            Op::Narrow(_) => OpKind::Narrow,
            Op::Concat { .. } => OpKind::Concat,
            Op::Expand { .. } => OpKind::Expand,
            Op::Reverse { .. } => OpKind::Reverse,
            Op::Pad(_) => OpKind::Pad,
            Op::Gather(_) => OpKind::Gather,
            Op::ScatterAdd(_) => OpKind::ScatterAdd,
            Op::GatherBackward(_) => OpKind::GatherBackward,
            Op::Reduce(_) => OpKind::Reduce,
            Op::ArgMax(_) => OpKind::ArgMax,
            Op::ArgMin(_) => OpKind::ArgMin,
            Op::TopK(_) => OpKind::TopK,
            Op::Cumsum(_) => OpKind::Cumsum,
            Op::CumsumBackward(_) => OpKind::CumsumBackward,
            Op::MatMul => OpKind::MatMul,
            Op::DotGeneral(_) => OpKind::DotGeneral,
            Op::FusedMatMulBiasAct { .. } => OpKind::FusedMatMulBiasAct,
            Op::GroupedMatMul(_) => OpKind::GroupedMatMul,
            Op::QuantMatMul(_) => OpKind::QuantMatMul,
            Op::QuantGroupedMatMul(_) => OpKind::QuantGroupedMatMul,
            Op::Softmax { .. } => OpKind::Softmax,
            Op::LogSoftmax { .. } => OpKind::LogSoftmax,
            Op::SoftmaxCrossEntropy(_) => OpKind::SoftmaxCrossEntropy,
            Op::LayerNorm(_) => OpKind::LayerNorm,
            Op::RmsNorm(_) => OpKind::RmsNorm,
            Op::GroupNorm(_) => OpKind::GroupNorm,
            Op::LayerNorm2d(_) => OpKind::LayerNorm2d,
            Op::FusedResidualLayerNorm(_) => OpKind::FusedResidualLayerNorm,
            Op::FusedResidualRmsNorm(_) => OpKind::FusedResidualRmsNorm,
            Op::Attention(_) => OpKind::Attention,
            Op::AttentionBackward(_) => OpKind::AttentionBackward,
            Op::Rope(_) => OpKind::Rope,
            Op::RopeBackward(_) => OpKind::RopeBackward,
            Op::Conv(_) => OpKind::Conv,
            Op::ConvTranspose(_) => OpKind::ConvTranspose,
            Op::Pool(_) => OpKind::Pool,
            Op::Im2Col(_) => OpKind::Im2Col,
            Op::ResizeNearest(_) => OpKind::ResizeNearest,
            Op::Rnn(_) => OpKind::Rnn,
            Op::Gru(_) => OpKind::Gru,
            Op::Lstm(_) => OpKind::Lstm,
            Op::SelectiveScan(_) => OpKind::SelectiveScan,
            Op::Mamba2(_) => OpKind::Mamba2,
            Op::GatedDeltaNet(_) => OpKind::GatedDeltaNet,
            Op::Scan(_) => OpKind::Scan,
            Op::Fft(_) => OpKind::Fft,
            Op::LogMel(_) => OpKind::LogMel,
            Op::WelchPeaks(_) => OpKind::WelchPeaks,
            Op::RngBits(_) => OpKind::RngBits,
            Op::RngUniform(_) => OpKind::RngUniform,
            Op::RngNormal(_) => OpKind::RngNormal,
            Op::Sample(_) => OpKind::Sample,
            Op::If(_) => OpKind::If,
            Op::While(_) => OpKind::While,
            Op::ElementwiseRegion(_) => OpKind::ElementwiseRegion,
            Op::BatchElementwiseRegion(_) => OpKind::BatchElementwiseRegion,
            Op::TransformRegion(_) => OpKind::TransformRegion,
            Op::Custom(_) => OpKind::Custom,
            Op::LayerNormBackward(_) => OpKind::LayerNormBackward,
            Op::RmsNormBackward(_) => OpKind::RmsNormBackward,
            Op::SoftmaxCrossEntropyBackward(_) => OpKind::SoftmaxCrossEntropyBackward,
            Op::LogMelBackward(_) => OpKind::LogMelBackward,
            #[cfg(feature = "splat")]
            Op::GaussianSplatPrepare(_) => OpKind::GaussianSplatPrepare,
            #[cfg(feature = "splat")]
            Op::GaussianSplatRasterize(_) => OpKind::GaussianSplatRasterize,
            #[cfg(feature = "splat")]
            Op::GaussianSplatRender(_) => OpKind::GaussianSplatRender,
            #[cfg(feature = "splat")]
            Op::GaussianSplatRenderBackward(_) => OpKind::GaussianSplatRenderBackward,
        }
    }

    /// The sub-op's name for ops with sub-ops (`Exp` of `Unary.Exp`).
    pub fn sub_name(&self) -> Option<&'static str> {
        match self {
            Op::Unary(u) => Some(u.name()),
            Op::Binary(b) => Some(b.name()),
            Op::Compare(c) => Some(c.name()),
            Op::Reduce(r) => Some(r.op.name()),
            Op::Pool(p) => Some(match p.kind {
                PoolKind::Max => "Max",
                PoolKind::Avg => "Avg",
            }),
            _ => None,
        }
    }
}

/// The spec's name of a node's op (`Unary.Exp`, `Reduce.Sum`, `MatMul`): the key of its table row.
pub fn op_label(op: &Op) -> String {
    match op.sub_name() {
        Some(s) => format!("{}.{s}", op.kind().name()),
        None => op.kind().name().to_string(),
    }
}

/// Checks a node's input count against its kind's [`Arity`] (`Arity` error). Inference then checks
/// the exact count the attributes ask for; this bound holds for every node of a graph.
pub fn check_arity(op: &Op, inputs: usize) -> crate::Result<()> {
    let arity = op.kind().arity();
    if !arity.admits(inputs) {
        crate::bail!(Arity, "{} takes {} inputs, got {inputs}", op_label(op), arity);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_the_spec_op_count_and_unique_rows() {
        let ops = if cfg!(feature = "splat") { 77 } else { 73 };
        assert_eq!(OpKind::ALL.len(), ops, "§3 totals: 77 ops, 73 without splat");
        let table = op_table();
        let subs = UnaryOp::ALL.len() + BinaryOp::ALL.len() + CompareOp::ALL.len() + ReduceOp::ALL.len() + 2;
        assert_eq!(table.len(), ops - 5 + subs);
        let mut names: Vec<&str> = table.iter().map(|e| e.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), table.len(), "duplicate row names");
        for e in &table {
            assert!(e.name.split('.').next() == Some(e.kind.name()), "{} is not a row of {:?}", e.name, e.kind);
            assert!(!e.dtypes.is_empty(), "{} accepts no dtype", e.name);
            assert_eq!(op_entry(&e.name).as_ref(), Some(e));
        }
    }

    #[test]
    fn kinds_round_trip_by_name_and_have_families() {
        for k in OpKind::ALL {
            assert_eq!(OpKind::from_name(k.name()), Some(*k));
            assert!(Family::ALL.contains(&k.family()));
        }
        assert_eq!(op_label(&Op::MatMul), "MatMul");
        assert_eq!(op_label(&Op::Unary(UnaryOp::Exp)), "Unary.Exp");
        assert_eq!(OpKind::Cumsum.family().module(), "reduce");
        assert!(Arity::Between(2, 3).admits(3) && !Arity::Exactly(1).admits(2) && Arity::AtLeast(0).admits(0));
    }
}
