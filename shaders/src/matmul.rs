//! Variants of the matmul kernel family (being written).
