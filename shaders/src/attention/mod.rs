//! Variants of the attention kernel family (§2.8): the rotary embeddings Rope and RopeBackward in
//! [`rope`].

pub mod rope;

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = rope::PARAMS;
