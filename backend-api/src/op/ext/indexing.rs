//! Attributes of the indexing ops (§2.4) and of the reductions and scans beyond `Reduce` (§2.5).

use crate::{DType, Shape};

/// `Gather` (§2.4.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GatherAttrs {
    /// Canonical axis of `data` that the indices address.
    pub axis: usize,
}

/// `ScatterAdd` (§2.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ScatterAddAttrs {
    /// Canonical axis of `data` that the indices address.
    pub axis: usize,
}

/// `GatherBackward` (§2.4.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GatherBackwardAttrs {
    /// Canonical axis of the forward `data`.
    pub axis: usize,
    /// The shape of the forward `data` (the output shape).
    pub data_shape: Shape,
}

/// `ArgMax` / `ArgMin` (§2.5.2–2.5.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ArgReduceAttrs {
    /// Canonical reduced axis.
    pub axis: usize,
    /// Keep the reduced axis as size 1 (default false).
    pub keep_dims: bool,
    /// I32 (default) or I64.
    pub index_dtype: DType,
}

/// `TopK` (§2.5.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct TopKAttrs {
    /// How many elements to keep (`k ≤ x.shape[axis]`).
    pub k: usize,
    /// Canonical axis (the builder's default is −1).
    pub axis: usize,
    /// Largest first (default true) or smallest first.
    pub largest: bool,
    /// I32 (default) or I64.
    pub index_dtype: DType,
}

/// `Cumsum` and `CumsumBackward` (§2.5.5–2.5.6); the backward op carries the forward's values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct CumsumAttrs {
    /// Canonical axis of the prefix sums.
    pub axis: usize,
    /// Exclude the element itself from its sum (default false).
    pub exclusive: bool,
    /// Sum from the end of the axis (default false).
    pub reverse: bool,
}
