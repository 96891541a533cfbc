//! TopK (§2.5.4) along one axis: one workgroup per row bitonic-sorts order-preserving (key, index)
//! pairs in workgroup memory (`reduce_topk.wgsl`, rows up to [`max_len`]); longer rows are
//! bitonic-sorted over temps by the passes of [`TopKStage`] (`reduce_topk_big_*.wgsl`).

use super::{index_conv, math64};
use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH};
use backend_api::DType;

/// TopK kernel (rows up to [`max_len`]).
pub const REDUCE_TOPK: &str = include_str!("../wgsl/reduce_topk.wgsl");
/// Shared part of the long-row TopK passes.
pub const REDUCE_TOPK_BIG_COMMON: &str = include_str!("../wgsl/reduce_topk_big_common.wgsl");
/// Long-row TopK: keys and indices into temps.
pub const REDUCE_TOPK_BIG_INIT: &str = include_str!("../wgsl/reduce_topk_big_init.wgsl");
/// Long-row TopK: bitonic stages in workgroup memory.
pub const REDUCE_TOPK_BIG_LOCAL: &str = include_str!("../wgsl/reduce_topk_big_local.wgsl");
/// Long-row TopK: one global bitonic step.
pub const REDUCE_TOPK_BIG_GLOBAL: &str = include_str!("../wgsl/reduce_topk_big_global.wgsl");
/// Long-row TopK: the first k of each sorted row into the outputs.
pub const REDUCE_TOPK_BIG_OUT: &str = include_str!("../wgsl/reduce_topk_big_out.wgsl");

crate::params! {
    /// `TopkParams` of `reduce_topk.wgsl`.
    pub struct TopkParams {
        /// Rows (one workgroup each).
        pub rows: u32,
        /// Elements per row.
        pub len: u32,
        /// Stride between a row's elements (input and outputs).
        pub inner: u32,
        /// Elements kept per row.
        pub k: u32,
        /// Sort slots per row: `len` rounded up to a power of two.
        pub pow2: u32,
        /// 1: largest first.
        pub largest: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
    }
}

crate::params! {
    /// `TopkBigParams` of `reduce_topk_big_common.wgsl` (every long-row pass).
    pub struct TopkBigParams {
        /// Rows.
        pub rows: u32,
        /// Elements per row.
        pub len: u32,
        /// Stride between a row's elements (input and outputs).
        pub inner: u32,
        /// Elements kept per row.
        pub k: u32,
        /// Sort slots per row: `len` rounded up to a power of two.
        pub pow2: u32,
        /// 1: largest first.
        pub largest: u32,
        /// First bitonic stage width a workgroup-memory pass runs.
        pub kk_lo: u32,
        /// Last bitonic stage width a workgroup-memory pass runs; the stage of a global step.
        pub kk_hi: u32,
        /// Compare distance of a global step.
        pub j: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
    }
}

/// (key type, KMAX, key body) of the §1.7 total order for `d`; `None` for Bool and C64.
fn key_exprs(d: DType) -> Option<(&'static str, &'static str, &'static str)> {
    const F32_KEY: &str = "if (f32_is_nan(v)) { return 0xffffffffu; }\n    \
        let b = select(bitcast<u32>(v), 0u, (bitcast<u32>(v) & 0x7fffffffu) == 0u);\n    \
        return select(b | 0x80000000u, ~b, (b >> 31u) != 0u);";
    const F64_KEY: &str = "if (f64_is_nan(v)) { return 0xfffffffffffffffflu; }\n    \
        let b = select(bitcast<u64>(v), 0lu, (bitcast<u64>(v) & 0x7ffffffffffffffflu) == 0lu);\n    \
        return select(b | 0x8000000000000000lu, ~b, (b >> 63u) != 0lu);";
    Some(match d {
        DType::F32 | DType::F16 | DType::BF16 => ("u32", "0xffffffffu", F32_KEY),
        DType::F64 => ("u64", "0xfffffffffffffffflu", F64_KEY),
        DType::I32 | DType::I8 => ("u32", "0xffffffffu", "return bitcast<u32>(v) ^ 0x80000000u;"),
        DType::U32 | DType::U8 => ("u32", "0xffffffffu", "return v;"),
        DType::I64 => ("u64", "0xfffffffffffffffflu", "return bitcast<u64>(v) ^ 0x8000000000000000lu;"),
        DType::Bool | DType::C64 => return None,
    })
}

