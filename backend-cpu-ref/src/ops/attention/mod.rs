//! The attention and position family (§2.8): Attention (§2.8.1) in `sdpa`, Rope and
//! RopeBackward in `rope`.

pub(crate) mod rope;
pub(crate) mod sdpa;
