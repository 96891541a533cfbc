//! Attributes of the reductions and scans (§2.5): `Reduce`, `ArgMax`/`ArgMin`, `TopK`, `Cumsum`
//! and `CumsumBackward`.

use crate::op::ReduceOp;
use crate::DType;

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
