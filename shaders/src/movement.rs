//! Variants of the movement kernel family (being written).
