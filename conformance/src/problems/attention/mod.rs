//! Generators for the attention and position rows (§2.8): `Rope` and `RopeBackward` in `rope`.

pub(crate) mod rope;

use crate::problems::Variant;

/// Variants for the attention and position rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    rope::variants(row)
}
