//! The op families. Each module computes its ops on host tensors in plain loops, in f64 for floats
//! and exactly for integers, and rounds once into the output dtype.

pub mod cast;
pub mod conv;
pub mod elementwise;
pub mod indexing;
pub mod linalg;
pub mod loss;
pub mod math;
pub mod movement;
pub mod norm;
pub mod ordering;
pub mod random;
pub mod reduce;
pub mod scan;
