//! Attributes of the normalisation ops (§2.7).

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

/// `SoftmaxCrossEntropy` and `SoftmaxCrossEntropyBackward` (§2.7.3, §2.16.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct SoftmaxCrossEntropyAttrs {
    /// Canonical class axis (the builder's default is −1).
    pub axis: usize,
}

/// `GroupNorm` (§2.7.6). Has `beta` iff the node has 3 inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GroupNormAttrs {
    /// Number of channel groups `G` ≥ 1; must divide `C`.
    pub num_groups: u32,
    /// Finite, ≥ 0 (spec default 1e−5).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub eps: f32,
}

/// `LayerNorm2d` (§2.7.7). Has `beta` iff the node has 3 inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct LayerNorm2dAttrs {
    /// Finite, ≥ 0.
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub eps: f32,
}

impl Default for LayerNorm2dAttrs {
    /// `eps = 1e−6`, the spec's default.
    fn default() -> Self {
        LayerNorm2dAttrs { eps: 1e-6 }
    }
}

/// `FusedResidualLayerNorm` / `FusedResidualRmsNorm` (§2.7.8–2.7.9).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct FusedResidualNormAttrs {
    /// Canonical first normalised axis.
    pub axis: usize,
    /// Finite, ≥ 0 (spec default 1e−5 for LayerNorm, 1e−6 for RmsNorm).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub eps: f32,
    /// A `bias` input follows `residual`.
    pub has_bias: bool,
    /// A `beta` input follows `gamma`.
    pub has_beta: bool,
    /// Return the sum `s` as a second output.
    pub emit_sum: bool,
}
