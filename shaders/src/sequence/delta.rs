//! The gated delta rule, GatedDeltaNet (§2.10.6).

/// The params structs of this module (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[];
