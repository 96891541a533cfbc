//! The decode-speed quantised GEMV (`linalg_quant_vec.wgsl`, QuantMatMul §2.6.5 with at most
//! [`QUANT_VEC_MAX_ROWS`] rows of x): all rows of x in one workgroup, so each weight byte is read
//! once, as whole words; a lane group of one subgroup takes a few output columns, so that each x
//! vector a lane loads serves all of them. Each row of W is cut into units ([`unit_elems`]
//! elements: a GGML block, or 8 elements of a scale-tensor format) and units into items that
//! consecutive lanes take. A format is its item function: one of `linalg_quant_vec_ggml.wgsl`
//! for the GGML block formats, or the byte / nibble item of `linalg_quant_vec_scale.wgsl` with
//! the format's code decoder, scale loads and weight expression for the scale-tensor formats.
//! Elements past the last whole unit go through the per-element decode expression of
//! [`super::quant::decode`].
//!
//! Bindings (those of the generic kernel): 1 `x`, 2 `w` (raw words), then the format's other
//! weight inputs in their order, then `out`.

use super::quant::{decode, decode_helpers, weight_and_out_bindings};
use crate::{module, render, tensor_binding, Access, COMMON};
use backend_api::op::QuantFormat;
use backend_api::DType;

/// The kernel template.
pub const QUANT_VEC: &str = include_str!("../wgsl/linalg_quant_vec.wgsl");
/// Units of the GGML block formats.
pub const QUANT_VEC_GGML: &str = include_str!("../wgsl/linalg_quant_vec_ggml.wgsl");
/// Units of the scale-tensor formats.
pub const QUANT_VEC_SCALE: &str = include_str!("../wgsl/linalg_quant_vec_scale.wgsl");
/// Word readers and exact integer-to-float helpers shared by the word-reading quant kernels.
pub const QUANT_WORDS: &str = include_str!("../wgsl/linalg_quant_words.wgsl");
/// Column sums by subgroup operations.
pub const QUANT_VEC_SG: &str = include_str!("../wgsl/linalg_quant_vec_sg.wgsl");
/// Column sums by a tree in workgroup memory.
pub const QUANT_VEC_WG: &str = include_str!("../wgsl/linalg_quant_vec_wg.wgsl");

/// The most rows of x the kernel takes (all in one workgroup, in registers).
pub const QUANT_VEC_MAX_ROWS: u32 = 8;
/// The most output columns one lane group takes.
pub const QUANT_VEC_MAX_COLUMNS: u32 = 8;
/// Lanes per lane group when the column sums go through workgroup memory.
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
        /// Items per row: whole units (`K / unit_elems`) times [`unit_items`].
        pub items: u32,
        /// Elements of K in whole units: `(K / unit_elems) · unit_elems`.
        pub kfull: u32,
        /// Workgroups that do work: `⌈N / QuantVecShape::workgroup_columns⌉`.
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
    /// Lanes per lane group (a power of two dividing 256).
    pub lanes: u32,
    /// Output columns per lane group (1 ..= [`QUANT_VEC_MAX_COLUMNS`]): each x vector a lane
    /// loads serves this many columns.
    pub columns: u32,
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
            && (1..=QUANT_VEC_MAX_COLUMNS).contains(&self.columns)
    }

    /// Output columns per workgroup.
    pub fn workgroup_columns(&self) -> u32 {
        (QUANT_VEC_WORKGROUP / self.lanes.max(1)) * self.columns
    }
}

/// Elements of K in one unit of `format`: a block of the GGML formats (32 or 256), 8 for the
/// scale-tensor formats.
pub fn unit_elems(format: QuantFormat) -> u32 {
    items(format).ue
}

/// Items per unit of `format` (see the template).
pub fn unit_items(format: QuantFormat) -> u32 {
    items(format).g
}

/// How a format's units are cut into items: the item and element-offset functions, elements
/// per unit, items per unit and groups of 4 elements per item.
pub(super) struct Items {
    /// The item function (`item_<f>(n, rb, u, i)`).
    pub(super) item: &'static str,
    /// The element-offset function (`k_<f>(u, i, j)`).
    pub(super) kof: &'static str,
    /// Elements per unit.
    pub(super) ue: u32,
    /// Items per unit.
    pub(super) g: u32,
    /// Groups of 4 elements per item.
    pub(super) xg: u32,
}

