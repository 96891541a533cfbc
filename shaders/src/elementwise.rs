//! Variants of the elementwise family: one expression per (op, dtype), rendered into
//! `elementwise.wgsl` with the tensor bindings, plus the helper files the variant needs.
//!
//! Expressions are built per register class (`Class`): F32/F16/BF16 compute in f32, I32/I8 in
//! i32, U32/U8/Bool in u32, and F64, I64, C64 in their own types. Helper functions follow the
//! naming `<op>_<class>` (`exp_f32`, `div_i64`, `mul_c64`, ...) in `math*.wgsl`, and conversions
//! live in `cast*.wgsl`. Files needing SHADER_F64 / SHADER_INT64 are included only by variants
//! that touch F64 / I64, so that other variants run on devices without those features.

mod binary;
mod cast;
mod unary;
mod vec4;

pub use vec4::{is_word_dtype, module_vec4, trusted_map, UNROLL};

use crate::{
    render, tensor_binding, Access, CAST, CAST_F64, CAST_I64, COMMON, ELEMENTWISE, MATH, MATH64, MATH_I64, MATH_INT,
};
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::DType;

crate::params! {
    /// `ElementwiseParams` of `elementwise.wgsl`: the collapsed output dims and each input's
    /// broadcast strides along them (0 on stretched axes), up to 8 axes.
    pub struct ElementwiseParams {
        /// Output elements (one invocation each).
        pub n: u32,
        /// Collapsed rank (at most 8).
        pub rank: u32,
        /// Always 0: the opaque zero some expressions read as `p.pad0` (see the comment in
        /// `elementwise.wgsl`); the lowering leaves it at its default.
        pub pad0: u32,
        /// The first element of the flat form (0 except for the tail after a four-wide kernel).
        pub base: u32,
        /// Collapsed output dims.
        pub dims: [[u32; 4]; 2],
        /// Element strides of input 0.
        pub s0: [[u32; 4]; 2],
        /// Element strides of input 1.
        pub s1: [[u32; 4]; 2],
        /// Element strides of input 2.
        pub s2: [[u32; 4]; 2],
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] = &[<ElementwiseParams as crate::params::Params>::LAYOUT];

/// A u32 that is always 0 but unknown to the shader compiler: the template's `p.pad0`, which the
/// lowering (`backend-wgpu/src/lower/elementwise.rs`) writes as 0. Error-free float transformations
/// (TwoSum in `mul_c64`/`div_c64`) pass their intermediates through it, because drivers rewrite
/// float expressions algebraically (Mesa folds TwoSum's error term to 0) and WGSL cannot mark an
/// expression exact.
const OPAQUE_ZERO: &str = "p.pad0";

/// Which elementwise op a variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemKind {
    /// `f(a)`.
    Unary(UnaryOp),
    /// `g(a, b)`.
    Binary(BinaryOp),
    /// `a ? b` → Bool.
    Compare(CompareOp),
    /// `a ? b : c` (`a` Bool).
    Where,
    /// `a·b + c`.
    Fma,
    /// Value conversion of `a` to the output dtype.
    Cast,
}

/// How values of a dtype live in registers, which picks the helper functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// F32, F16, BF16 (f32 registers).
    F32,
    /// F64.
    F64,
    /// I32, I8 (i32 registers).
    I32,
    /// U32, U8 (u32 registers).
    U32,
    /// I64.
    I64,
    /// Bool (u32 0/1).
    Bool,
    /// C64 (vec2<f32>).
    C64,
}

impl Class {
    fn of(d: DType) -> Class {
        match d {
            DType::F32 | DType::F16 | DType::BF16 => Class::F32,
            DType::F64 => Class::F64,
            DType::I32 | DType::I8 => Class::I32,
            DType::U32 | DType::U8 => Class::U32,
            DType::I64 => Class::I64,
            DType::Bool => Class::Bool,
            DType::C64 => Class::C64,
        }
    }

    /// The suffix of this class's helper functions.
    fn suffix(self) -> &'static str {
        match self {
            Class::F32 => "f32",
            Class::F64 => "f64",
            Class::I32 => "i32",
            Class::U32 => "u32",
            Class::I64 => "i64",
            Class::Bool => "bool",
            Class::C64 => "c64",
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Class::F32 | Class::F64)
    }
}

/// The WGSL expression of `kind` over operands `a`, `b`, `c` (register types of `ins`), producing
/// the register type of `out`; `None` when the spec does not define this (op, dtypes) combination.
///
/// Expressions call only the helper files (`COMMON`, `MATH`, `MATH_INT`, plus `MATH_I64` /
/// `MATH64` for I64 / F64 and the `CAST*` files for Cast), so other families may embed them (the
/// matmul epilogue embeds Unary ones). Exception: C64 and BF16 `Mul`/`Div` also read `OPAQUE_ZERO`
/// (`p.pad0`) from the elementwise template's params.
pub fn expr(kind: ElemKind, ins: &[DType], out: DType) -> Option<String> {
    let d = *ins.first()?;
    let same = |n: usize| ins.len() == n && ins.iter().all(|&x| x == d);
    match kind {
        ElemKind::Unary(op) if same(1) && out == d => unary::expr(op, d),
        ElemKind::Binary(op) if same(2) && out == d => binary::expr(op, d),
        ElemKind::Compare(op) if same(2) && out == DType::Bool => binary::compare(op, d),
        ElemKind::Where if ins.len() == 3 && d == DType::Bool && ins[1] == out && ins[2] == out => {
            Some("select(c, b, a != 0u)".to_string())
        }
        ElemKind::Fma if same(3) && out == d && d.is_float() => Some("fma(a, b, c)".to_string()),
        ElemKind::Cast if ins.len() == 1 => Some(cast::expr(d, out)),
        ElemKind::Unary(_)
        | ElemKind::Binary(_)
        | ElemKind::Compare(_)
        | ElemKind::Where
        | ElemKind::Fma
        | ElemKind::Cast => None,
    }
}

