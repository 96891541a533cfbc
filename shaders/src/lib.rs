//! WGSL kernel sources, one `.wgsl` file per kernel family, and the small pieces they are rendered
//! with.
//!
//! A family file is complete WGSL except for `{{NAME}}` slots. Each slot receives one generated
//! piece: the tensor bindings with their typed accessors ([`tensor_binding`]), or one expression of
//! the op. There is no template logic (no conditionals or loops in templates): a variant differs
//! from another only in what fills its slots, and `cargo test -p shaders` renders every variant
//! and validates it with naga.
//!
//! Storage layout: every tensor is bound as its own range of a storage buffer. 4- and 8-byte
//! dtypes are arrays of their WGSL type; 1- and 2-byte dtypes (F16, BF16, I8, U8, Bool) are packed
//! into `u32` words and written with `atomicOr` into zeroed memory, so that one invocation per
//! element is race-free whatever the dtype. F16/BF16 values are computed in f32 (§1.1 allows it).

use backend_api::DType;

/// Helpers included in every kernel (ids, float bit tests, f16/bf16 conversions).
pub const COMMON: &str = include_str!("wgsl/common.wgsl");
/// Scalar maths with the spec's special values (pow, fmod, erf, …).
pub const MATH: &str = concat!(include_str!("wgsl/math.wgsl"), "\n", include_str!("wgsl/math_trig.wgsl"));
/// 32-bit integer (I32/U32/I8/U8) and C64 helpers: division rules, pow, complex mul/div.
pub const MATH_INT: &str = include_str!("wgsl/math_int.wgsl");
/// I64 helpers (needs SHADER_INT64).
pub const MATH_I64: &str = include_str!("wgsl/math_i64.wgsl");
/// f64 maths: exp, log, trig, erf, pow, fmod, … written out (needs SHADER_F64 and SHADER_INT64).
pub const MATH64: &str = include_str!("wgsl/math64.wgsl");
/// Cast conversions between 32-bit registers (single rounding, saturation).
pub const CAST: &str = include_str!("wgsl/cast.wgsl");
/// Cast conversions with I64 (needs SHADER_INT64).
pub const CAST_I64: &str = include_str!("wgsl/cast_i64.wgsl");
/// Cast conversions with F64 (needs SHADER_F64 and SHADER_INT64; uses `MATH64`, `CAST_I64`).
pub const CAST_F64: &str = include_str!("wgsl/cast_f64.wgsl");
/// Broadcasting elementwise map over up to three inputs (Unary, Binary, Compare, Where, Fma, Cast).
pub const ELEMENTWISE: &str = include_str!("wgsl/elementwise.wgsl");
/// The four-wide contiguous map template (`wgsl/elementwise_vec4.wgsl`).
pub const ELEMENTWISE_VEC4: &str = include_str!("wgsl/elementwise_vec4.wgsl");
/// Fills a byte range with zeros (before packed atomic stores).
pub const ZERO: &str = include_str!("wgsl/zero.wgsl");

/// Whether a dtype is stored packed in `u32` words.
pub fn is_packed(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16 | DType::I8 | DType::U8 | DType::Bool)
}

/// The WGSL type values of `d` are computed in ("register type").
pub fn reg_type(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => "f32",
        DType::F64 => "f64",
        DType::I64 => "i64",
        DType::I32 | DType::I8 => "i32",
        DType::U32 | DType::U8 | DType::Bool => "u32",
        DType::C64 => "vec2<f32>",
    }
}

/// The WGSL element type of a storage array of `d` (readable form).
fn store_type(d: DType) -> &'static str {
    match d {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I64 => "i64",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::C64 => "vec2<f32>",
        DType::F16 | DType::BF16 | DType::I8 | DType::U8 | DType::Bool => "u32",
    }
}

/// How a kernel uses a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read-only storage; gives `ld_<name>(i)`.
    Read,
    /// Written storage; gives `st_<name>(i, v)`.
    Write,
}

/// Expression loading element `i` of packed storage `n` as the register type of `d`.
fn packed_load(n: &str, d: DType) -> String {
    match d {
        DType::F16 => format!("return f16_bits_to_f32({n}[i >> 1u] >> (16u * (i & 1u)));"),
        DType::BF16 => format!("return bf16_bits_to_f32({n}[i >> 1u] >> (16u * (i & 1u)));"),
        DType::I8 => format!("return bitcast<i32>({n}[i >> 2u] << (24u - 8u * (i & 3u))) >> 24u;"),
        DType::U8 => format!("return ({n}[i >> 2u] >> (8u * (i & 3u))) & 0xffu;"),
        DType::Bool => format!("return select(0u, 1u, (({n}[i >> 2u] >> (8u * (i & 3u))) & 0xffu) != 0u);"),
        _ => format!("return {n}[i];"),
    }
}

/// Statement storing register value `v` as element `i` of packed storage `n` (zeroed before).
fn packed_store(n: &str, d: DType) -> String {
    match d {
        DType::F16 => format!("atomicOr(&{n}[i >> 1u], f32_to_f16_bits(v) << (16u * (i & 1u)));"),
        DType::BF16 => format!("atomicOr(&{n}[i >> 1u], f32_to_bf16_bits(v) << (16u * (i & 1u)));"),
        DType::I8 => format!("atomicOr(&{n}[i >> 2u], (bitcast<u32>(v) & 0xffu) << (8u * (i & 3u)));"),
        DType::U8 => format!("atomicOr(&{n}[i >> 2u], (v & 0xffu) << (8u * (i & 3u)));"),
        DType::Bool => format!("atomicOr(&{n}[i >> 2u], select(0u, 1u, v != 0u) << (8u * (i & 3u)));"),
        _ => format!("{n}[i] = v;"),
    }
}

