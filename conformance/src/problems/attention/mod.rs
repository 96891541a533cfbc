//! Generators for the attention family (§2.8): `Attention` in `sdpa`, `Rope` and `RopeBackward`
//! in `rope`.

use crate::problems::Variant;

pub(crate) mod rope;
pub mod sdpa;

/// Variants for the attention and position rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    sdpa::variants(row).or_else(|| rope::variants(row))
}
