//! The decode-speed quantised GEMV (`linalg_quant_vec.wgsl`, QuantMatMul §2.6.5 with at most
//! [`QUANT_VEC_MAX_ROWS`] rows of x): all rows of x in one workgroup, so each weight byte is read
//! once, as whole words; each unit of a row (a block or part of one, [`unit_elems`] elements) has
//! its scales decoded once and its codes unpacked four at a time. A format is its unit function:
//! one of `linalg_quant_vec_ggml.wgsl` for the GGML block formats, or the byte / nibble unit of
//! `linalg_quant_vec_scale.wgsl` with the format's code decoder, scale loads and weight
//! expression for the scale-tensor formats. Elements outside whole units go through the
//! per-element decode expression of [`super::quant::decode`].
//!
//! Bindings (those of the generic kernel): 1 `x`, 2 `w` (raw words), then the format's other
//! weight inputs in their order, then `out`.

use super::quant::{decode, decode_helpers};
use crate::{module, render, tensor_binding, Access, COMMON};
use backend_api::op::QuantFormat;
use backend_api::DType;

/// The kernel template.
pub const QUANT_VEC: &str = include_str!("../wgsl/linalg_quant_vec.wgsl");
/// Units of the GGML block formats.
pub const QUANT_VEC_GGML: &str = include_str!("../wgsl/linalg_quant_vec_ggml.wgsl");
/// Units of the scale-tensor formats.
pub const QUANT_VEC_SCALE: &str = include_str!("../wgsl/linalg_quant_vec_scale.wgsl");
/// Column sums by subgroup operations.
pub const QUANT_VEC_SG: &str = include_str!("../wgsl/linalg_quant_vec_sg.wgsl");
/// Column sums by a tree in workgroup memory.
pub const QUANT_VEC_WG: &str = include_str!("../wgsl/linalg_quant_vec_wg.wgsl");

/// The most rows of x the kernel takes (all in one workgroup, in registers).
pub const QUANT_VEC_MAX_ROWS: u32 = 8;
/// Lanes per output column when the column sums go through workgroup memory.
pub const QUANT_VEC_TREE_LANES: u32 = 32;
/// Invocations per workgroup.
pub const QUANT_VEC_WORKGROUP: u32 = 256;

crate::params! {
    /// `QuantVecParams` of `linalg_quant_vec.wgsl`.
    pub struct QuantVecParams {
        /// Rows of x (the product of its leading dims, at most [`QUANT_VEC_MAX_ROWS`]).
        pub m: u32,
        /// Output columns N (rows of W).
        pub n: u32,
        /// Contraction length K.
        pub k: u32,
        /// Bytes per row of `w`.
        pub wrow: u32,
        /// Elements per row of the scale input (as `QuantParams::srow`).
        pub srow: u32,
        /// Elements per scale of the scale-tensor integer formats (`block_size`).
        pub qb: u32,
        /// Whole units per row: `K / unit_elems`.
        pub units: u32,
        /// Elements of K in whole units: `units · unit_elems`.
        pub kfull: u32,
        /// Workgroups that do work: `⌈N / (256 / lanes)⌉`.
        pub groups: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
    }
}

/// How one kernel variant is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuantVecShape {
    /// Rows of x (1 ..= [`QUANT_VEC_MAX_ROWS`]).
    pub rows: u32,
    /// Lanes per output column (a power of two dividing 256).
    pub lanes: u32,
    /// Column sums by `subgroupAdd`: only where every subgroup has exactly `lanes` invocations.
    pub subgroups: bool,
    /// x read as 16-byte (F32) or 8-byte (F16, BF16) vectors of 4 elements: K a multiple of 4
    /// and x's window 16-byte aligned.
    pub vec_x: bool,
}

impl QuantVecShape {
    /// Whether the template can be rendered for this shape.
    pub fn renderable(&self) -> bool {
        (1..=QUANT_VEC_MAX_ROWS).contains(&self.rows)
            && self.lanes.is_power_of_two()
            && self.lanes <= QUANT_VEC_WORKGROUP
    }

    /// Output columns per workgroup.
    pub fn columns(&self) -> u32 {
        QUANT_VEC_WORKGROUP / self.lanes.max(1)
    }
}

/// Elements of K in one unit of `format`: 32 for the GGML formats (a 32-element block, or an
/// eighth of a 256-element one), 16 for the scale-tensor formats.
pub fn unit_elems(format: QuantFormat) -> u32 {
    match unit(format) {
        Unit::Ggml(_) => 32,
        Unit::Scale(_) => 16,
    }
}

