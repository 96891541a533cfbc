//! Variants of the ordering kernel family: ArgMax/ArgMin (§2.5.2–2.5.3), TopK (§2.5.4),
//! Cumsum/CumsumBackward (§2.5.5–2.5.6), SoftmaxCrossEntropy and its backward (§2.7.3, §2.16.3).
//!
//! - arg-ops: one workgroup per row, tree reduction of (value, index) pairs, or one invocation per
//!   short row (`ordering_arg_*.wgsl`, see [`ArgLayout`]);
//! - scans: three passes over workgroup blocks, or one invocation per short row
//!   (`ordering_scan_*.wgsl`, see [`ScanStage`]);
//! - losses: one workgroup per slice, reusing the norm family's `norm_common.wgsl` helpers;
//! - TopK: one workgroup per row, bitonic sort of order-preserving keys in workgroup memory, or for
//!   long rows a bitonic sort over temps (`ordering_topk_big_*.wgsl`, see [`TopKStage`]).

use crate::norm::NORM_COMMON;
use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH, MATH64};
use backend_api::DType;

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[];

/// ArgMax / ArgMin params, addressing and candidate order.
pub const ORDERING_ARG_COMMON: &str = include_str!("wgsl/ordering_arg_common.wgsl");
/// ArgMax / ArgMin with one workgroup per row.
pub const ORDERING_ARG_ROWS: &str = include_str!("wgsl/ordering_arg_rows.wgsl");
/// ArgMax / ArgMin with one invocation per (short) row.
pub const ORDERING_ARG_THREADS: &str = include_str!("wgsl/ordering_arg_threads.wgsl");
/// Params, addressing and workgroup scan of the Cumsum passes.
pub const ORDERING_SCAN_COMMON: &str = include_str!("wgsl/ordering_scan_common.wgsl");
/// Cumsum pass 1 (block scans).
pub const ORDERING_SCAN_LOCAL: &str = include_str!("wgsl/ordering_scan_local.wgsl");
/// Cumsum pass 2 (block prefixes).
pub const ORDERING_SCAN_BLOCKS: &str = include_str!("wgsl/ordering_scan_blocks.wgsl");
/// Cumsum of short rows, one invocation per row.
pub const ORDERING_SCAN_ROWS: &str = include_str!("wgsl/ordering_scan_rows.wgsl");
/// Cumsum pass 3 (combine and store).
pub const ORDERING_SCAN_COMBINE: &str = include_str!("wgsl/ordering_scan_combine.wgsl");
/// SoftmaxCrossEntropy body.
pub const ORDERING_LOSS: &str = include_str!("wgsl/ordering_loss.wgsl");
/// SoftmaxCrossEntropyBackward body.
pub const ORDERING_LOSS_BACK: &str = include_str!("wgsl/ordering_loss_back.wgsl");
/// TopK kernel (rows up to [`topk_max_len`]).
pub const ORDERING_TOPK: &str = include_str!("wgsl/ordering_topk.wgsl");

/// The index output dtypes (§1.6) as the WGSL conversion of a u32 index.
fn index_conv(index: DType) -> Option<&'static str> {
    match index {
        DType::I32 => Some("i32"),
        DType::I64 => Some("i64"),
        _ => None,
    }
}

/// Modules needed by values of `d`: f64 helpers for F64.
fn math64(d: DType) -> &'static str {
    if d == DType::F64 {
        MATH64
    } else {
        ""
    }
}

/// NaN test of a register value of `d` (`x`), `false` for integers and Bool.
fn nan_test(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => "f32_is_nan(x)",
        DType::F64 => "f64_is_nan(x)",
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => "false",
    }
}

/// How an arg-op kernel maps rows to invocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgLayout {
    /// One workgroup per row with a tree reduction.
    Rows,
    /// One invocation per row, serial (short rows).
    Threads,
}

/// ArgMax (`max`) or ArgMin of `d` writing `index` (I32/I64): binding 1 `x`, binding 2 `out`.
/// `None` for C64 or a non-index output dtype.
pub fn arg_module(max: bool, d: DType, index: DType, layout: ArgLayout) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    if d == DType::C64 {
        return None;
    }
    let tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, index, Access::Write);
    let cmp = if max { "a > b" } else { "a < b" };
    let common =
        render(ORDERING_ARG_COMMON, &[("TENSORS", &tensors), ("R", reg_type(d)), ("ISNAN", nan_test(d)), ("CMP", cmp)]);
    let common = match common {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let body = match layout {
        ArgLayout::Rows => ORDERING_ARG_ROWS,
        ArgLayout::Threads => ORDERING_ARG_THREADS,
    };
    Some(render(body, &[("IDX", idx)]).map(|b| crate::module(&[COMMON, MATH, math64(d), &common, &b])))
}

/// Which pass of the Cumsum scan a module computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanStage {
    /// Bindings `x` (dtype), `loc` and `bs` (accumulator dtype): block scans and block totals.
    Local,
    /// Binding `bs`: block totals to exclusive block prefixes, in place.
    Blocks,
    /// Bindings `loc`, `bs`, `out` (dtype): combine and store.
    Combine,
    /// Bindings `x`, `out` (dtype): a whole short row per invocation, serially.
    Rows,
}

impl ScanStage {
    /// Every stage.
    pub const ALL: [ScanStage; 4] = [ScanStage::Local, ScanStage::Blocks, ScanStage::Combine, ScanStage::Rows];
}

