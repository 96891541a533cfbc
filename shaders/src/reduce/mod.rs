//! Variants of the reduce kernel family (§2.5): Reduce (§2.5.1: Sum, Mean, Max, Min, Prod over
//! any set of axes) here; ArgMax/ArgMin (§2.5.2–2.5.3) in [`arg`], TopK (§2.5.4) in [`topk`],
//! Cumsum/CumsumBackward (§2.5.5–2.5.6) in [`scan`]. The last three work on rows along one axis:
//! row `w = o·inner + j` is the `len` elements at stride `inner` from `o·len·inner + j`.
//!
//! A Reduce variant is (op, dtype, [`Stage`], [`Layout`]). The op fills `reduce_common.wgsl`'s slots
//! (accumulator type, identity, combine, finish); the layout picks the kernel body
//! (`reduce_rows.wgsl`: a workgroup per row chunk with a tree reduction; `reduce_threads.wgsl`: an
//! invocation per short row). Long rows are split into chunks whose partials (in the accumulator
//! type) a second, [`Stage::Final`] pass combines.

use crate::{reg_type, render, tensor_binding, Access, COMMON, MATH, MATH64};
use backend_api::op::ReduceOp;
use backend_api::DType;

pub mod arg;
pub mod scan;
pub mod topk;

crate::params! {
    /// `ReduceParams` of `reduce_common.wgsl`. The lowering merges adjacent axes of one kind, so
    /// the input is seen as kept axes (one output row per kept position) and reduced axes, each
    /// with its input strides.
    pub struct ReduceParams {
        /// Output rows of this pass.
        pub rows: u32,
        /// Reduced elements per row in this pass.
        pub red: u32,
        /// Workgroups per row (rows layout); 1 when one workgroup covers a whole row.
        pub chunks: u32,
        /// Reduced elements per workgroup (rows layout).
        pub chunk_len: u32,
        /// The original reduced count, for Mean.
        pub count: u32,
        /// Number of kept axes after merging.
        pub nk: u32,
        /// Number of reduced axes after merging.
        pub nr: u32,
        /// Padding.
        pub pad0: u32,
        /// Kept dims.
        pub kdims: [[u32; 4]; 2],
        /// Input strides of the kept dims.
        pub kstr: [[u32; 4]; 2],
        /// Reduced dims.
        pub rdims: [[u32; 4]; 2],
        /// Input strides of the reduced dims.
        pub rstr: [[u32; 4]; 2],
    }
}

/// The params structs of this family, its submodules' included (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[
    <ReduceParams as crate::params::Params>::LAYOUT,
    <arg::ArgParams as crate::params::Params>::LAYOUT,
    <scan::ScanParams as crate::params::Params>::LAYOUT,
    <topk::TopkParams as crate::params::Params>::LAYOUT,
    <topk::TopkBigParams as crate::params::Params>::LAYOUT,
];

/// Params, op slots and index decoding shared by both layouts.
pub const REDUCE_COMMON: &str = include_str!("../wgsl/reduce_common.wgsl");
/// One workgroup per (row, chunk), tree reduction in workgroup memory.
pub const REDUCE_ROWS: &str = include_str!("../wgsl/reduce_rows.wgsl");
/// One invocation per output row (short or empty rows).
pub const REDUCE_THREADS: &str = include_str!("../wgsl/reduce_threads.wgsl");

/// Which kernel body a variant uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A workgroup per (row, chunk).
    Rows,
    /// An invocation per row.
    Threads,
}

/// Which part of a (possibly two-pass) reduction a variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Input dtype in, output dtype out: the whole reduction in one pass.
    Full,
    /// Input dtype in, unfinished partials in the accumulator dtype out.
    Partial,
    /// Partials (accumulator dtype) in, finished output dtype out.
    Final,
}

