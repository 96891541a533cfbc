//! Variants of the sequence kernel family (§2.10): the recurrences of Rnn, Gru and Lstm
//! ([`recurrent`]), the state-space scans SelectiveScan and Mamba2 ([`ssm`]) and the gated delta
//! rule ([`delta`]).

pub mod delta;
pub mod recurrent;
pub mod ssm;

/// The params structs of this family (see [`mod@crate::params`]), each submodule's own.
pub fn params() -> impl Iterator<Item = &'static crate::params::Layout> {
    [ssm::PARAMS, delta::PARAMS, recurrent::PARAMS].into_iter().flatten()
}
