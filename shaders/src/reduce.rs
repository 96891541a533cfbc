//! Variants of the reduce kernel family (being written).
