//! The quantised matmul kernel (`linalg_quant_gemv.wgsl`, QuantMatMul §2.6.5): the weight stays
//! in its quantised bytes and each element `W[n, k]` is decoded where it is multiplied. A format
//! differs only in its bindings and its decode expression (§2.6.7), built here from the helpers
//! of `linalg_quant_decode.wgsl` and, for the GGML block formats, `linalg_quant_ggml.wgsl`.
//!
//! Bindings: 1 `x`, 2 `w` (always read as raw bytes), then the format's other weight inputs in
//! their order, then `out`; the grouped form ([`grouped_module_for`], QuantGroupedMatMul §2.6.6)
//! then binds the expert of each row tile.

use crate::{module, render, tensor_binding, Access, COMMON};
use backend_api::op::QuantFormat;
use backend_api::DType;

/// The kernel template.
pub const QUANT_GEMV: &str = include_str!("../wgsl/linalg_quant_gemv.wgsl");
/// Byte readers and scalar decoders (E4M3, E5M2, E2M1, signed bytes and nibbles).
pub const QUANT_DECODE: &str = include_str!("../wgsl/linalg_quant_decode.wgsl");
/// Element decoders of the GGML block formats.
pub const QUANT_GGML: &str = include_str!("../wgsl/linalg_quant_ggml.wgsl");

/// Output rows one workgroup computes (`ROWS` of the template).
pub const QUANT_ROWS: u32 = 4;
/// Elements of K one invocation takes at a time (`CH` of the template).
pub const QUANT_CHUNK: u32 = 32;

crate::params! {
    /// `QuantParams` of `linalg_quant_gemv.wgsl`.
    pub struct QuantParams {
        /// Rows of x (the product of its leading dims; in the grouped form, the rows of the
        /// padded layout of row tiles).
        pub m: u32,
        /// Output columns N (rows of W).
        pub n: u32,
        /// Contraction length K.
        pub k: u32,
        /// Bytes per row of `w`.
        pub wrow: u32,
        /// Elements per row of the scale input (Fp8: 0 for a per-tensor scale, 1 per row;
        /// Nvfp4: `K / 16` block scales).
        pub srow: u32,
        /// Elements per scale of the scale-tensor integer formats (`block_size`).
        pub qb: u32,
        /// Workgroups that do work: `N · ⌈M / ROWS⌉`.
        pub groups: u32,
        /// Padding.
        pub pad0: u32,
    }
}

/// The GGML element decoder function of `format`, with its `(QK, BB)`; `None` for the
/// scale-tensor formats.
fn ggml_decoder(format: QuantFormat) -> Option<(&'static str, usize, usize)> {
    let name = match format {
        QuantFormat::Int8Block { .. }
        | QuantFormat::Int8BlockAsym { .. }
        | QuantFormat::Int4Block { .. }
        | QuantFormat::Fp8E4m3
        | QuantFormat::Fp8E5m2
        | QuantFormat::Nvfp4 => return None,
        QuantFormat::Q4_0 => "q4_0",
        QuantFormat::Q4_1 => "q4_1",
        QuantFormat::Q5_0 => "q5_0",
        QuantFormat::Q5_1 => "q5_1",
        QuantFormat::Q8_0 => "q8_0",
        QuantFormat::Q2_K => "q2_k",
        QuantFormat::Q3_K => "q3_k",
        QuantFormat::Q4_K => "q4_k",
        QuantFormat::Q5_K => "q5_k",
        QuantFormat::Q6_K => "q6_k",
        QuantFormat::Q8_K => "q8_k",
    };
    let (qk, bb) = format.ggml_block()?;
    Some((name, qk, bb))
}

