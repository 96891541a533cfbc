//! FusedResidualLayerNorm / FusedResidualRmsNorm (§2.7.8–2.7.9): the LayerNorm and RmsNorm
//! kernels (multi-pass, single-pass, four-wide) on the residual sum instead of a stored `x`. The
//! bodies read their row through `ld_x` / `ld_x1` (`ld4_x1` four-wide); here those accessors form
//! `s = (x + residual) + bias` from the inputs, rounded as the unfused Adds round, and `ld_x1`
//! stores `s` as the second output when the op emits it. One kernel per row reads every input
//! once (single-pass) and writes `y` and `s`.
//!
//! Bindings: 1 `x`, 2 `residual`, then `bias` (with a bias), `gamma`, `beta` (with beta), `y`, and
//! `s` (with the sum emitted): at most 7 storage buffers.

use super::{render_kind, tensor_binding, Held, NormKind};
use crate::{render, Access};
use backend_api::DType;

/// Scalar accessors of the sum (`norm_fused.wgsl`).
pub const NORM_FUSED: &str = include_str!("../wgsl/norm_fused.wgsl");
/// Four-wide accessors of the sum (`norm_fused_vec4.wgsl`).
pub const NORM_FUSED_VEC4: &str = include_str!("../wgsl/norm_fused_vec4.wgsl");
/// The broadcast bias index (`norm_fused_bias.wgsl`).
pub const NORM_FUSED_BIAS: &str = include_str!("../wgsl/norm_fused_bias.wgsl");

/// What a fused residual variant adds to its norm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fusion {
    /// A bias input (broadcast to `x` through `NormParams::bias_*`) is added after the residual.
    pub bias: bool,
    /// The sum is written as the second output.
    pub emit_sum: bool,
}

/// The fused residual module of `kind` (LayerNorm or RmsNorm) on float `d`: multi-pass with
/// `held` None, else the single-pass form `held` (see [`super::module_held`] and
/// [`super::module_held4`]). `None` for Softmax/LogSoftmax, a non-float dtype, or a form that does
/// not exist for `d` ([`Held::valid_for`]). The single-pass forms without a bias are trusted as
/// the plain ones are (x, residual and the sum are indexed exactly as x and out); with a bias they
/// keep the runtime checks (its index comes from the params).
pub fn module_fused(
    kind: NormKind,
    d: DType,
    beta: bool,
    f: Fusion,
    held: Option<Held>,
) -> Option<Result<String, String>> {
    if !kind.has_gamma() || !d.is_float() || d == DType::C64 || held.is_some_and(|h| !h.valid_for(d)) {
        return None;
    }
    let vec4 = held.is_some_and(|h| h.vec4);
    let tensors = match fused_tensors(d, beta, f, vec4) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    render_kind(kind, d, beta, held, &tensors, !f.bias)
}

/// The bindings and the sum accessors of a fused variant.
fn fused_tensors(d: DType, beta: bool, f: Fusion, vec4: bool) -> Result<String, String> {
    let bind_in = |name: &str, k: u32| bind(name, k, d, Access::Read, vec4);
    let bind_out = |name: &str, k: u32| bind(name, k, d, Access::Write, vec4);
    let mut t = bind_in("xin", 1) + &bind_in("res", 2);
    let mut next = 3;
    if f.bias {
        // the bias is gathered element by element, so it stays scalar in the four-wide form
        t += &tensor_binding("bias", next, d, Access::Read);
        t += NORM_FUSED_BIAS;
        next += 1;
    }
    t += &bind_in("g", next);
    next += 1;
    if beta {
        t += &bind_in("b", next);
        next += 1;
    }
    t += &bind_out("out", next);
    if f.emit_sum {
        t += &bind_out("sm", next + 1);
    }
    let accessors = if vec4 {
        let sum = if f.bias { "(xin[j] + res[j]) + bias4(j)" } else { "xin[j] + res[j]" };
        let emit = if f.emit_sum { "sm[j] = v;" } else { "" };
        render(NORM_FUSED_VEC4, &[("SUM", sum), ("EMIT", emit)])?
    } else {
        let sum = if f.bias {
            "rnd(rnd(ld_xin(i) + ld_res(i)) + ld_bias(bias_index(i)))"
        } else {
            "rnd(ld_xin(i) + ld_res(i))"
        };
        let emit = if f.emit_sum { "st_sm(i, v);" } else { "" };
        render(NORM_FUSED, &[("ROUND", round(d)), ("SUM", sum), ("EMIT", emit)])?
    };
    Ok(t + &accessors)
}

/// A tensor binding with its accessor, or (four-wide) a bare array of `vec4<f32>`.
fn bind(name: &str, k: u32, d: DType, access: Access, vec4: bool) -> String {
    if vec4 {
        format!("@group(0) @binding({k}) var<storage, read_write> {name}: array<vec4<f32>>;\n")
    } else {
        tensor_binding(name, k, d, access)
    }
}

/// `v` (computed in the register type) rounded to `d`, as a store of `d` would round it: the
/// sum the unfused Add kernel would have written. Double rounding (exact sum → f32 → f16/bf16)
/// equals one rounding here: f32 keeps more than 2p + 2 bits of a p-bit format's sum.
fn round(d: DType) -> &'static str {
    match d {
        DType::F16 => "f16_bits_to_f32(f32_to_f16_bits(v))",
        DType::BF16 => "bf16_bits_to_f32(f32_to_bf16_bits(v))",
        DType::F32 | DType::F64 => "v",
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => "v",
    }
}
