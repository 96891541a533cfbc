//! The attention and position family (§2.8): Rope and RopeBackward in `rope`.

mod rope;

pub use rope::{rope, rope_backward};