/// The dtype whose storage holds accumulator values of `d` (F16/BF16 → F32, I8 → I32,
/// U8/Bool → U32; others unchanged), i.e. the dtype of the partials between two passes.
pub fn acc_dtype(d: DType) -> DType {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => DType::F32,
        DType::I32 | DType::I8 => DType::I32,
        DType::U32 | DType::U8 | DType::Bool => DType::U32,
        DType::F64 | DType::I64 | DType::C64 => d,
    }
}

/// Whether the spec defines `op` on `d` (and so this family has a kernel for it).
pub fn supported(op: ReduceOp, d: DType) -> bool {
    op.dtypes().contains(d)
}

/// The (minimum, maximum) of `d` as WGSL expressions of its accumulator type.
pub(crate) fn bounds(d: DType) -> Option<(&'static str, &'static str)> {
    Some(match d {
        DType::F32 | DType::F16 | DType::BF16 => ("f32_inf(true)", "f32_inf(false)"),
        DType::F64 => ("f64_inf(true)", "f64_inf(false)"),
        DType::I64 => ("(-9223372036854775807li - 1li)", "9223372036854775807li"),
        DType::I32 => ("(-2147483647i - 1i)", "2147483647i"),
        DType::I8 => ("-128i", "127i"),
        DType::U32 => ("0u", "4294967295u"),
        DType::U8 => ("0u", "255u"),
        DType::Bool => ("0u", "1u"),
        DType::C64 => return None,
    })
}

/// (identity, combine, finish) expressions of `op` on `d`; `None` when undefined.
fn op_exprs(op: ReduceOp, d: DType) -> Option<(String, String, String)> {
    if !supported(op, d) {
        return None;
    }
    let (lo, hi) = bounds(d)?;
    // Floats need NaN propagation and signed-zero order; integers and Bool (0/1) use built-ins.
    let pick = |f32name: &str, f64name: &str, int: &str| match d {
        DType::F64 => format!("{f64name}(a, b)"),
        DType::F32 | DType::F16 | DType::BF16 => format!("{f32name}(a, b)"),
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => {
            format!("{int}(a, b)")
        }
    };
    let (id, comb, fin) = match op {
        ReduceOp::Sum => ("ACC(0)".to_string(), "a + b".to_string(), "a".to_string()),
        ReduceOp::Prod => ("ACC(1)".to_string(), "a * b".to_string(), "a".to_string()),
        ReduceOp::Mean => {
            let nan = if d == DType::F64 { "f64_nan()" } else { "f32_nan()" };
            ("ACC(0)".to_string(), "a + b".to_string(), format!("select(a / ACC(p.count), {nan}, p.count == 0u)"))
        }
        ReduceOp::Max => (lo.to_string(), pick("max_f32", "max_f64", "max"), "a".to_string()),
        ReduceOp::Min => (hi.to_string(), pick("min_f32", "min_f64", "min"), "a".to_string()),
    };
    Some((id, comb, fin))
}

/// Renders the complete module of one variant: binding 1 is the input `x`, binding 2 the output
/// `out`. `None` when the spec does not define `op` on `d`.
pub fn module(op: ReduceOp, d: DType, stage: Stage, layout: Layout) -> Option<Result<String, String>> {
    let (id, comb, fin) = op_exprs(op, d)?;
    let acc = acc_dtype(d);
    let (din, dout, fin) = match stage {
        Stage::Full => (d, d, fin),
        Stage::Partial => (d, acc, "a".to_string()),
        Stage::Final => (acc, d, fin),
    };
    let tensors = tensor_binding("x", 1, din, Access::Read) + &tensor_binding("out", 2, dout, Access::Write);
    let common = render(
        REDUCE_COMMON,
        &[("TENSORS", &tensors), ("ACC", reg_type(d)), ("IDENTITY", &id), ("COMBINE", &comb), ("FINISH", &fin)],
    );
    let body = match layout {
        Layout::Rows => REDUCE_ROWS,
        Layout::Threads => REDUCE_THREADS,
    };
    Some(common.map(|c| crate::module(&[COMMON, MATH, math64(d), &c, body])))
}

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
