//! Variants of the indexing family (§2.4): Gather, ScatterAdd, GatherBackward.
//!
//! - [`gather_module`]: one invocation per output element, copying raw element bits (a variant
//!   depends on the data's byte width and the index dtype only).
//! - [`scatter_module`]: one invocation per update element, adding into an accumulator with a
//!   lock-free add: `atomicAdd` for I32/U32 (and I64 as two words with a carry), a
//!   compare-exchange loop on the u32 bits for F32 and each C64 component, a compare-exchange loop
//!   on the containing word for I8/U8 lanes. F16/BF16 updates accumulate into an F32 buffer
//!   (rounded once afterwards, as the reference does), so a lane is never rounded per update.
//! - [`owner_module`]: one invocation per output element looping over the indices, for F64
//!   (WGSL has no 64-bit atomics).
//! - [`convert_module`]: an elementwise copy through registers (word copies, F16/BF16 <-> F32).
//!
//! Index tensors are read as u32 words whatever their dtype (I64: two words), resolved by
//! `resolve_parts` in `indexing_common.wgsl` (§1.6), so no index goes through f32 and I64
//! indices need no 64-bit shader feature.

use crate::movement::{raw_binding, Width};
use crate::{render, tensor_binding, Access, COMMON};
use backend_api::DType;

crate::params! {
    /// `IndexingParams` of `indexing_common.wgsl` (Gather, scatter and owner kernels): the data
    /// viewed as (outer, a, inner), the gathered side as (outer, nidx, inner).
    pub struct IndexingParams {
        /// Invocations (elements of the walked tensor).
        pub n: u32,
        /// Size of the indexed axis.
        pub a: u32,
        /// Product of the dims after the axis.
        pub inner: u32,
        /// Number of indices.
        pub nidx: u32,
    }
}

