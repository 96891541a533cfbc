//! Signal processing (§2.11): `Fft`, `LogMel`, `WelchPeaks`.

use super::arity;
use super::util::{dtype_is, index_dtype_ok, nonzero_at, out, rank_is, shape_is, st, static_at};
use crate::op::{FftAttrs, FloorScope, LogMelAttrs, WelchPeaksAttrs};
use crate::{bail, DType, Result, TensorType};

pub(crate) fn fft(_a: &FftAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "Fft")?;
    let x = &ins[0];
    dtype_is(x, DType::C64, "Fft input x")?;
    if x.rank() == 0 {
        bail!(Shape, "Fft x {x} must have rank >= 1 (the transform runs over the last axis)");
    }
    Ok(vec![x.clone()])
}

/// Checks `spectrum` and `filters` and returns the forward output type `[…, n_mels]`.
pub(super) fn log_mel_type(
    a: &LogMelAttrs,
    spectrum: &TensorType,
    filters: &TensorType,
    op: &str,
) -> Result<TensorType> {
    dtype_is(spectrum, DType::C64, &format!("{op} input spectrum"))?;
    dtype_is(filters, DType::F32, &format!("{op} input filters"))?;
    let min_rank = match a.floor_scope {
        FloorScope::Frame => 1,
        FloorScope::Spectrogram => 2,
    };
    if spectrum.rank() < min_rank {
        bail!(Shape, "{op} spectrum {spectrum} must have rank >= {min_rank} for floor scope {:?}", a.floor_scope);
    }
    let r = spectrum.rank();
    let n_fft = static_at(spectrum, r - 1, &format!("{op} spectrum (n_fft)"))?;
    if n_fft == 0 {
        bail!(Shape, "{op} spectrum {spectrum}: n_fft must be >= 1");
    }
    rank_is(filters, 2, &format!("{op} filters ([n_mels, n_bins])"))?;
    let n_mels = filters.shape.0[0].clone();
    shape_is(filters, &[n_mels.clone(), st(n_fft / 2 + 1)], &format!("{op} filters ([n_mels, n_fft div 2 + 1])"))?;
    let mut dims = spectrum.shape.0[..r - 1].to_vec();
    dims.push(n_mels);
    out(DType::F32, dims)
}

pub(crate) fn log_mel(a: &LogMelAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "LogMel (spectrum, filters)")?;
    Ok(vec![log_mel_type(a, &ins[0], &ins[1], "LogMel")?])
}

pub(crate) fn welch_peaks(a: &WelchPeaksAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "WelchPeaks")?;
    let x = &ins[0];
    dtype_is(x, DType::C64, "WelchPeaks input spectrum")?;
    index_dtype_ok(a.index_dtype, "WelchPeaks")?;
    if x.rank() < 2 {
        bail!(Shape, "WelchPeaks spectrum {x} must be [..., S, n_fft] (rank >= 2)");
    }
    let r = x.rank();
    nonzero_at(x, r - 2, "WelchPeaks spectrum (S segments)")?;
    let n_fft = static_at(x, r - 1, "WelchPeaks spectrum (n_fft)")?;
    if n_fft == 0 {
        bail!(Shape, "WelchPeaks spectrum {x}: n_fft must be >= 1");
    }
    let n_bins = n_fft / 2 + 1;
    if a.k as usize > n_bins {
        bail!(Attribute, "WelchPeaks k = {} exceeds the {n_bins} one-sided bins of n_fft = {n_fft}", a.k);
    }
    let mut dims = x.shape.0[..r - 2].to_vec();
    dims.push(st(a.k as usize));
    Ok(vec![out(a.index_dtype, dims.clone())?, out(DType::F32, dims)?])
}
