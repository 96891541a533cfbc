//! Generators for the attention family (§2.8): `Attention` in `sdpa`.

use crate::problems::Variant;

pub mod sdpa;

/// Variants for the attention rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    sdpa::variants(row)
}
