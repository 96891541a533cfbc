//! Attention (§2.8.1) in `sdpa`; Rope and RopeBackward (§2.8.3–2.8.4) in `rope`.

pub(crate) mod rope;
pub(crate) mod sdpa;
