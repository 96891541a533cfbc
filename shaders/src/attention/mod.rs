//! Variants of the attention kernel family (§2.8): the fused attention kernels ([`flash`]) and
//! their tensor-core variant ([`coop`]).

pub mod coop;
pub mod flash;

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[<flash::AttnParams as crate::params::Params>::LAYOUT];
