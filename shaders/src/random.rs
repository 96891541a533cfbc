//! Variants of the random kernel family (§1.9 Philox4x32-10, §2.12 RngBits, RngUniform,
//! RngNormal, Sample).
//!
//! `philox.wgsl` holds the generator with 32-bit integer operations only (no SHADER_INT64 needed
//! except for F64 outputs). The elementwise ops share `random_elem.wgsl` (one invocation per
//! Philox block of four words); the variant fills the value expression and the tensor bindings.
//! `Sample` is `random_sample.wgsl` (one workgroup per row).

use crate::{render, tensor_binding, Access, COMMON, MATH, MATH64};
use backend_api::DType;

crate::params! {
    /// `RandomElemParams` of `random_elem.wgsl` (RngBits, RngUniform, RngNormal).
    pub struct RandomElemParams {
        /// Output elements.
        pub n: u32,
        /// Philox blocks (one invocation each): `⌈n / 4⌉`.
        pub nblocks: u32,
        /// Low word of the op seed.
        pub seed_lo: u32,
        /// High word of the op seed.
        pub seed_hi: u32,
        /// Low word of the 64-bit block index of this dispatch's block 0.
        pub base_lo: u32,
        /// High word of that block index.
        pub base_hi: u32,
        /// Always 0, unknown to the driver (see `uniform_f32` in `random_f32.wgsl`).
        pub opaque_zero: u32,
        /// Padding.
        pub pad1: u32,
        /// First float attribute (low, mean): f32 bits in word 0, or f64 bits (lo, hi).
        pub a: [u32; 2],
        /// Second float attribute (high, std), as `a`.
        pub b: [u32; 2],
    }
}

crate::params! {
    /// `RandomSampleParams` of `random_sample.wgsl`.
    pub struct RandomSampleParams {
        /// Rows (one workgroup each).
        pub rows: u32,
        /// Vocabulary size (logits per row).
        pub v: u32,
        /// Temperature (unused when `greedy`).
        pub temperature: f32,
        /// Top-k cut; 0 disables.
        pub top_k: u32,
        /// Nucleus threshold; 1 disables.
        pub top_p: f32,
        /// 1 for greedy decoding (temperature 0).
        pub greedy: u32,
        /// Low word of the op seed.
        pub seed_lo: u32,
        /// High word of the op seed.
        pub seed_hi: u32,
        /// Low word of the 64-bit stream position of row 0.
        pub base_lo: u32,
        /// High word of that position.
        pub base_hi: u32,
        /// Always 0, unknown to the driver (see `scaled_logit` in `random_sample.wgsl`).
        pub opaque_zero: u32,
        /// Padding.
        pub pad1: u32,
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] =
    &[<RandomElemParams as crate::params::Params>::LAYOUT, <RandomSampleParams as crate::params::Params>::LAYOUT];

/// Philox4x32-10 and the stream helpers.
pub const PHILOX: &str = include_str!("wgsl/philox.wgsl");
/// RngBits / RngUniform / RngNormal: one invocation per block.
pub const RANDOM_ELEM: &str = include_str!("wgsl/random_elem.wgsl");
/// f32 uniform and Box–Muller helpers.
pub const RANDOM_F32: &str = include_str!("wgsl/random_f32.wgsl");
/// f64 uniform and Box–Muller helpers (needs SHADER_F64 and SHADER_INT64).
pub const RANDOM_F64: &str = include_str!("wgsl/random_f64.wgsl");
/// Sample: one workgroup per row.
pub const RANDOM_SAMPLE: &str = include_str!("wgsl/random_sample.wgsl");

/// Which elementwise random op a variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RngKind {
    /// The raw stream words (U32 output).
    Bits,
    /// `low + (high − low) · uniform` (params `a` = low, `b` = high).
    Uniform,
    /// `mean + std · z` (params `a` = mean, `b` = std).
    Normal,
}

impl RngKind {
    /// Every kind.
    pub const ALL: [RngKind; 3] = [RngKind::Bits, RngKind::Uniform, RngKind::Normal];
}

/// (what, value expression) of a variant; `None` when the kind does not produce `d`.
fn value(kind: RngKind, d: DType) -> Option<(&'static str, &'static str)> {
    Some(match (kind, d) {
        (RngKind::Bits, DType::U32) => ("the stream word", "rng_word(w, j)"),
        (RngKind::Uniform, DType::F32 | DType::F16 | DType::BF16) => {
            ("a uniform in f32", "uniform_f32(rng_word(w, j), attr_f32(p.a), attr_f32(p.b), p.opaque_zero)")
        }
        (RngKind::Uniform, DType::F64) => {
            ("a uniform in f64", "uniform_f64(rng_word(w, j), attr_f64(p.a), attr_f64(p.b), p.opaque_zero)")
        }
        (RngKind::Normal, DType::F32 | DType::F16 | DType::BF16) => {
            ("a Box–Muller normal in f32", "normal_f32(w, j, attr_f32(p.a), attr_f32(p.b))")
        }
        (RngKind::Normal, DType::F64) => {
            ("a Box–Muller normal in f64", "normal_f64(w, j, attr_f64(p.a), attr_f64(p.b))")
        }
        _ => return None,
    })
}

/// Renders an elementwise random variant. Bindings: 1 `key` (U32), 2 `out` (`d`). `None` for a
/// dtype the kind does not produce (Bits: U32; Uniform, Normal: F32, F16, BF16, F64).
pub fn elem_module(kind: RngKind, d: DType) -> Option<Result<String, String>> {
    let (what, expr) = value(kind, d)?;
    let tensors = tensor_binding("key", 1, DType::U32, Access::Read) + &tensor_binding("out", 2, d, Access::Write);
    let body =
        render(RANDOM_ELEM, &[("TENSORS", &tensors), ("WHAT", what), ("R", crate::reg_type(d)), ("VALUE", expr)]);
    let (math64, helpers) = if d == DType::F64 { (MATH64, RANDOM_F64) } else { ("", RANDOM_F32) };
    Some(body.map(|b| crate::module(&[COMMON, MATH, math64, PHILOX, helpers, &b])))
}

/// Renders a `Sample` variant for logits of `logits` (F32, F16, BF16) and indices of `index`
/// (I32, I64). Bindings: 1 `x` (logits), 2 `key`, 3 `out`. `None` outside those dtypes.
pub fn sample_module(logits: DType, index: DType) -> Option<Result<String, String>> {
    if !matches!(logits, DType::F32 | DType::F16 | DType::BF16) {
        return None;
    }
    let cast = match index {
        DType::I32 => "i32(idx)",
        DType::I64 => "i64(idx)",
        _ => return None,
    };
    let tensors = tensor_binding("x", 1, logits, Access::Read)
        + &tensor_binding("key", 2, DType::U32, Access::Read)
        + &tensor_binding("out", 3, index, Access::Write);
    let body = render(RANDOM_SAMPLE, &[("TENSORS", &tensors), ("INDEX", cast)]);
    Some(body.map(|b| crate::module(&[COMMON, MATH, PHILOX, &b])))
}
