//! Attributes of shape and movement (§2.3): `Reshape` entries, `Narrow`, `Pad`.

/// One entry of `Reshape`'s target shape (§2.3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DimSpec {
    /// A static size (0 means size 0, never "copy").
    Static(usize),
    /// A symbolic dim.
    Sym(String),
    /// `-1`: inferred from the element count; at most one per shape.
    Infer,
}

impl From<usize> for DimSpec {
    fn from(n: usize) -> DimSpec {
        DimSpec::Static(n)
    }
}

impl From<&str> for DimSpec {
    fn from(s: &str) -> DimSpec {
        DimSpec::Sym(s.to_string())
    }
}

/// `Narrow`: a strided slice along one axis (§2.3.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct NarrowAttrs {
    /// Canonical axis.
    pub axis: usize,
    /// Canonical start in `[0, d]`.
    pub start: usize,
    /// Number of elements taken.
    pub len: usize,
    /// Step ≥ 1.
    pub step: usize,
}

/// How `Pad` fills the border (§2.3.7).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum PadMode {
    /// A constant, converted to the dtype by the `Cast` rules (from F64).
    Constant {
        /// The fill value (finite).
        #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float64"))]
        value: f64,
    },
    /// Mirror without repeating the edge (numpy `reflect`).
    Reflect,
    /// Replicate the edge.
    Edge,
}

/// `Pad` attributes (§2.3.7).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct PadAttrs {
    /// Elements added before each axis.
    pub pads_begin: Vec<usize>,
    /// Elements added after each axis.
    pub pads_end: Vec<usize>,
    /// Fill rule.
    pub mode: PadMode,
}