/// The dtype of scan partials of `d` (F16/BF16 → F32, I8 → I32, U8 → U32); `None` where
/// Cumsum is undefined (Bool, C64).
pub fn scan_acc(d: DType) -> Option<DType> {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => Some(DType::F32),
        DType::I32 | DType::I8 => Some(DType::I32),
        DType::U32 | DType::U8 => Some(DType::U32),
        DType::F64 | DType::I64 => Some(d),
        DType::Bool | DType::C64 => None,
    }
}

/// Renders one Cumsum pass for dtype `d`; `None` where Cumsum is undefined.
pub fn scan_module(stage: ScanStage, d: DType) -> Option<Result<String, String>> {
    let acc = scan_acc(d)?;
    let common = match render(ORDERING_SCAN_COMMON, &[("A", reg_type(d))]) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let body = match stage {
        ScanStage::Local => {
            let t = tensor_binding("x", 1, d, Access::Read)
                + &tensor_binding("loc", 2, acc, Access::Write)
                + &tensor_binding("bs", 3, acc, Access::Write);
            render(ORDERING_SCAN_LOCAL, &[("TENSORS", &t)])
        }
        ScanStage::Blocks => Ok(ORDERING_SCAN_BLOCKS.to_string()),
        ScanStage::Combine => {
            let t = tensor_binding("loc", 1, acc, Access::Read)
                + &tensor_binding("bs", 2, acc, Access::Read)
                + &tensor_binding("out", 3, d, Access::Write);
            render(ORDERING_SCAN_COMBINE, &[("TENSORS", &t)])
        }
        ScanStage::Rows => {
            let t = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, d, Access::Write);
            render(ORDERING_SCAN_ROWS, &[("TENSORS", &t)])
        }
    };
    Some(body.map(|b| crate::module(&[COMMON, MATH, math64(d), &common, &b])))
}

/// SoftmaxCrossEntropy (`backward` false: bindings `x`, `t`, `out`) or its backward (`x`, `t`,
/// `dl`, `out`) on float `d`; `None` for other dtypes.
pub fn loss_module(backward: bool, d: DType) -> Option<Result<String, String>> {
    let h = crate::norm::float_helpers(d)?;
    let mut tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("t", 2, d, Access::Read);
    if backward {
        tensors += &tensor_binding("dl", 3, d, Access::Read);
        tensors += &tensor_binding("out", 4, d, Access::Write);
    } else {
        tensors += &tensor_binding("out", 3, d, Access::Write);
    }
    let mut slots: Vec<(&str, &str)> = h.to_vec();
    slots.push(("TENSORS", &tensors));
    let common = match render(NORM_COMMON, &slots) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let body = if backward { ORDERING_LOSS_BACK } else { ORDERING_LOSS };
    Some(Ok(crate::module(&[COMMON, MATH, math64(d), &common, body])))
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
pub fn topk_max_len(d: DType) -> usize {
    match d {
        DType::F64 | DType::I64 => 1024,
        _ => 2048,
    }
}

/// TopK of numeric `d` with `index` (I32/I64) outputs: binding 1 `x`, 2 `val`, 3 `idx`.
pub fn topk_module(d: DType, index: DType) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    let (k, kmax, body) = key_exprs(d)?;
    let tensors = tensor_binding("x", 1, d, Access::Read)
        + &tensor_binding("val", 2, d, Access::Write)
        + &tensor_binding("idx", 3, index, Access::Write);
    let n = topk_max_len(d).to_string();
    let src = render(
        ORDERING_TOPK,
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

/// Shared part of the long-row TopK passes.
pub const ORDERING_TOPK_BIG_COMMON: &str = include_str!("wgsl/ordering_topk_big_common.wgsl");
/// Long-row TopK: keys and indices into temps.
pub const ORDERING_TOPK_BIG_INIT: &str = include_str!("wgsl/ordering_topk_big_init.wgsl");
/// Long-row TopK: bitonic stages in workgroup memory.
pub const ORDERING_TOPK_BIG_LOCAL: &str = include_str!("wgsl/ordering_topk_big_local.wgsl");
/// Long-row TopK: one global bitonic step.
pub const ORDERING_TOPK_BIG_GLOBAL: &str = include_str!("wgsl/ordering_topk_big_global.wgsl");
/// Long-row TopK: the first k of each sorted row into the outputs.
pub const ORDERING_TOPK_BIG_OUT: &str = include_str!("wgsl/ordering_topk_big_out.wgsl");

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
pub fn topk_big_module(stage: TopKStage, d: DType, index: DType) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    let (k, kmax, body) = key_exprs(d)?;
    let n = topk_max_len(d).to_string();
    let common = render(
        ORDERING_TOPK_BIG_COMMON,
        &[("R", reg_type(d)), ("K", k), ("SORT_N", &n), ("KMAX", kmax), ("KEY", body)],
    );
    let common = match common {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let stage_src = match stage {
        TopKStage::Init => render(ORDERING_TOPK_BIG_INIT, &[("TENSORS", &tensor_binding("x", 1, d, Access::Read))]),
        TopKStage::Local => Ok(ORDERING_TOPK_BIG_LOCAL.to_string()),
        TopKStage::Global => Ok(ORDERING_TOPK_BIG_GLOBAL.to_string()),
        TopKStage::Out => {
            let t = tensor_binding("x", 1, d, Access::Read)
                + &tensor_binding("val", 3, d, Access::Write)
                + &tensor_binding("idx", 4, index, Access::Write);
            render(ORDERING_TOPK_BIG_OUT, &[("TENSORS", &t), ("IDX", idx)])
        }
    };
    Some(stage_src.map(|s| crate::module(&[COMMON, MATH, math64(d), &common, &s])))
}
