//! Attributes of `Custom` (§2.15.1). The definitions live in [`crate::custom`].

/// `Custom` (§2.15.1): a registered op, found by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct CustomAttrs {
    /// The registry key (`umap.knn`, …).
    pub name: String,
    /// An opaque little-endian blob that the definition validates and interprets.
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::hex_vec"))]
    pub attrs: Vec<u8>,
}