/// The declaration of tensor binding `name` at `binding` of dtype `d`, with its accessor:
/// (Inputs are declared `read_write` too: the inputs and outputs of one dispatch often share an
/// arena buffer, and WebGPU forbids one buffer being both read-only and writable storage in one
/// dispatch. Only `ld_` is generated for inputs, so kernels cannot write them.)
///
/// `fn ld_<name>(i: u32) -> R` for [`Access::Read`], `fn st_<name>(i: u32, v: R)` for
/// [`Access::Write`], where `R` is [`reg_type`].
pub fn tensor_binding(name: &str, binding: u32, d: DType, access: Access) -> String {
    let reg = reg_type(d);
    match access {
        Access::Read => format!(
            "@group(0) @binding({binding}) var<storage, read_write> {name}: array<{st}>;\n\
             fn ld_{name}(i: u32) -> {reg} {{ {body} }}\n",
            st = store_type(d),
            body = packed_load(name, d)
        ),
        Access::Write => {
            let st = if is_packed(d) { "atomic<u32>".to_string() } else { store_type(d).to_string() };
            format!(
                "@group(0) @binding({binding}) var<storage, read_write> {name}: array<{st}>;\n\
                 fn st_{name}(i: u32, v: {reg}) {{ {body} }}\n",
                body = packed_store(name, d)
            )
        }
    }
}

/// Replaces every `{{KEY}}` of `template` with its value; errs when a slot is left unfilled or a
/// key has no slot (a typo would otherwise pass silently).
pub fn render(template: &str, slots: &[(&str, &str)]) -> Result<String, String> {
    let mut out = template.to_string();
    for (k, v) in slots {
        let key = format!("{{{{{k}}}}}");
        if !out.contains(&key) {
            return Err(format!("template has no slot {key}"));
        }
        out = out.replace(&key, v);
    }
    if let Some(pos) = out.find("{{") {
        let end = out[pos..].find("}}").map_or(out.len(), |e| pos + e + 2);
        return Err(format!("unfilled slot {}", &out[pos..end]));
    }
    Ok(out)
}

/// First line of a kernel whose every memory access (storage, workgroup, uniform and function
/// arrays) is in bounds and whose every loop terminates by construction, for every params value
/// its lowering can produce: the pipeline cache builds it without runtime checks
/// (docs/WGPU-KERNELS.md, "Trusted kernels"). Only renderers whose kernels were reviewed for this
/// prepend it ([`trusted`]).
pub const TRUSTED_HEADER: &str = "// trusted: in-bounds accesses and bounded loops by construction\n";

/// `src` marked as a trusted kernel (see [`TRUSTED_HEADER`]).
pub fn trusted(src: &str) -> String {
    format!("{TRUSTED_HEADER}{src}")
}

/// Whether `src` is marked as a trusted kernel (see [`TRUSTED_HEADER`]).
pub fn is_trusted(src: &str) -> bool {
    src.starts_with(TRUSTED_HEADER)
}

/// First line of a kernel whose every loop terminates by construction (a counter that cannot
/// wrap stepping towards a bound, for every params value its lowering can produce) but whose
/// memory accesses are not all proven in bounds: the pipeline cache builds it with wgpu's bounds
/// checks and without its loop bounding, the counter wgpu adds to every loop, which kept the NVIDIA
/// compiler from pipelining the quantised GEMV's loads (docs/WGPU-KERNELS.md, "Trusted kernels").
pub const LOOPS_BOUNDED_HEADER: &str = "// loops bounded: every loop terminates by construction\n";

/// `src` marked as a kernel with bounded loops (see [`LOOPS_BOUNDED_HEADER`]).
pub fn loops_bounded(src: &str) -> String {
    format!("{LOOPS_BOUNDED_HEADER}{src}")
}

/// The runtime checks a kernel's source asks for, from its first line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// wgpu's bounds checks and loop bounding (the default).
    Checked,
    /// Bounds checks only ([`LOOPS_BOUNDED_HEADER`]).
    LoopsBounded,
    /// Neither ([`TRUSTED_HEADER`]).
    Trusted,
}

/// The [`Trust`] of `src`.
pub fn trust(src: &str) -> Trust {
    if src.starts_with(TRUSTED_HEADER) {
        Trust::Trusted
    } else if src.starts_with(LOOPS_BOUNDED_HEADER) {
        Trust::LoopsBounded
    } else {
        Trust::Checked
    }
}

/// Joins the common helpers, the maths library and a rendered family into one module.
pub fn module(parts: &[&str]) -> String {
    parts.join("\n")
}

pub mod attention;
pub mod backward;
pub mod catalog;
pub mod control;
pub mod conv;
pub mod elementwise;
pub mod indexing;
pub mod linalg;
pub mod movement;
pub mod norm;
pub mod params;
pub mod random;
pub mod reduce;
pub mod sequence;

pub use catalog::{kernel_file, kernel_name};

/// The zero-fill kernel module.
pub fn zero_module() -> String {
    module(&[COMMON, ZERO])
}
