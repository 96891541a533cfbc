//! Attributes of the leaves (§2.1): `Input`, `Param`, `Constant`.

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
