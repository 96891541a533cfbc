//! Variants of Rope and RopeBackward (§2.8.3–2.8.4): one elementwise-like kernel per op, one
//! invocation per rotated pair (scalar form, [`module`]) or per four pairs (four-wide F32 form,
//! [`module_vec4`]). Both ops share the kernels: RopeBackward reads the sine table negated
//! (`RopeParams::sign`), and the pairing style is a params choice in the scalar form (step and
//! gap between the two elements of a pair) and the `{{ROTATE}}` function in the four-wide form.

use crate::{render, tensor_binding, Access, COMMON};
use backend_api::op::RopeStyle;
use backend_api::DType;

/// Params and unit addressing shared by both forms.
pub const ATTENTION_ROPE_COMMON: &str = include_str!("../wgsl/attention_rope_common.wgsl");
/// The scalar form (any float32-family dtype of x and of the tables).
pub const ATTENTION_ROPE: &str = include_str!("../wgsl/attention_rope.wgsl");
/// The four-wide F32 form.
pub const ATTENTION_ROPE_VEC4: &str = include_str!("../wgsl/attention_rope_vec4.wgsl");

crate::params! {
    /// `RopeParams` of `attention_rope_common.wgsl`. Sizes are in the kernel's units: elements in
    /// the scalar form, 4-vectors in the four-wide form.
    pub struct RopeParams {
        /// Invocations that do work (rows · heads · per_head).
        pub units: u32,
        /// Units per head: `r` rotating units, then the passed-through part.
        pub per_head: u32,
        /// Heads per row (`last / D`).
        pub heads: u32,
        /// Head width.
        pub d: u32,
        /// Table row width (`R/2`), also the number of rotating units per head.
        pub r: u32,
        /// Distance between the first elements of consecutive pairs (NeoX 1, GptJ 2).
        pub step: u32,
        /// Distance between the two elements of a pair (NeoX `r`, GptJ 1).
        pub gap: u32,
        /// Rows per position (the product of the dims between the position axis and the last).
        pub mid: u32,
        /// Positions `S`.
        pub s: u32,
        /// Rows per index of x's first dim (per-batch tables; at least 1).
        pub tdiv: u32,
        /// 1 for the per-batch `[x.shape[0], S, R/2]` tables, 0 for `[S, R/2]`.
        pub batched: u32,
        /// +1 for Rope, −1 for RopeBackward (the sine's sign).
        pub sign: f32,
    }
}

/// The params structs of this module (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[<RopeParams as crate::params::Params>::LAYOUT];

/// The scalar module for `x` of dtype `d` and tables of dtype `table`. Bindings: 1 `x`, 2 `cos_t`,
/// 3 `sin_t`, 4 `out` (dtype `d`, zeroed first when packed). `None` unless `d` is F32, F16 or
/// BF16 and `table` is `d` or F32.
pub fn module(d: DType, table: DType) -> Option<Result<String, String>> {
    let float32 = matches!(d, DType::F32 | DType::F16 | DType::BF16);
    if !float32 || (table != d && table != DType::F32) {
        return None;
    }
    let tensors = tensor_binding("x", 1, d, Access::Read)
        + &tensor_binding("cos_t", 2, table, Access::Read)
        + &tensor_binding("sin_t", 3, table, Access::Read)
        + &tensor_binding("out", 4, d, Access::Write);
    Some(render(ATTENTION_ROPE, &[("TENSORS", &tensors)]).map(|k| crate::module(&[COMMON, ATTENTION_ROPE_COMMON, &k])))
}

/// The four-wide F32 module for pairing `style`: x, the tables and out are bound (1–4 as
/// [`module`]) as arrays of `vec4<f32>`, so `R/2` and `D` must be multiples of 4 and every window
/// 16-byte aligned.
pub fn module_vec4(style: RopeStyle) -> Result<String, String> {
    let rotate = match style {
        RopeStyle::NeoX => "neox",
        RopeStyle::GptJ => "gptj",
    };
    let k = render(ATTENTION_ROPE_VEC4, &[("ROTATE", rotate)])?;
    Ok(crate::module(&[COMMON, ATTENTION_ROPE_COMMON, &k]))
}
