//! Attributes of linear algebra (§2.6): `DotGeneral`, the grouped and the quantised matmuls.

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

/// `GroupedMatMul` (§2.6.4) has no attributes; the struct exists so that every op family has one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GroupedMatMulAttrs {}

/// `QuantMatMul` and `QuantGroupedMatMul` (§2.6.5–2.6.6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct QuantMatMulAttrs {
    /// How the weight `W[N, K]` is stored.
    pub format: QuantFormat,
}

/// The 17 block-quantisation formats (§2.6.7). The weight is logically `W[N, K]`.
///
/// The GGML names keep ggml's spelling (`Q4_K`) so that they read as in GGUF files.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum QuantFormat {
    /// `w`: I8 `[N, K]`; `scale`: F32/F16 `[N, ⌈K/B⌉]`.
    Int8Block {
        /// Block size `B` ≥ 1 along K.
        block_size: u32,
    },
    /// `w`: U8/I8 `[N, K]`; `scale`, `zero`: F32/F16 `[N, ⌈K/B⌉]`.
    Int8BlockAsym {
        /// Block size `B` ≥ 1 along K.
        block_size: u32,
    },
    /// `w`: U8 `[N, ⌈K/2⌉]` (two signed nibbles per byte); `scale`: F32/F16 `[N, ⌈K/B⌉]`.
    Int4Block {
        /// Block size `B` ≥ 1 along K.
        block_size: u32,
    },
    /// `w`: U8 `[N, K]` of E4M3 bytes; `scale`: F32 `[]` or `[N]`.
    Fp8E4m3,
    /// `w`: U8 `[N, K]` of E5M2 bytes; `scale`: F32 `[]` or `[N]`.
    Fp8E5m2,
    /// `w`: U8 `[N, K/2]` of E2M1 nibbles; `block_scale`: U8 `[N, K/16]`; `global_scale`: F32 `[]`.
    Nvfp4,
    /// ggml `block_q4_0` (32 elements, 18 bytes).
    Q4_0,
    /// ggml `block_q4_1` (32 elements, 20 bytes).
    Q4_1,
    /// ggml `block_q5_0` (32 elements, 22 bytes).
    Q5_0,
    /// ggml `block_q5_1` (32 elements, 24 bytes).
    Q5_1,
    /// ggml `block_q8_0` (32 elements, 34 bytes).
    Q8_0,
    /// ggml `block_q2_K` (256 elements, 84 bytes).
    Q2_K,
    /// ggml `block_q3_K` (256 elements, 110 bytes).
    Q3_K,
    /// ggml `block_q4_K` (256 elements, 144 bytes).
    Q4_K,
    /// ggml `block_q5_K` (256 elements, 176 bytes).
    Q5_K,
    /// ggml `block_q6_K` (256 elements, 210 bytes).
    Q6_K,
    /// ggml `block_q8_K` (256 elements, 292 bytes).
    Q8_K,
}

impl QuantFormat {
    /// Every format once, in the spec's order; the block-size formats with `block_size = 32`.
    pub const ALL: [QuantFormat; 17] = [
        QuantFormat::Int8Block { block_size: 32 },
        QuantFormat::Int8BlockAsym { block_size: 32 },
        QuantFormat::Int4Block { block_size: 32 },
        QuantFormat::Fp8E4m3,
        QuantFormat::Fp8E5m2,
        QuantFormat::Nvfp4,
        QuantFormat::Q4_0,
        QuantFormat::Q4_1,
        QuantFormat::Q5_0,
        QuantFormat::Q5_1,
        QuantFormat::Q8_0,
        QuantFormat::Q2_K,
        QuantFormat::Q3_K,
        QuantFormat::Q4_K,
        QuantFormat::Q5_K,
        QuantFormat::Q6_K,
        QuantFormat::Q8_K,
    ];

    /// The spec's name (`Int8Block`, `Q4_K`, …), without parameters.
    pub const fn name(self) -> &'static str {
        match self {
            QuantFormat::Int8Block { .. } => "Int8Block",
            QuantFormat::Int8BlockAsym { .. } => "Int8BlockAsym",
            QuantFormat::Int4Block { .. } => "Int4Block",
            QuantFormat::Fp8E4m3 => "Fp8E4m3",
            QuantFormat::Fp8E5m2 => "Fp8E5m2",
            QuantFormat::Nvfp4 => "Nvfp4",
            QuantFormat::Q4_0 => "Q4_0",
            QuantFormat::Q4_1 => "Q4_1",
            QuantFormat::Q5_0 => "Q5_0",
            QuantFormat::Q5_1 => "Q5_1",
            QuantFormat::Q8_0 => "Q8_0",
            QuantFormat::Q2_K => "Q2_K",
            QuantFormat::Q3_K => "Q3_K",
            QuantFormat::Q4_K => "Q4_K",
            QuantFormat::Q5_K => "Q5_K",
            QuantFormat::Q6_K => "Q6_K",
            QuantFormat::Q8_K => "Q8_K",
        }
    }

    /// For the GGML block formats, `(QK, BB)`: elements per block and bytes per block.
    pub const fn ggml_block(self) -> Option<(usize, usize)> {
        match self {
            QuantFormat::Int8Block { .. }
            | QuantFormat::Int8BlockAsym { .. }
            | QuantFormat::Int4Block { .. }
            | QuantFormat::Fp8E4m3
            | QuantFormat::Fp8E5m2
            | QuantFormat::Nvfp4 => None,
            QuantFormat::Q4_0 => Some((32, 18)),
            QuantFormat::Q4_1 => Some((32, 20)),
            QuantFormat::Q5_0 => Some((32, 22)),
            QuantFormat::Q5_1 => Some((32, 24)),
            QuantFormat::Q8_0 => Some((32, 34)),
            QuantFormat::Q2_K => Some((256, 84)),
            QuantFormat::Q3_K => Some((256, 110)),
            QuantFormat::Q4_K => Some((256, 144)),
            QuantFormat::Q5_K => Some((256, 176)),
            QuantFormat::Q6_K => Some((256, 210)),
            QuantFormat::Q8_K => Some((256, 292)),
        }
    }

    /// The number of weight inputs the format takes (`w` and its scale tensors).
    pub const fn num_weight_inputs(self) -> usize {
        match self {
            QuantFormat::Int8BlockAsym { .. } | QuantFormat::Nvfp4 => 3,
            QuantFormat::Int8Block { .. }
            | QuantFormat::Int4Block { .. }
            | QuantFormat::Fp8E4m3
            | QuantFormat::Fp8E5m2 => 2,
            QuantFormat::Q4_0
            | QuantFormat::Q4_1
            | QuantFormat::Q5_0
            | QuantFormat::Q5_1
            | QuantFormat::Q8_0
            | QuantFormat::Q2_K
            | QuantFormat::Q3_K
            | QuantFormat::Q4_K
            | QuantFormat::Q5_K
            | QuantFormat::Q6_K
            | QuantFormat::Q8_K => 1,
        }
    }
}
