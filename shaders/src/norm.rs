//! Variants of the norm kernel family (being written).
