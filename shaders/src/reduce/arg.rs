//! ArgMax / ArgMin (§2.5.2–2.5.3): one workgroup per row with a tree reduction of (value, index)
//! pairs (`reduce_arg_rows.wgsl`), or one invocation per short row (`reduce_arg_threads.wgsl`),
//! on the shared `reduce_arg_common.wgsl` (params, addressing, candidate order).

use super::{index_conv, math64};
use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH};
use backend_api::DType;

/// ArgMax / ArgMin params, addressing and candidate order.
pub const REDUCE_ARG_COMMON: &str = include_str!("../wgsl/reduce_arg_common.wgsl");
/// ArgMax / ArgMin with one workgroup per row.
pub const REDUCE_ARG_ROWS: &str = include_str!("../wgsl/reduce_arg_rows.wgsl");
/// ArgMax / ArgMin with one invocation per (short) row.
pub const REDUCE_ARG_THREADS: &str = include_str!("../wgsl/reduce_arg_threads.wgsl");

crate::params! {
    /// `ArgParams` of `reduce_arg_common.wgsl`.
    pub struct ArgParams {
        /// Rows (one output element each).
        pub rows: u32,
        /// Elements per row.
        pub len: u32,
        /// Stride between a row's elements.
        pub inner: u32,
        /// Padding.
        pub pad0: u32,
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

/// NaN test of a register value of `d` (`x`), `false` for integers and Bool.
fn nan_test(d: DType) -> &'static str {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => "f32_is_nan(x)",
        DType::F64 => "f64_is_nan(x)",
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => "false",
    }
}

/// ArgMax (`max`) or ArgMin of `d` writing `index` (I32/I64): binding 1 `x`, binding 2 `out`.
/// `None` for C64 or a non-index output dtype.
pub fn module(max: bool, d: DType, index: DType, layout: ArgLayout) -> Option<Result<String, String>> {
    let idx = index_conv(index)?;
    if d == DType::C64 {
        return None;
    }
    let tensors = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, index, Access::Write);
    let cmp = if max { "a > b" } else { "a < b" };
    let common =
        render(REDUCE_ARG_COMMON, &[("TENSORS", &tensors), ("R", reg_type(d)), ("ISNAN", nan_test(d)), ("CMP", cmp)]);
    let common = match common {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let body = match layout {
        ArgLayout::Rows => REDUCE_ARG_ROWS,
        ArgLayout::Threads => REDUCE_ARG_THREADS,
    };
    Some(render(body, &[("IDX", idx)]).map(|b| crate::module(&[COMMON, MATH, math64(d), &common, &b])))
}