pub(super) fn items(format: QuantFormat) -> Items {
    let cut = |item, kof, ue, g, xg| Items { item, kof, ue, g, xg };
    match format {
        QuantFormat::Int8Block { .. }
        | QuantFormat::Int8BlockAsym { .. }
        | QuantFormat::Fp8E4m3
        | QuantFormat::Fp8E5m2 => cut("item_bytes", "k_scale8", 8, 1, 2),
        QuantFormat::Int4Block { .. } | QuantFormat::Nvfp4 => cut("item_nibs", "k_scale8", 8, 1, 2),
        QuantFormat::Q4_0 => cut("item_q4_0", "k_q32", 32, 4, 2),
        QuantFormat::Q4_1 => cut("item_q4_1", "k_q32", 32, 4, 2),
        QuantFormat::Q5_0 => cut("item_q5_0", "k_q32", 32, 4, 2),
        QuantFormat::Q5_1 => cut("item_q5_1", "k_q32", 32, 4, 2),
        QuantFormat::Q8_0 => cut("item_q8_0", "k_q8_0", 32, 4, 2),
        QuantFormat::Q2_K => cut("item_q2_k", "k_q6_k", 256, 16, 4),
        QuantFormat::Q3_K => cut("item_q3_k", "k_q6_k", 256, 16, 4),
        QuantFormat::Q4_K => cut("item_q4_k", "k_q4_k", 256, 16, 4),
        QuantFormat::Q5_K => cut("item_q5_k", "k_q4_k", 256, 16, 4),
        QuantFormat::Q6_K => cut("item_q6_k", "k_q6_k", 256, 16, 4),
        QuantFormat::Q8_K => cut("item_q8_k", "k_q8_k", 256, 32, 2),
    }
}

/// The `(CODE, SCALE, ZERO, WEIGHT, SAME8)` slots of the scale file for a scale-tensor format
/// (the weight input `w` of dtype `w`), `None` for the GGML formats.
fn scale_slots(format: QuantFormat, w: Option<DType>) -> Option<[String; 5]> {
    let none = "vec4<f32>(0.0)".to_string();
    let times = "q * s".to_string();
    let row = "vec4<f32>(ld_scale(select(0u, n, p.srow == 1u)))".to_string();
    let same8 = |b: u32| b.is_multiple_of(8).to_string();
    Some(match format {
        QuantFormat::Int8Block { block_size: b } => ["codes_i8".into(), blocks("scale", b), none, times, same8(b)],
        QuantFormat::Int8BlockAsym { block_size: b } => {
            let code = if w == Some(DType::I8) { "codes_i8" } else { "codes_u8" };
            [code.into(), blocks("scale", b), blocks("zero", b), "(q - z) * s".into(), same8(b)]
        }
        QuantFormat::Int4Block { block_size: b } => ["codes_i4".into(), blocks("scale", b), none, times, same8(b)],
        QuantFormat::Fp8E4m3 => ["codes_e4m3".into(), row, none, times, "true".into()],
        QuantFormat::Fp8E5m2 => ["codes_e5m2".into(), row, none, times, "true".into()],
        // (e2m1 · block scale) · global scale, the spec's order; an item (8 elements at a
        // multiple of 8) lies in one 16-element block.
        QuantFormat::Nvfp4 => [
            "codes_e2m1".into(),
            "vec4<f32>(e4m3(ld_bs(n * p.srow + k / 16u)))".into(),
            none,
            "(q * s) * ld_gs(0u)".into(),
            "true".into(),
        ],
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
        | QuantFormat::Q8_K => return None,
    })
}

/// The item functions of `format` (weight input dtypes `ws`): the GGML file, or the scale file
/// rendered with the format's code decoder, scales and weight expression.
pub(super) fn unit_source(format: QuantFormat, ws: &[DType]) -> Result<String, String> {
    match scale_slots(format, ws.first().copied()) {
        None => Ok(QUANT_VEC_GGML.to_string()),
        Some([code, scale, zero, weight, same8]) => {
            let slots = [("CODE", &code), ("SCALE", &scale), ("ZERO", &zero), ("WEIGHT", &weight), ("SAME8", &same8)];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            render(QUANT_VEC_SCALE, &slots)
        }
    }
}