/// A scale-tensor format's unit: the unit function, its code decoder, whether the unit needs
/// one scale block (`UNIFORM`), and the unit's scales and weights (see the scale file).
struct ScaleUnit {
    func: &'static str,
    code: &'static str,
    uniform: &'static str,
    scale: &'static str,
    weight: &'static str,
}

enum Unit {
    Ggml(&'static str),
    Scale(ScaleUnit),
}

/// The block of element k0 (the unit's first) and of k0 + 15 (its last) are the same.
const ONE_BLOCK: &str = "k0 / p.qb == (k0 + 15u) / p.qb";
const BLOCK_SCALE: &str = "vec4<f32>(ld_scale(n * p.srow + k0 / p.qb), 0.0, 0.0, 0.0)";
const ROW_SCALE: &str = "vec4<f32>(ld_scale(select(0u, n, p.srow == 1u)), 0.0, 0.0, 0.0)";

fn unit(format: QuantFormat) -> Unit {
    let scaled = |func, code, uniform, scale, weight| Unit::Scale(ScaleUnit { func, code, uniform, scale, weight });
    match format {
        QuantFormat::Int8Block { .. } => scaled("unit_bytes", "codes_i8", ONE_BLOCK, BLOCK_SCALE, "q * s.x"),
        // The code type (I8 or U8) is chosen in `render_for`.
        QuantFormat::Int8BlockAsym { .. } => scaled(
            "unit_bytes",
            "codes_u8",
            ONE_BLOCK,
            "vec4<f32>(ld_scale(n * p.srow + k0 / p.qb), ld_zero(n * p.srow + k0 / p.qb), 0.0, 0.0)",
            "(q - s.y) * s.x",
        ),
        QuantFormat::Int4Block { .. } => scaled("unit_nibs", "codes_i4", ONE_BLOCK, BLOCK_SCALE, "q * s.x"),
        QuantFormat::Fp8E4m3 => scaled("unit_bytes", "codes_e4m3", "true", ROW_SCALE, "q * s.x"),
        QuantFormat::Fp8E5m2 => scaled("unit_bytes", "codes_e5m2", "true", ROW_SCALE, "q * s.x"),
        // (e2m1 · block scale) · global scale, the spec's order.
        QuantFormat::Nvfp4 => scaled(
            "unit_nibs",
            "codes_e2m1",
            "true",
            "vec4<f32>(e4m3(ld_bs(n * p.srow + k0 / 16u)), ld_gs(0u), 0.0, 0.0)",
            "(q * s.x) * s.y",
        ),
        QuantFormat::Q4_0 => Unit::Ggml("unit_q4_0"),
        QuantFormat::Q4_1 => Unit::Ggml("unit_q4_1"),
        QuantFormat::Q5_0 => Unit::Ggml("unit_q5_0"),
        QuantFormat::Q5_1 => Unit::Ggml("unit_q5_1"),
        QuantFormat::Q8_0 => Unit::Ggml("unit_q8_0"),
        QuantFormat::Q2_K => Unit::Ggml("unit_q2_k"),
        QuantFormat::Q3_K => Unit::Ggml("unit_q3_k"),
        QuantFormat::Q4_K => Unit::Ggml("unit_q4_k"),
        QuantFormat::Q5_K => Unit::Ggml("unit_q5_k"),
        QuantFormat::Q6_K => Unit::Ggml("unit_q6_k"),
        QuantFormat::Q8_K => Unit::Ggml("unit_q8_k"),
    }
}

/// The GEMV kernel for `format`, `x` of float dtype `x` (F32, F16 or BF16; the output has the
/// same), weight inputs of dtypes `ws` in the format's order, laid out as `shape`. `None` for an
/// `x` dtype outside the float32 family or a shape that cannot be rendered; `Err` for weight
/// dtypes the format does not take.
pub fn module_for(format: QuantFormat, x: DType, ws: &[DType], shape: QuantVecShape) -> Option<Result<String, String>> {
    if !matches!(x, DType::F32 | DType::F16 | DType::BF16) || !shape.renderable() {
        return None;
    }
    Some(render_for(format, x, ws, shape))
}

fn render_for(format: QuantFormat, x: DType, ws: &[DType], shape: QuantVecShape) -> Result<String, String> {
    let (extra, expr) = decode(format, ws)?;
    let (x_decl, xv) = x_access(x, shape.vec_x);
    let mut tensors = x_decl;
    tensors += &tensor_binding("w", 2, DType::U8, Access::Read);
    let mut next = 3u32;
    for (name, d) in extra {
        tensors += &tensor_binding(name, next, d, Access::Read);
        next += 1;
    }
    tensors += &tensor_binding("out", next, x, Access::Write);
    let (unit_name, unit_src) = match unit(format) {
        Unit::Ggml(name) => (name, QUANT_VEC_GGML.to_string()),
        Unit::Scale(s) => {
            let signed = matches!(format, QuantFormat::Int8BlockAsym { .. }) && ws.first() == Some(&DType::I8);
            let code = if signed { "codes_i8" } else { s.code };
            let slots = [("CODE", code), ("UNIFORM", s.uniform), ("SCALE", s.scale), ("WEIGHT", s.weight)];
            (s.func, render(QUANT_VEC_SCALE, &slots)?)
        }
    };
    let rows = shape.rows.to_string();
    let lanes = shape.lanes.to_string();
    let slots = [
        ("MR", rows.as_str()),
        ("L", lanes.as_str()),
        ("TENSORS", tensors.as_str()),
        ("XV", xv.as_str()),
        ("DECODE", expr.as_str()),
        ("UNIT", unit_name),
    ];
    let body = render(QUANT_VEC, &slots)?;
    let reduce = if shape.subgroups { QUANT_VEC_SG } else { QUANT_VEC_WG };
    let mut parts = vec![COMMON, body.as_str(), reduce, unit_src.as_str()];
    parts.extend_from_slice(decode_helpers(format));
    Ok(module(&parts))
}

/// The binding of `x` (dtype `d`) with `ld_x(i)` and `xv(i)` (see the template): as 4-element
/// vectors when `vec`, else element by element.
fn x_access(d: DType, vec: bool) -> (String, String) {
    if !vec {
        let xv = "fn xv(i: u32) -> vec4<f32> {\n    \
                  return vec4<f32>(ld_x(i), ld_x(i + 1u), ld_x(i + 2u), ld_x(i + 3u));\n}\n";
        return (tensor_binding("x", 1, d, Access::Read), xv.to_string());
    }
    let (ty, ld, xv) = match d {
        DType::F16 => ("vec2<u32>", X_F16_LD, X_F16_XV),
        DType::BF16 => ("vec2<u32>", X_BF16_LD, X_BF16_XV),
        _ => ("vec4<f32>", X_F32_LD, X_F32_XV),
    };
    (format!("@group(0) @binding(1) var<storage, read_write> x: array<{ty}>;\n"), format!("{ld}{xv}"))
}

const X_F32_LD: &str = "fn ld_x(i: u32) -> f32 {\n    return x[i >> 2u][i & 3u];\n}\n";
const X_F32_XV: &str = "fn xv(i: u32) -> vec4<f32> {\n    return x[i >> 2u];\n}\n";
const X_F16_LD: &str =
    "fn ld_x(i: u32) -> f32 {\n    return f16_bits_to_f32(x[i >> 2u][(i >> 1u) & 1u] >> (16u * (i & 1u)));\n}\n";
// Exact binary16 to f32 without branches (subnormals scaled by 2^-24, inf and NaN kept).
const X_F16_XV: &str = "fn xv(i: u32) -> vec4<f32> {
    let v = x[i >> 2u];
    let h = vec4<u32>(v.x, v.x >> 16u, v.y, v.y >> 16u) & vec4<u32>(0xffffu);
    let sign = (h & vec4<u32>(0x8000u)) << vec4<u32>(16u);
    let e = (h >> vec4<u32>(10u)) & vec4<u32>(0x1fu);
    let m = h & vec4<u32>(0x3ffu);
    let normal = sign | ((e + 112u) << vec4<u32>(23u)) | (m << vec4<u32>(13u));
    let sub = sign | bitcast<vec4<u32>>(vec4<f32>(m) * bitcast<f32>(0x33800000u));
    let special = sign | vec4<u32>(0x7f800000u) | (m << vec4<u32>(13u));
    let zero = vec4<u32>(0u);
    return bitcast<vec4<f32>>(select(select(normal, sub, e == zero), special, e == vec4<u32>(0x1fu)));
}
";
const X_BF16_LD: &str =
    "fn ld_x(i: u32) -> f32 {\n    return bf16_bits_to_f32(x[i >> 2u][(i >> 1u) & 1u] >> (16u * (i & 1u)));\n}\n";
const X_BF16_XV: &str = "fn xv(i: u32) -> vec4<f32> {
    let v = x[i >> 2u];
    return bitcast<vec4<f32>>(vec4<u32>(v.x << 16u, v.x & 0xffff0000u, v.y << 16u, v.y & 0xffff0000u));
}
";
