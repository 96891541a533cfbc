//! Randomness (§2.12): every op reads a U32 `[2]` key.

use super::util::{dtype_is, index_dtype_ok, nonzero_at, out, shape_is, st};
use super::{arity, dtype_in};
use crate::op::{RngBitsAttrs, RngNormalAttrs, RngUniformAttrs, SampleAttrs};
use crate::{bail, DType, DTypeSet, Result, Shape, TensorType};

fn key_ok(key: &TensorType, op: &str) -> Result<()> {
    dtype_is(key, DType::U32, &format!("{op} key"))?;
    shape_is(key, &[st(2)], &format!("{op} key ((key_lo, key_hi))"))
}

fn float_out(dtype: DType, shape: &Shape, op: &str) -> Result<TensorType> {
    if !dtype.is_float() {
        bail!(Attribute, "{op} dtype {dtype} must be a float dtype");
    }
    out(dtype, shape.0.clone())
}

fn finite(v: f64, name: &str, op: &str) -> Result<()> {
    if !v.is_finite() {
        bail!(Attribute, "{op} {name} {v} must be finite");
    }
    Ok(())
}

pub(crate) fn rng_bits(a: &RngBitsAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "RngBits (key)")?;
    key_ok(&ins[0], "RngBits")?;
    Ok(vec![out(DType::U32, a.shape.0.clone())?])
}

pub(crate) fn rng_uniform(a: &RngUniformAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "RngUniform (key)")?;
    key_ok(&ins[0], "RngUniform")?;
    finite(a.low, "low", "RngUniform")?;
    finite(a.high, "high", "RngUniform")?;
    if a.low > a.high {
        bail!(Attribute, "RngUniform low {} > high {}", a.low, a.high);
    }
    Ok(vec![float_out(a.dtype, &a.shape, "RngUniform")?])
}

pub(crate) fn rng_normal(a: &RngNormalAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 1, "RngNormal (key)")?;
    key_ok(&ins[0], "RngNormal")?;
    finite(a.mean, "mean", "RngNormal")?;
    finite(a.std, "std", "RngNormal")?;
    if a.std < 0.0 {
        bail!(Attribute, "RngNormal std {} must be >= 0", a.std);
    }
    Ok(vec![float_out(a.dtype, &a.shape, "RngNormal")?])
}

pub(crate) fn sample(a: &SampleAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "Sample (logits, key)")?;
    let logits = &ins[0];
    dtype_in(logits, DTypeSet::FLOAT32_FAMILY, "Sample input logits")?;
    key_ok(&ins[1], "Sample")?;
    if !a.temperature.is_finite() || a.temperature < 0.0 {
        bail!(Attribute, "Sample temperature {} must be finite and >= 0", a.temperature);
    }
    if !(a.top_p > 0.0 && a.top_p <= 1.0) {
        bail!(Attribute, "Sample top_p {} must be in (0, 1]", a.top_p);
    }
    index_dtype_ok(a.index_dtype, "Sample")?;
    if logits.rank() == 0 {
        bail!(Shape, "Sample logits {logits} must be [..., V] (rank >= 1)");
    }
    nonzero_at(logits, logits.rank() - 1, "Sample logits (vocabulary V)")?;
    Ok(vec![out(a.index_dtype, logits.shape.0[..logits.rank() - 1].to_vec())?])
}
