//! Attributes of `Custom` (§2.15.1). The definitions live in [`crate::custom`].

/// `Custom` (§2.15.1): a registered op, found by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CustomAttrs {
    /// The registry key (`umap.knn`, …).
    pub name: String,
    /// An opaque little-endian blob that the definition validates and interprets.
    pub attrs: Vec<u8>,
}
