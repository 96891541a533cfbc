//! Variants of the elementwise family: one expression per (op, dtype), rendered into
//! `elementwise.wgsl` with the tensor bindings.

use crate::{render, tensor_binding, Access, COMMON, ELEMENTWISE, MATH};
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::DType;

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

/// The WGSL expression of `kind` over operands `a`, `b`, `c` (register types of `ins`), producing
/// the register type of `out`; `None` when this (op, dtype) has no GPU expression yet.
pub fn expr(kind: ElemKind, ins: &[DType], out: DType) -> Option<String> {
    let d = *ins.first()?;
    let s = match (kind, d) {
        (ElemKind::Unary(UnaryOp::Exp), DType::F32 | DType::F16 | DType::BF16) => "exp_f32(a)".to_string(),
        (ElemKind::Unary(UnaryOp::Relu), DType::F32 | DType::F16 | DType::BF16) => "relu_f32(a)".to_string(),
        (ElemKind::Binary(BinaryOp::Add), DType::F32 | DType::F16 | DType::BF16 | DType::I32 | DType::U32) => {
            "a + b".to_string()
        }
        (ElemKind::Binary(BinaryOp::Max), DType::F32 | DType::F16 | DType::BF16) => "max_f32(a, b)".to_string(),
        _ => return None,
    };
    let _ = out;
    Some(s)
}

/// Renders the complete module of one variant; `None` when [`expr`] has none.
pub fn module(kind: ElemKind, ins: &[DType], out: DType) -> Option<Result<String, String>> {
    let e = expr(kind, ins, out)?;
    let names = ["a", "b", "c"];
    let mut tensors = String::new();
    let mut loads = String::new();
    for (k, &d) in ins.iter().enumerate() {
        tensors += &tensor_binding(&format!("x{k}"), 1 + k as u32, d, Access::Read);
        loads += &format!("let {} = ld_x{k}(i{k});\n    ", names[k]);
    }
    tensors += &tensor_binding("out", 1 + ins.len() as u32, out, Access::Write);
    let body = format!("{loads}st_out(e, {e});");
    Some(render(ELEMENTWISE, &[("TENSORS", &tensors), ("BODY", &body)]).map(|m| crate::module(&[COMMON, MATH, &m])))
}
