//! Attributes of the sequence models (§2.10): recurrent cells, state-space scans and `Scan`.

use crate::Graph;

/// The activation of an Elman `Rnn` (§2.10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RnnNonlinearity {
    /// `tanh` (default).
    Tanh,
    /// `max(x, 0)`.
    Relu,
}

/// `Rnn`, `Gru` and `Lstm` (§2.10.1–2.10.3), PyTorch semantics.
///
/// `nonlinearity` is read by `Rnn` only and `linear_before_reset` by `Gru` only; the builder keeps
/// them at their defaults for the other cells so that equal nodes compare equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RecurrentAttrs {
    /// Hidden size `H` ≥ 1.
    pub hidden_size: u32,
    /// Stacked layers `L` ≥ 1 (default 1).
    pub num_layers: u32,
    /// Two directions (default false).
    pub bidirectional: bool,
    /// `x` and `y` are `[B, S, ·]` (default true; PyTorch's default is false).
    pub batch_first: bool,
    /// Every layer and direction has `b_ih` and `b_hh` inputs (default true).
    pub has_bias: bool,
    /// `h0` (and `c0` for `Lstm`) inputs follow the weights (default false).
    pub has_initial_state: bool,
    /// `Rnn` only: `Tanh` (default) or `Relu`.
    pub nonlinearity: RnnNonlinearity,
    /// `Gru` only: apply the reset gate after `W_hh` (default true, PyTorch's form).
    pub linear_before_reset: bool,
}

impl RecurrentAttrs {
    /// `hidden_size` with every other attribute at its default.
    pub fn new(hidden_size: u32) -> RecurrentAttrs {
        RecurrentAttrs {
            hidden_size,
            num_layers: 1,
            bidirectional: false,
            batch_first: true,
            has_bias: true,
            has_initial_state: false,
            nonlinearity: RnnNonlinearity::Tanh,
            linear_before_reset: true,
        }
    }

    /// Directions `D` (2 when bidirectional).
    pub fn num_directions(&self) -> usize {
        if self.bidirectional {
            2
        } else {
            1
        }
    }
}

/// `SelectiveScan` and `Mamba2` (§2.10.4–2.10.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct StateSpaceAttrs {
    /// An initial-state input follows the others (default false).
    pub has_initial_state: bool,
}

/// `GatedDeltaNet` (§2.10.6).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct GatedDeltaNetAttrs {
    /// Output scale; `None` means `1/√Dk`. Finite when present.
    #[cfg_attr(feature = "serde", serde(default, with = "crate::json::codec::opt_float32"))]
    pub scale: Option<f32>,
    /// A `state0` input follows `beta` (default false).
    pub has_initial_state: bool,
}

/// `Scan` (§2.10.7): a loop over the leading axis of the sequence inputs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct ScanAttrs {
    /// Takes `C` carries, `Bc` broadcast values, `X` step slices; returns `C` carries then `Y` values.
    pub body: Graph,
    /// Number of steps; every sequence input has this leading dim.
    pub length: u64,
    /// Visit steps from `length − 1` down to 0 (default false).
    pub reverse: bool,
    /// Loop-carried values `C`.
    pub num_carry: u32,
    /// Inputs passed unchanged to every step `Bc`.
    pub num_bcast: u32,
    /// Sequence inputs `X`.
    pub num_xs: u32,
    /// Also output the `C` carries after every step, stacked (default false).
    pub save_trajectory: bool,
}
