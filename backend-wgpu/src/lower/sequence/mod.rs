//! The sequence family (§2.10): Rnn, Gru and Lstm ([`recurrent`]), SelectiveScan and Mamba2
//! ([`ssm`]), GatedDeltaNet ([`delta`]). Scan is control flow (`super::control`).

mod delta;
mod recurrent;
mod ssm;
