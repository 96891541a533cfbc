//! Attributes of the indexing ops (§2.4): `Gather`, `ScatterAdd`, `GatherBackward`.

use crate::Shape;

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
