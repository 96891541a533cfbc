//! The control family's kernels (§2.13): what If, While and Scan are built from on the GPU.
//!
//! - `control_gate.wgsl` writes the workgroup counts of up to 16 dispatches from a condition
//!   tensor (any of its first elements non-zero): their grids when their branch is taken, zeros
//!   when not (indirect dispatch).
//!   A gate nested in a gated body ANDs its condition with the enclosing gate's predicate,
//!   which every gate writes after its counts.
//! - `control_copy.wgsl` copies whole words at offsets given by params: a repeated body moves a
//!   slice per iteration with it while binding the same ranges every iteration;
//!   `control_copy_bytes.wgsl` does the same at byte granularity (1- and 2-byte dtypes).

use crate::{render, tensor_binding, Access, COMMON};
use backend_api::DType;

/// Condition gate template.
pub const CONTROL_GATE: &str = include_str!("wgsl/control_gate.wgsl");
/// Word copy at param offsets.
pub const CONTROL_COPY: &str = include_str!("wgsl/control_copy.wgsl");
/// Byte copy at param offsets.
pub const CONTROL_COPY_BYTES: &str = include_str!("wgsl/control_copy_bytes.wgsl");

/// `ControlGateParams::parent` of a gate that no enclosing gate controls.
pub const NO_PARENT: u32 = u32::MAX;

/// Byte offset of `parent` in [`ControlGateParams`]: where an enclosing gate rewrites it.
pub const GATE_PARENT_OFFSET: usize = 8;

/// Dispatches one gate kernel controls.
pub const GATE_MAX: usize = 16;

crate::params! {
    /// `ControlGateParams` of `control_gate.wgsl`.
    pub struct ControlGateParams {
        /// Dispatches gated (at most [`GATE_MAX`]).
        pub count: u32,
        /// Elements of the condition tensor whose OR is the condition (1: element 0).
        pub cond_len: u32,
        /// Word of the enclosing gate's control buffer holding its predicate, or [`NO_PARENT`].
        pub parent: u32,
        /// First element of the condition tensor read.
        pub cond_at: u32,
        /// Grid of dispatch `j` in `grids[j][0..3]`; `grids[j][3]`: 1 to run it when the
        /// condition fails (an else branch), 0 when it holds.
        pub grids: [[u32; 4]; GATE_MAX],
    }
}

crate::params! {
    /// `ControlCopyParams` of `control_copy.wgsl` (all in u32 words).
    pub struct ControlCopyParams {
        /// Words to copy.
        pub n: u32,
        /// First word read.
        pub src: u32,
        /// First word written.
        pub dst: u32,
        /// Padding.
        pub pad0: u32,
    }
}

crate::params! {
    /// `ControlCopyBytesParams` of `control_copy_bytes.wgsl` (all in bytes).
    pub struct ControlCopyBytesParams {
        /// Bytes to copy.
        pub n: u32,
        /// First byte read.
        pub src: u32,
        /// First byte written.
        pub dst: u32,
        /// Padding.
        pub pad0: u32,
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[
    <ControlGateParams as crate::params::Params>::LAYOUT,
    <ControlCopyParams as crate::params::Params>::LAYOUT,
    <ControlCopyBytesParams as crate::params::Params>::LAYOUT,
];

/// The gate kernel for a condition of dtype `d`: binding 1 the condition (the OR of its first
/// `cond_len` elements), 2 the enclosing gate's control words (any range when there is none),
/// 3 the counts and predicates it writes. `None` for dtypes whose registers are 64-bit or complex (a condition is a Bool or a
/// 32-bit number).
pub fn gate_module(d: DType) -> Option<Result<String, String>> {
    let zero = match d {
        DType::Bool | DType::U8 | DType::U32 => "0u",
        DType::I8 | DType::I32 => "0i",
        DType::F32 | DType::F16 | DType::BF16 => "0.0",
        DType::I64 | DType::F64 | DType::C64 => return None,
    };
    let tensors = tensor_binding("cond", 1, d, Access::Read);
    // `!(x == 0)` so that a NaN condition is true.
    let cond = format!("!(ld_cond(i) == {zero})");
    Some(render(CONTROL_GATE, &[("TENSORS", &tensors), ("COND", &cond)]).map(|b| crate::module(&[COMMON, &b])))
}

/// The word-copy kernel.
pub fn copy_module() -> String {
    crate::module(&[COMMON, CONTROL_COPY])
}

/// The byte-copy kernel.
pub fn copy_bytes_module() -> String {
    crate::module(&[COMMON, CONTROL_COPY_BYTES])
}

/// Whether `source` is a gate kernel ([`gate_module`]), which an enclosing gate chains to its
/// own predicate instead of gating.
pub fn is_gate(source: &str) -> bool {
    source.contains("struct ControlGateParams")
}
