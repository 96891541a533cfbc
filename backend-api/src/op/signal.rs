//! Attributes of signal processing (§2.11).

use crate::DType;

/// The scaling convention of `Fft` (§2.11.1), numpy's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FftNorm {
    /// Forward unscaled, inverse `1/n` (default).
    Backward,
    /// Forward `1/n`, inverse unscaled.
    Forward,
    /// Both `1/√n`.
    Ortho,
}

/// `Fft` (§2.11.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct FftAttrs {
    /// Inverse transform (default false).
    pub inverse: bool,
    /// Scaling (default `Backward`).
    pub norm: FftNorm,
}

impl Default for FftAttrs {
    /// A forward transform with `Backward` scaling.
    fn default() -> Self {
        FftAttrs { inverse: false, norm: FftNorm::Backward }
    }
}

/// Over which values the `LogMel` floor `max − 8` is taken (§2.11.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FloorScope {
    /// Each frame's `n_mels` values (default; this IR's own choice).
    Frame,
    /// The whole `[frames, n_mels]` matrix of one spectrogram (Whisper's rule).
    Spectrogram,
}

/// `LogMel` and `LogMelBackward` (§2.11.2, §2.16.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct LogMelAttrs {
    /// The floor's scope (default `Frame`).
    pub floor_scope: FloorScope,
}

impl Default for LogMelAttrs {
    /// `floor_scope = Frame`.
    fn default() -> Self {
        LogMelAttrs { floor_scope: FloorScope::Frame }
    }
}

/// `WelchPeaks` (§2.11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct WelchPeaksAttrs {
    /// Number of bins returned, `≤ n_fft div 2 + 1`.
    pub k: u32,
    /// I32 (default) or I64.
    pub index_dtype: DType,
}