/// A format's kernel pieces: the bindings after `w` (name and dtype, from binding 3) and the
/// decode expression of `W[n, k]`.
pub type Decode = (Vec<(&'static str, DType)>, String);

/// The [`Decode`] of `format` with weight input dtypes `ws` (`w` first). `Err` for dtypes the
/// format does not take.
///
/// The expression reads the `u32`s `n` (the row of `w`, counted over every expert of a grouped
/// weight: `e · N + column`), `k` and `e` (the expert, 0 for QuantMatMul; it indexes the
/// per-tensor scales, which a grouped weight has one of per expert), the params `p.wrow`,
/// `p.srow` and `p.qb` (see [`QuantParams`]), and the bindings `w`, `ld_<name>` of the extra
/// inputs and the helpers of `linalg_quant_decode.wgsl` / `linalg_quant_ggml.wgsl`.
pub fn decode(format: QuantFormat, ws: &[DType]) -> Result<Decode, String> {
    let at = |i: usize| ws.get(i).copied().ok_or_else(|| format!("{}: weight input {i} missing", format.name()));
    let float_scale = |d: DType| match d {
        DType::F32 | DType::F16 => Ok(d),
        _ => Err(format!("{}: scale must be F32 or F16, got {d}", format.name())),
    };
    let block = "n * p.srow + k / p.qb";
    Ok(match format {
        QuantFormat::Int8Block { .. } => {
            let s = float_scale(at(1)?)?;
            (vec![("scale", s)], format!("sx8(wb(n * p.wrow + k)) * ld_scale({block})"))
        }
        QuantFormat::Int8BlockAsym { .. } => {
            let s = float_scale(at(1)?)?;
            // The code minus the zero point is an f32 subtraction (the zero need not be whole).
            let q = match at(0)? {
                DType::I8 => "sx8(wb(n * p.wrow + k))",
                _ => "f32(wb(n * p.wrow + k))",
            };
            (vec![("scale", s), ("zero", s)], format!("({q} - ld_zero({block})) * ld_scale({block})"))
        }
        QuantFormat::Int4Block { .. } => {
            let s = float_scale(at(1)?)?;
            (vec![("scale", s)], format!("sx4(nib_at(n * p.wrow, k)) * ld_scale({block})"))
        }
        QuantFormat::Fp8E4m3 => {
            (vec![("scale", DType::F32)], "e4m3(wb(n * p.wrow + k)) * ld_scale(select(e, n, p.srow == 1u))".into())
        }
        QuantFormat::Fp8E5m2 => {
            (vec![("scale", DType::F32)], "e5m2(wb(n * p.wrow + k)) * ld_scale(select(e, n, p.srow == 1u))".into())
        }
        QuantFormat::Nvfp4 => (
            vec![("bs", DType::U8), ("gs", DType::F32)],
            "e2m1(nib_at(n * p.wrow, k)) * e4m3(ld_bs(n * p.srow + k / 16u)) * ld_gs(e)".into(),
        ),
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => {
            let Some((f, qk, bb)) = ggml_decoder(format) else {
                return Err(format!("{} has no GGML block decoder", format.name()));
            };
            (vec![], format!("{f}(n * p.wrow + (k / {qk}u) * {bb}u, k % {qk}u)"))
        }
    })
}

/// The QuantMatMul kernel for `format`, `x` of float dtype `x` (F32, F16 or BF16; the output
/// has the same) and weight inputs of dtypes `ws` in the format's order. `None` for an `x` dtype
/// outside the float32 family; `Err` for weight dtypes the format does not take.
pub fn module_for(format: QuantFormat, x: DType, ws: &[DType]) -> Option<Result<String, String>> {
    if !matches!(x, DType::F32 | DType::F16 | DType::BF16) {
        return None;
    }
    Some(render_for(format, x, ws, false))
}

/// The QuantGroupedMatMul form of [`module_for`]: the kernel runs over `x` rows sorted into tiles
/// of [`QUANT_ROWS`] rows of one expert each, and after `out` binds a `u32` table holding the
/// expert of each tile (every entry below E; the index is clamped to the table). The weight
/// inputs have a leading expert dim E: row `e · N + n` of each is row `n` of expert `e`.
pub fn grouped_module_for(format: QuantFormat, x: DType, ws: &[DType]) -> Option<Result<String, String>> {
    if !matches!(x, DType::F32 | DType::F16 | DType::BF16) {
        return None;
    }
    Some(render_for(format, x, ws, true))
}

/// The kernel for `format`, grouped (the expert of each row tile read from a table bound after
/// `out`) or not (expert 0).
fn render_for(format: QuantFormat, x: DType, ws: &[DType], grouped: bool) -> Result<String, String> {
    let (extra, expr) = decode(format, ws)?;
    let mut tensors = tensor_binding("x", 1, x, Access::Read);
    let next = weight_and_out_bindings(&mut tensors, &extra, x);
    let expert = if grouped {
        tensors += &format!("@group(0) @binding({}) var<storage, read_write> texp: array<u32>;\n", next + 1);
        "texp[min(row0 / ROWS, arrayLength(&texp) - 1u)]"
    } else {
        "0u"
    };
    let body = render(QUANT_GEMV, &[("TENSORS", &tensors), ("DECODE", &expr), ("EXPERT", expert)])?;
    let mut parts = vec![COMMON, body.as_str()];
    parts.extend_from_slice(decode_helpers(format));
    Ok(crate::loops_bounded(&module(&parts)))
}

/// Appends the bindings after `x` (1) to `tensors`: `w` (2, raw bytes), the format's `extra`
/// weight inputs, then `out` of dtype `x`; returns `out`'s binding number.
pub(super) fn weight_and_out_bindings(tensors: &mut String, extra: &[(&str, DType)], x: DType) -> u32 {
    *tensors += &tensor_binding("w", 2, DType::U8, Access::Read);
    let mut next = 3u32;
    for &(name, d) in extra {
        *tensors += &tensor_binding(name, next, d, Access::Read);
        next += 1;
    }
    *tensors += &tensor_binding("out", next, x, Access::Write);
    next
}

/// The WGSL helpers a [`decode`] expression of `format` calls (to append to a module).
pub fn decode_helpers(format: QuantFormat) -> &'static [&'static str] {
    match ggml_decoder(format) {
        Some(_) => &[QUANT_DECODE, QUANT_GGML],
        None => &[QUANT_DECODE],
    }
}
