//! Cumsum / CumsumBackward (§2.5.5–2.5.6) along one axis: three passes over workgroup blocks
//! (`reduce_scan_local.wgsl`, `reduce_scan_blocks.wgsl`, `reduce_scan_combine.wgsl`), or one
//! invocation per short row (`reduce_scan_rows.wgsl`), on `reduce_scan_common.wgsl` (params,
//! addressing, the workgroup scan). See [`ScanStage`].

use super::math64;
use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH};
use backend_api::DType;

/// Params, addressing and workgroup scan of the Cumsum passes.
pub const REDUCE_SCAN_COMMON: &str = include_str!("../wgsl/reduce_scan_common.wgsl");
/// Cumsum pass 1 (block scans).
pub const REDUCE_SCAN_LOCAL: &str = include_str!("../wgsl/reduce_scan_local.wgsl");
/// Cumsum pass 2 (block prefixes).
pub const REDUCE_SCAN_BLOCKS: &str = include_str!("../wgsl/reduce_scan_blocks.wgsl");
/// Cumsum of short rows, one invocation per row.
pub const REDUCE_SCAN_ROWS: &str = include_str!("../wgsl/reduce_scan_rows.wgsl");
/// Cumsum pass 3 (combine and store).
pub const REDUCE_SCAN_COMBINE: &str = include_str!("../wgsl/reduce_scan_combine.wgsl");

crate::params! {
    /// `ScanParams` of `reduce_scan_common.wgsl`.
    pub struct ScanParams {
        /// Rows (scanned independently).
        pub rows: u32,
        /// Elements per row.
        pub len: u32,
        /// Stride between a row's elements.
        pub inner: u32,
        /// Blocks of `WG` positions per row.
        pub nb: u32,
        /// 1: exclude each element from its own sum.
        pub exclusive: u32,
        /// 1: scan from the end of the row.
        pub reverse: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
    }
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
pub fn acc_dtype(d: DType) -> Option<DType> {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => Some(DType::F32),
        DType::I32 | DType::I8 => Some(DType::I32),
        DType::U32 | DType::U8 => Some(DType::U32),
        DType::F64 | DType::I64 => Some(d),
        DType::Bool | DType::C64 => None,
    }
}

/// Renders one Cumsum pass for dtype `d`; `None` where Cumsum is undefined.
pub fn module(stage: ScanStage, d: DType) -> Option<Result<String, String>> {
    let acc = acc_dtype(d)?;
    let common = match render(REDUCE_SCAN_COMMON, &[("A", reg_type(d))]) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let body = match stage {
        ScanStage::Local => {
            let t = tensor_binding("x", 1, d, Access::Read)
                + &tensor_binding("loc", 2, acc, Access::Write)
                + &tensor_binding("bs", 3, acc, Access::Write);
            render(REDUCE_SCAN_LOCAL, &[("TENSORS", &t)])
        }
        ScanStage::Blocks => Ok(REDUCE_SCAN_BLOCKS.to_string()),
        ScanStage::Combine => {
            let t = tensor_binding("loc", 1, acc, Access::Read)
                + &tensor_binding("bs", 2, acc, Access::Read)
                + &tensor_binding("out", 3, d, Access::Write);
            render(REDUCE_SCAN_COMBINE, &[("TENSORS", &t)])
        }
        ScanStage::Rows => {
            let t = tensor_binding("x", 1, d, Access::Read) + &tensor_binding("out", 2, d, Access::Write);
            render(REDUCE_SCAN_ROWS, &[("TENSORS", &t)])
        }
    };
    Some(body.map(|b| crate::module(&[COMMON, MATH, math64(d), &common, &b])))
}
