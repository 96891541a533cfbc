//! Variants of the movement family (Transpose, Narrow, Concat, Expand, Reverse, Pad): one strided
//! copy kernel (`movement.wgsl`) that moves raw element bits, so a variant depends only on the
//! element's byte width, never on how its values are interpreted.
//!
//! The typed accessors of [`crate::tensor_binding`] convert packed F16/BF16 through f32 and Bool
//! to 0/1; a copy must not (NaN payloads, Bool bytes other than 1 are kept exactly as the
//! reference keeps them), so this module has its own raw-bits accessors: `ld_<name>(i) -> R` and
//! `st_<name>(i, v: R)` with `R` = `u32` holding the element's bits (widths 1, 2, 4) or
//! `vec2<u32>` (width 8: F64, I64, C64, copied as two words, needing no 64-bit shader feature).

use crate::{render, Access, COMMON};
use backend_api::DType;

crate::params! {
    /// `MovementParams` of `movement.wgsl`: one strided copy over up to 8 (collapsed) axes.
    /// Bases and strides are two's-complement u32 (a negative stride wraps; see the WGSL).
    pub struct MovementParams {
        /// Elements of the index space (one invocation each).
        pub n: u32,
        /// Rank of the index space (at most 8).
        pub rank: u32,
        /// Pad rule outside the source: 0 constant (or no padding), 1 reflect, 2 edge.
        pub mode: u32,
        /// Source element of coordinate 0.
        pub sbase: u32,
        /// Destination element of coordinate 0.
        pub dbase: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
        /// The pad constant's bits: `.x`, or `.xy` for 8-byte elements.
        pub fill: [u32; 4],
        /// Extent of each axis.
        pub dims: [[u32; 4]; 2],
        /// Padding before the source on each axis.
        pub lo: [[u32; 4]; 2],
        /// Source extent on each axis.
        pub sdim: [[u32; 4]; 2],
        /// Source stride of each axis.
        pub ss: [[u32; 4]; 2],
        /// Destination stride of each axis.
        pub ds: [[u32; 4]; 2],
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[<MovementParams as crate::params::Params>::LAYOUT];

/// The strided copy template.
pub const MOVEMENT: &str = include_str!("wgsl/movement.wgsl");

/// An element's storage width: the only thing a raw copy depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// 1 byte, packed four to a `u32` word (I8, U8, Bool).
    B1,
    /// 2 bytes, packed two to a `u32` word (F16, BF16).
    B2,
    /// 4 bytes, one `u32` word (F32, I32, U32).
    B4,
    /// 8 bytes, a `vec2<u32>` (F64, I64, C64).
    B8,
}

impl Width {
    /// The width of `d`'s elements.
    pub fn of(d: DType) -> Width {
        match d.size() {
            1 => Width::B1,
            2 => Width::B2,
            4 => Width::B4,
            _ => Width::B8,
        }
    }

    /// Whether elements share `u32` words, so stores must be `atomicOr`s into zeroed memory.
    pub fn is_packed(self) -> bool {
        matches!(self, Width::B1 | Width::B2)
    }

    /// The WGSL type holding one element's bits.
    pub fn raw_type(self) -> &'static str {
        match self {
            Width::B8 => "vec2<u32>",
            Width::B1 | Width::B2 | Width::B4 => "u32",
        }
    }

    /// The expression of the pad constant's bits in the params struct `p`.
    fn fill_expr(self) -> &'static str {
        match self {
            Width::B8 => "p.fill.xy",
            Width::B1 | Width::B2 | Width::B4 => "p.fill.x",
        }
    }
}

/// The declaration of tensor binding `name` at `binding` with its raw-bits accessor:
/// `fn ld_<name>(i: u32) -> R` for [`Access::Read`], `fn st_<name>(i: u32, v: R)` for
/// [`Access::Write`] (packed widths `atomicOr` into zeroed memory), `R` = [`Width::raw_type`].
/// Inputs are declared `read_write` for the reason given at [`crate::tensor_binding`].
pub fn raw_binding(name: &str, binding: u32, w: Width, access: Access) -> String {
    let reg = w.raw_type();
    let (word, shift, mask) = match w {
        Width::B1 => ("i >> 2u", "8u * (i & 3u)", "0xffu"),
        Width::B2 => ("i >> 1u", "16u * (i & 1u)", "0xffffu"),
        Width::B4 | Width::B8 => ("i", "0u", "0u"),
    };
    match access {
        Access::Read => {
            let body = if w.is_packed() {
                format!("return ({name}[{word}] >> ({shift})) & {mask};")
            } else {
                format!("return {name}[i];")
            };
            format!(
                "@group(0) @binding({binding}) var<storage, read_write> {name}: array<{reg}>;\n\
                 fn ld_{name}(i: u32) -> {reg} {{ {body} }}\n"
            )
        }
        Access::Write => {
            let (st, body) = if w.is_packed() {
                ("atomic<u32>", format!("atomicOr(&{name}[{word}], (v & {mask}) << ({shift}));"))
            } else {
                (reg, format!("{name}[i] = v;"))
            };
            format!(
                "@group(0) @binding({binding}) var<storage, read_write> {name}: array<{st}>;\n\
                 fn st_{name}(i: u32, v: {reg}) {{ {body} }}\n"
            )
        }
    }
}

/// The complete strided-copy module for elements of `d`: binding 1 is the source `x`, binding 2
/// the destination `out`.
pub fn module(d: DType) -> Result<String, String> {
    let w = Width::of(d);
    let tensors = raw_binding("x", 1, w, Access::Read) + &raw_binding("out", 2, w, Access::Write);
    let m = render(MOVEMENT, &[("TENSORS", &tensors), ("FILL", w.fill_expr())])?;
    Ok(crate::module(&[COMMON, &m]))
}

/// The module for a copy whose source is empty, so that every element is the pad constant (Pad
/// of an axis of size 0): it binds only the destination `out`, at binding 1. (An empty source
/// still gets a 4-byte binding, smaller than one 8-byte element, which the device rejects.)
pub fn fill_module(d: DType) -> Result<String, String> {
    let w = Width::of(d);
    let reg = w.raw_type();
    let fill = w.fill_expr();
    let tensors = format!("fn ld_x(i: u32) -> {reg} {{ return {fill}; }}\n") + &raw_binding("out", 1, w, Access::Write);
    let m = render(MOVEMENT, &[("TENSORS", &tensors), ("FILL", fill)])?;
    Ok(crate::module(&[COMMON, &m]))
}
