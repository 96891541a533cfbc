//! The op families, one module per family named as [`backend_api::Family::module`] says. Each
//! computes its ops on host tensors in plain loops, in f64 for floats and exactly for integers, and
//! rounds once into the output dtype. `math` holds the scalar rules the families share.

pub mod attention;
pub mod backward;
pub mod control;
pub mod conv;
pub mod elementwise;
pub mod indexing;
pub mod leaf;
pub mod linalg;
pub mod math;
pub mod movement;
pub mod norm;
pub mod random;
pub mod reduce;
pub mod sequence;
