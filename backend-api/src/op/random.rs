//! Attributes of randomness (§2.12).

use crate::{DType, Shape};

/// `RngBits` (§2.12.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RngBitsAttrs {
    /// Output shape.
    pub shape: Shape,
    /// Op seed (default 0).
    pub seed: u64,
}

/// `RngUniform` (§2.12.2).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RngUniformAttrs {
    /// Output shape.
    pub shape: Shape,
    /// Float output dtype (default F32).
    pub dtype: DType,
    /// Finite lower bound (default 0).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
    pub low: f64,
    /// Finite upper bound ≥ `low` (default 1).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
    pub high: f64,
    /// Op seed (default 0).
    pub seed: u64,
}

/// `RngNormal` (§2.12.3).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RngNormalAttrs {
    /// Output shape.
    pub shape: Shape,
    /// Float output dtype (default F32).
    pub dtype: DType,
    /// Finite mean (default 0).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
    pub mean: f64,
    /// Finite standard deviation ≥ 0 (default 1).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
    pub std: f64,
    /// Op seed (default 0).
    pub seed: u64,
}

/// `Sample` (§2.12.4).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct SampleAttrs {
    /// Finite, ≥ 0; 0 is greedy (default 1).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub temperature: f32,
    /// Keep the `top_k` most probable tokens; 0 disables (default 0).
    pub top_k: u32,
    /// Nucleus threshold in `(0, 1]`; 1 disables (default 1).
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub top_p: f32,
    /// Op seed (default 0).
    pub seed: u64,
    /// I32 (default) or I64.
    pub index_dtype: DType,
}

impl Default for SampleAttrs {
    /// Temperature 1, no top-k or top-p filtering, seed 0, I32 indices.
    fn default() -> Self {
        SampleAttrs { temperature: 1.0, top_k: 0, top_p: 1.0, seed: 0, index_dtype: DType::I32 }
    }
}