/// The values of input `name` (per scale block of `b` elements) for elements k .. k + 3 of row
/// n (k a multiple of 4): one load when a block holds whole groups of 4, else one per element.
/// The block size is a constant, so the divisions become multiplications.
fn blocks(name: &str, b: u32) -> String {
    if b.is_multiple_of(4) {
        return format!("vec4<f32>(ld_{name}(n * p.srow + k / {b}u))");
    }
    let one = |d: u32| format!("ld_{name}(n * p.srow + (k + {d}u) / {b}u)");
    format!("vec4<f32>({}, {}, {}, {})", one(0), one(1), one(2), one(3))
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

/// The unrolled body of the kernel's item loop for `rows` rows of x, `cols` columns and `xg`
/// groups of 4 elements per item: the x vectors of the item loaded once (`x<j>_<r>`), then per
/// column the item decoded by `item` and its dot products added to `acc[r * C + c]`.
fn item_body(rows: u32, cols: u32, xg: u32, item: &str, kof: &str) -> String {
    let mut b = String::new();
    for j in 0..xg {
        b += &format!("        let k{j} = {kof}(u, i, {j}u);\n");
        for r in 0..rows {
            b += &format!("        let x{j}_{r} = xv({r}u * p.k + k{j});\n");
        }
    }
    for c in 0..cols {
        b += &format!("        let n{c} = min(col0 + {c}u, p.n - 1u);\n");
        b += &format!("        let w{c} = {item}(n{c}, n{c} * p.wrow, u, i);\n");
        for r in 0..rows {
            let dots: Vec<String> = (0..xg).map(|j| format!("dot(w{c}[{j}], x{j}_{r})")).collect();
            let a = r * cols + c;
            b += &format!("        acc[{a}] = acc[{a}] + {};\n", dots.join(" + "));
        }
    }
    b
}

/// The unrolled body of the kernel's tail loop (element `k` past the whole units, decoded by
/// `wq` per column).
fn tail_body(rows: u32, cols: u32) -> String {
    let mut b = String::new();
    for r in 0..rows {
        b += &format!("        let x_{r} = ld_x({r}u * p.k + k);\n");
    }
    for c in 0..cols {
        b += &format!("        let v{c} = wq(min(col0 + {c}u, p.n - 1u), k, 0u);\n");
        for r in 0..rows {
            let a = r * cols + c;
            b += &format!("        acc[{a}] = acc[{a}] + x_{r} * v{c};\n");
        }
    }
    b
}

/// The unrolled column sums and stores: lane 0 of the group stores row r of column c.
fn store_body(rows: u32, cols: u32) -> String {
    let mut b = String::new();
    for c in 0..cols {
        for r in 0..rows {
            let a = r * cols + c;
            b += &format!("    let s{a} = col_sum(ids, cl, acc[{a}]);\n");
            b += &format!(
                "    if (lane == 0u && col0 + {c}u < p.n && g < p.groups) {{ st_out({r}u * p.n + col0 + {c}u, s{a}); }}\n"
            );
        }
    }
    b
}

fn render_for(format: QuantFormat, x: DType, ws: &[DType], shape: QuantVecShape) -> Result<String, String> {
    let (extra, expr) = decode(format, ws)?;
    let (x_decl, xv) = x_access(x, shape.vec_x);
    let mut tensors = x_decl;
    weight_and_out_bindings(&mut tensors, &extra, x);
    let it = items(format);
    let unit_src = unit_source(format, ws)?;
    let num = |v: u32| v.to_string();
    let slots = [
        ("MR", num(shape.rows)),
        ("L", num(shape.lanes)),
        ("C", num(shape.columns)),
        ("UE", num(it.ue)),
        ("G", num(it.g)),
        ("XG", num(it.xg)),
        ("ACC", num(shape.rows * shape.columns)),
        ("TENSORS", tensors),
        ("XV", xv),
        ("DECODE", expr),
        ("ITEMBODY", item_body(shape.rows, shape.columns, it.xg, it.item, it.kof)),
        ("TAILBODY", tail_body(shape.rows, shape.columns)),
        ("STOREBODY", store_body(shape.rows, shape.columns)),
    ];
    let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = render(QUANT_VEC, &slots)?;
    let reduce = if shape.subgroups { QUANT_VEC_SG } else { QUANT_VEC_WG };
    let mut parts = vec![COMMON, body.as_str(), QUANT_WORDS, reduce, unit_src.as_str()];
    parts.extend_from_slice(decode_helpers(format));
    Ok(crate::loops_bounded(&module(&parts)))
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
