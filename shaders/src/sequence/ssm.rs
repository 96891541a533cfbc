//! The state-space scans SelectiveScan (§2.10.4) and Mamba2 (§2.10.5).

/// The params structs of this module (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[];
