//! The recurrence kernels of Rnn, Gru and Lstm (§2.10.1–2.10.3).

/// The params structs of this module (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[];
