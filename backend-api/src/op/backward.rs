//! Attributes of the training backward ops that have no section of their forward op's (§2.16):
//! `LayerNormBackward` and `RmsNormBackward` (`SoftmaxCrossEntropyBackward` and `LogMelBackward`
//! take their forward op's attributes).

/// Which gradient a norm backward op produces (§2.16.1–2.16.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NormGrad {
    /// `dx`, shape of `x`.
    Input,
    /// `dgamma`, shape of `gamma`.
    Gamma,
    /// `dbeta`, shape of `gamma`.
    Beta,
}

/// `LayerNormBackward` / `RmsNormBackward` (§2.16.1–2.16.2).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct NormBackwardAttrs {
    /// Canonical first normalised axis of the forward op.
    pub axis: usize,
    /// The forward op's `eps`.
    #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::float32"))]
    pub eps: f32,
    /// The gradient produced.
    pub wrt: NormGrad,
}
