//! Generators for the training backward ops of §2.16 that a backend runs:
//! `SoftmaxCrossEntropyBackward` (§2.16.3), from the cross-entropy generator of `problems::norm`
//! with an upstream gradient per slice.

use crate::problems::norm::cross_entropy::loss_variants;
use crate::problems::Variant;

/// Variants for the backward rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    match row {
        "SoftmaxCrossEntropyBackward" => loss_variants(row, true),
        _ => None,
    }
}