/// The helper files a variant needs, in dependency order. F64 and I64 code is only included when
/// the variant touches those dtypes (it needs device features).
/// The maths libraries every elementwise expression may call; the 64-bit ones only when a dtype
/// needs them (they need device features). F64 maths builds on the i64 helpers.
pub(crate) fn maths(f64_: bool, i64_: bool) -> Vec<&'static str> {
    let mut parts = vec![COMMON, MATH, MATH_INT];
    if i64_ || f64_ {
        parts.push(MATH_I64);
    }
    if f64_ {
        parts.push(MATH64);
    }
    parts
}

fn helpers(kind: ElemKind, ins: &[DType], out: DType) -> Vec<&'static str> {
    let uses = |d: DType| out == d || ins.contains(&d);
    let (f64_, i64_) = (uses(DType::F64), uses(DType::I64));
    let mut parts = maths(f64_, i64_);
    if kind == ElemKind::Cast {
        parts.push(CAST);
        if i64_ || f64_ {
            parts.push(CAST_I64);
        }
        if f64_ {
            parts.push(CAST_F64);
        }
    }
    parts
}

/// Renders the complete module of one variant; `None` when [`expr`] has none.
pub fn module(kind: ElemKind, ins: &[DType], out: DType) -> Option<Result<String, String>> {
    module_indexed(kind, ins, out, Indexing::Strided)
}

/// How a map kernel turns the output index into input indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Indexing {
    /// Per-axis decomposition over up to 8 collapsed axes (any broadcast).
    Strided,
    /// One collapsed axis: `i_k = e * s_k` (same-shape operands and scalars; no loop, no division).
    Flat,
}

/// Per-axis index decomposition (the general case).
const STRIDED_INDEX: &str = "var rem = e;
    var i0 = 0u;
    var i1 = 0u;
    var i2 = 0u;
    for (var k = i32(p.rank) - 1; k >= 0; k = k - 1) {
        let q = u32(k) >> 2u;
        let r = u32(k) & 3u;
        let d = p.dims[q][r];
        let c = rem % d;
        rem = rem / d;
        i0 = i0 + c * p.s0[q][r];
        i1 = i1 + c * p.s1[q][r];
        i2 = i2 + c * p.s2[q][r];
    }";

/// One collapsed axis: the stride is 1 for a same-shape operand and 0 for a broadcast scalar.
const FLAT_INDEX: &str = "let i0 = e * p.s0[0].x;
    let i1 = e * p.s1[0].x;
    let i2 = e * p.s2[0].x;";

/// The flat module of `kind` for an output of exactly one element: its packed (1- and 2-byte)
/// store writes the whole word with `atomicStore` instead of OR-ing into a zeroed word, so
/// the output needs no zeroing dispatch first (the word's other bytes are padding). A loop's
/// condition, a one-element Bool computed every iteration, is the case this is for.
pub fn module_single(kind: ElemKind, ins: &[DType], out: DType) -> Option<Result<String, String>> {
    let src = module_indexed(kind, ins, out, Indexing::Flat)?;
    // `st_out` is `packed_store("out", out)`: the only write of `out`.
    Some(src.map(|m| m.replace("atomicOr(&out[", "atomicStore(&out[")))
}

/// [`module`] with an explicit [`Indexing`] form.
pub fn module_indexed(kind: ElemKind, ins: &[DType], out: DType, indexing: Indexing) -> Option<Result<String, String>> {
    let e = expr(kind, ins, out)?;
    let names = ["a", "b", "c"];
    let mut tensors = String::new();
    let mut loads = String::new();
    for (k, &d) in ins.iter().enumerate() {
        tensors += &tensor_binding(&format!("x{k}"), 1 + k as u32, d, Access::Read);
        loads += &format!("let {} = ld_x{k}(i{k});\n    ", names.get(k)?);
    }
    tensors += &tensor_binding("out", 1 + ins.len() as u32, out, Access::Write);
    let body = format!("{loads}st_out(e, {e});");
    let index = match indexing {
        Indexing::Strided => STRIDED_INDEX,
        Indexing::Flat => FLAT_INDEX,
    };
    let rendered = render(ELEMENTWISE, &[("TENSORS", &tensors), ("INDEX", index), ("BODY", &body)]);
    Some(rendered.map(|m| {
        let mut parts: Vec<&str> = helpers(kind, ins, out);
        parts.push(&m);
        crate::module(&parts)
    }))
}