crate::params! {
    /// `IndexingConvertParams` of `indexing_convert.wgsl`.
    pub struct IndexingConvertParams {
        /// Elements to convert.
        pub n: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] =
    &[<IndexingParams as crate::params::Params>::LAYOUT, <IndexingConvertParams as crate::params::Params>::LAYOUT];

/// Params and the index rule shared by the indexing kernels.
pub const INDEXING_COMMON: &str = include_str!("wgsl/indexing_common.wgsl");
/// Gather: one invocation per output element.
pub const INDEXING_GATHER: &str = include_str!("wgsl/indexing_gather.wgsl");
/// Atomic scatter-add: one invocation per update element.
pub const INDEXING_SCATTER: &str = include_str!("wgsl/indexing_scatter.wgsl");
/// Scatter-add without atomics: one invocation per output element.
pub const INDEXING_OWNER: &str = include_str!("wgsl/indexing_owner.wgsl");
/// Elementwise copy through registers.
pub const INDEXING_CONVERT: &str = include_str!("wgsl/indexing_convert.wgsl");

/// Whether `d` is an index dtype (§1.6): I32, I64 or U32.
pub fn is_index(d: DType) -> bool {
    matches!(d, DType::I32 | DType::I64 | DType::U32)
}

/// The declaration of the index tensor `idx` at `binding` and `fn index_at(j, a) -> u32`, the
/// row that index `j` resolves to on an axis of size `a`, or `OUT_OF_RANGE`.
pub fn index_binding(binding: u32, d: DType) -> Result<String, String> {
    let body = match d {
        DType::U32 => "return resolve_parts(false, idx[j], false, a);",
        DType::I32 => {
            "let v = idx[j];\n    let negative = v >= 0x80000000u;\n    \
             return resolve_parts(negative, select(v, 0u - v, negative), false, a);"
        }
        // The magnitude of a negative (hi, lo) is its two's-complement negation ~v + 1: the low
        // word 0 - lo carries into the high word only when lo is 0.
        DType::I64 => {
            "let lo = idx[2u * j];\n    let hi = idx[2u * j + 1u];\n    \
             let negative = hi >= 0x80000000u;\n    \
             let mlo = select(lo, 0u - lo, negative);\n    \
             let mhi = select(hi, ~hi + select(0u, 1u, lo == 0u), negative);\n    \
             return resolve_parts(negative, mlo, mhi != 0u, a);"
        }
        other => return Err(format!("{other} is not an index dtype (I32, I64, U32)")),
    };
    Ok(format!(
        "@group(0) @binding({binding}) var<storage, read_write> idx: array<u32>;\n\
         fn index_at(j: u32, a: u32) -> u32 {{\n    {body}\n}}\n"
    ))
}

/// Gather of `data` elements with `index` indices. Bindings: 1 data `x`, 2 indices, 3 `out`
/// (packed widths are OR-ed into zeroed memory).
pub fn gather_module(data: DType, index: DType) -> Result<String, String> {
    let w = Width::of(data);
    let tensors = raw_binding("x", 1, w, Access::Read) + &raw_binding("out", 3, w, Access::Write);
    let zero = match w {
        Width::B8 => "vec2<u32>(0u, 0u)",
        Width::B1 | Width::B2 | Width::B4 => "0u",
    };
    let body = render(INDEXING_GATHER, &[("TENSORS", &tensors), ("INDEX", &index_binding(2, index)?), ("ZERO", zero)])?;
    Ok(crate::module(&[COMMON, INDEXING_COMMON, &body]))
}

/// The dtype of the buffer [`scatter_module`] accumulates updates of `d` into: F32 for
/// F16/BF16, `d` itself for the other dtypes it supports; `None` for F64 and Bool (no atomic
/// add: use [`owner_module`] for F64; Bool is not scatter-added).
pub fn scatter_acc_dtype(d: DType) -> Option<DType> {
    match d {
        DType::F16 | DType::BF16 => Some(DType::F32),
        DType::F32 | DType::I32 | DType::U32 | DType::I8 | DType::U8 | DType::I64 | DType::C64 => Some(d),
        DType::F64 | DType::Bool => None,
    }
}

/// A compare-exchange loop replacing word `w` of `acc` by `NEXT` (an expression of `old`).
fn cas_loop(w: &str, next: &str) -> String {
    format!(
        "    var old = atomicLoad(&acc[{w}]);\n    loop {{\n        let next = {next};\n        \
         let r = atomicCompareExchangeWeak(&acc[{w}], old, next);\n        \
         if (r.exchanged) {{ break; }}\n        old = r.old_value;\n    }}\n"
    )
}

/// `fn add_at(i, v)`: the lock-free add of update register `v` into accumulator element `i`.
fn add_fn(d: DType) -> Result<String, String> {
    let f32_word =
        format!("fn add_f32_word(w: u32, v: f32) {{\n{}}}\n", cas_loop("w", "bitcast<u32>(bitcast<f32>(old) + v)"));
    let lane = |mask: &str, v: &str| {
        let next = format!("(old & ~({mask} << sh)) | ((((old >> sh) + {v}) & {mask}) << sh)");
        cas_loop("i >> 2u", &next)
    };
    Ok(match d {
        DType::F32 | DType::F16 | DType::BF16 => f32_word + "fn add_at(i: u32, v: f32) { add_f32_word(i, v); }\n",
        DType::C64 => {
            f32_word + "fn add_at(i: u32, v: vec2<f32>) {\n    add_f32_word(2u * i, v.x);\n    add_f32_word(2u * i + 1u, v.y);\n}\n"
        }
        DType::I32 => "fn add_at(i: u32, v: i32) { atomicAdd(&acc[i], bitcast<u32>(v)); }\n".into(),
        DType::U32 => "fn add_at(i: u32, v: u32) { atomicAdd(&acc[i], v); }\n".into(),
        // Two's-complement addition is the same on the low byte of any width: add in u32, mask.
        DType::I8 => format!("fn add_at(i: u32, v: i32) {{\n    let sh = 8u * (i & 3u);\n{}}}\n", lane("0xffu", "bitcast<u32>(v)")),
        DType::U8 => format!("fn add_at(i: u32, v: u32) {{\n    let sh = 8u * (i & 3u);\n{}}}\n", lane("0xffu", "v")),
        // Each low-word add carries into the high word exactly when it wraps; the carries of all
        // adds sum to the carry of the total, so the two words end up right in any order.
        DType::I64 => "fn add_at(i: u32, v: vec2<u32>) {\n    let old = atomicAdd(&acc[2u * i], v.x);\n    \
                       let carry = select(0u, 1u, old + v.x < old);\n    atomicAdd(&acc[2u * i + 1u], v.y + carry);\n}\n"
            .into(),
        DType::F64 | DType::Bool => return Err(format!("no atomic scatter-add for {d}")),
    })
}

/// Atomic scatter-add of updates of `d` with `index` indices. Bindings: 1 indices, 2 updates
/// `upd`, 3 the accumulator `acc` (u32 words; of [`scatter_acc_dtype`]`(d)`).
pub fn scatter_module(d: DType, index: DType) -> Result<String, String> {
    let upd = match d {
        // Read as two words: the add needs no 64-bit shader feature.
        DType::I64 => raw_binding("upd", 2, Width::B8, Access::Read),
        _ => tensor_binding("upd", 2, d, Access::Read),
    };
    let tensors = upd + "@group(0) @binding(3) var<storage, read_write> acc: array<atomic<u32>>;\n";
    let body =
        render(INDEXING_SCATTER, &[("TENSORS", &tensors), ("INDEX", &index_binding(1, index)?), ("ADD", &add_fn(d)?)])?;
    Ok(crate::module(&[COMMON, INDEXING_COMMON, &body]))
}

/// Scatter-add of `d` (non-packed, e.g. F64) where each invocation owns one output element.
/// With `with_data`, bindings are 1 data `x`, 2 indices, 3 updates, 4 `out` and the sum starts
/// from data; without (GatherBackward), 1 indices, 2 updates, 3 `out` and it starts from zero.
pub fn owner_module(d: DType, index: DType, with_data: bool) -> Result<String, String> {
    if crate::is_packed(d) || d == DType::Bool {
        return Err(format!("owner-computes scatter is not defined for packed dtype {d}"));
    }
    let b = u32::from(with_data);
    let mut tensors = String::new();
    if with_data {
        tensors += &tensor_binding("x", 1, d, Access::Read);
    }
    tensors += &tensor_binding("upd", 2 + b, d, Access::Read);
    tensors += &tensor_binding("out", 3 + b, d, Access::Write);
    let init = if with_data { "ld_x(e)".to_string() } else { format!("{}()", crate::reg_type(d)) };
    let body =
        render(INDEXING_OWNER, &[("TENSORS", &tensors), ("INDEX", &index_binding(1 + b, index)?), ("INIT", &init)])?;
    Ok(crate::module(&[COMMON, INDEXING_COMMON, &body]))
}

/// Elementwise `out[e] = x[e]` from `src` to `dst` through registers (same register type).
/// Bindings: 1 `x`, 2 `out` (packed `dst` needs zeroed memory).
pub fn convert_module(src: DType, dst: DType) -> Result<String, String> {
    if crate::reg_type(src) != crate::reg_type(dst) {
        return Err(format!("no register conversion from {src} to {dst}"));
    }
    let tensors = tensor_binding("x", 1, src, Access::Read) + &tensor_binding("out", 2, dst, Access::Write);
    let body = render(INDEXING_CONVERT, &[("TENSORS", &tensors)])?;
    Ok(crate::module(&[COMMON, &body]))
}