/// The longest row the workgroup-memory TopK sorts for `d` (16 KiB of keys and indices).
pub fn max_len(d: DType) -> usize {
    match d {
        DType::F64 | DType::I64 => 1024,
        _ => 2048,
    }
}

/// Bytes of one sort key of `d` in the long-row temps (u64 keys for 64-bit dtypes).
pub fn key_bytes(d: DType) -> usize {
    match d {
        DType::F64 | DType::I64 => 8,
        _ => 4,
    }
}

/// TopK of numeric `d` with `index` (I32/I64) outputs: binding 1 `x`, 2 `val`, 3 `idx`.
pub fn module(d: DType, index: DType) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    let (k, kmax, body) = key_exprs(d)?;
    let tensors = tensor_binding("x", 1, d, Access::Read)
        + &tensor_binding("val", 2, d, Access::Write)
        + &tensor_binding("idx", 3, index, Access::Write);
    let n = max_len(d).to_string();
    let src = render(
        REDUCE_TOPK,
        &[
            ("TENSORS", &tensors),
            ("R", reg_type(d)),
            ("K", k),
            ("SORT_N", &n),
            ("KMAX", kmax),
            ("KEY", body),
            ("IDX", idx),
        ],
    );
    Some(src.map(|b| crate::module(&[COMMON, MATH, math64(d), &b])))
}

/// Which pass of the long-row TopK a module computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TopKStage {
    /// Bindings `x`, key temp, index temp: the padded (key, index) rows.
    Init,
    /// Bindings key temp, index temp: stages `kk_lo..=kk_hi` in workgroup memory.
    Local,
    /// Bindings key temp, index temp: one step of distance `j` of stage `kk_hi`.
    Global,
    /// Bindings `x`, index temp, `val`, `idx`: the first k pairs of every row.
    Out,
}

impl TopKStage {
    /// Every stage.
    pub const ALL: [TopKStage; 4] = [TopKStage::Init, TopKStage::Local, TopKStage::Global, TopKStage::Out];
}

/// Renders one pass of the long-row TopK on numeric `d` with `index` (I32/I64) outputs.
pub fn big_module(stage: TopKStage, d: DType, index: DType) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    let (k, kmax, body) = key_exprs(d)?;
    let n = max_len(d).to_string();
    let common =
        render(REDUCE_TOPK_BIG_COMMON, &[("R", reg_type(d)), ("K", k), ("SORT_N", &n), ("KMAX", kmax), ("KEY", body)]);
    let common = match common {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let stage_src = match stage {
        TopKStage::Init => render(REDUCE_TOPK_BIG_INIT, &[("TENSORS", &tensor_binding("x", 1, d, Access::Read))]),
        TopKStage::Local => Ok(REDUCE_TOPK_BIG_LOCAL.to_string()),
        TopKStage::Global => Ok(REDUCE_TOPK_BIG_GLOBAL.to_string()),
        TopKStage::Out => {
            let t = tensor_binding("x", 1, d, Access::Read)
                + &tensor_binding("val", 3, d, Access::Write)
                + &tensor_binding("idx", 4, index, Access::Write);
            render(REDUCE_TOPK_BIG_OUT, &[("TENSORS", &t), ("IDX", idx)])
        }
    };
    Some(stage_src.map(|s| crate::module(&[COMMON, MATH, math64(d), &common, &s])))
}
