//! Variants of the attention kernel family (§2.8): the fused attention kernels ([`flash`]), their
//! tensor-core variant ([`coop`]) and the rotary embeddings Rope and RopeBackward ([`rope`]).

pub mod coop;
pub mod flash;
pub mod rope;

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] =
    &[<flash::AttnParams as crate::params::Params>::LAYOUT, <rope::RopeParams as crate::params::Params>::LAYOUT];
