//! Attention (§2.8.1) in `sdpa`.

pub(crate) mod sdpa;
