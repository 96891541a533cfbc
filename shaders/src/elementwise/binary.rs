//! Binary (§2.2.2) and Compare (§2.2.3) expressions. Operators whose WGSL meaning is already the
//! spec's (wrapping `+ - *` on integers, IEEE `+ - *` on floats, bitwise ops, integer `max`/`min`)
//! are inline; everything with special cases calls `<op>_<class>` from the maths files.

use super::{Class, OPAQUE_ZERO};
use backend_api::op::{BinaryOp, CompareOp};
use backend_api::DType;

/// The WGSL expression of `op` on operands `a`, `b` of dtype `d`; `None` when `d` is not allowed.
pub(super) fn expr(op: BinaryOp, d: DType) -> Option<String> {
    if !op.dtypes().contains(d) {
        return None;
    }
    let c = Class::of(d);
    let call = |name: &str| format!("{name}_{}(a, b)", c.suffix());
    let e = match op {
        BinaryOp::Add => "a + b".to_string(),
        BinaryOp::Sub => "a - b".to_string(),
        BinaryOp::Mul if c == Class::C64 => format!("mul_c64(a, b, {OPAQUE_ZERO})"),
        // Products near BF16's smallest normal must not be flushed as f32 subnormals first.
        BinaryOp::Mul if d == DType::BF16 => format!("mul_bf16(a, b, {OPAQUE_ZERO})"),
        BinaryOp::Mul => "a * b".to_string(),
        BinaryOp::Div if c == Class::C64 => format!("div_c64(a, b, {OPAQUE_ZERO})"),
        BinaryOp::Div if d == DType::BF16 => format!("div_bf16(a, b, {OPAQUE_ZERO})"),
        BinaryOp::Div => call("div"),
        BinaryOp::Rem => call("rem"),
        BinaryOp::Mod => call("mod"),
        BinaryOp::Pow => call("pow"),
        BinaryOp::Max if c.is_float() => call("max"),
        BinaryOp::Max => "max(a, b)".to_string(),
        BinaryOp::Min if c.is_float() => call("min"),
        BinaryOp::Min => "min(a, b)".to_string(),
        BinaryOp::And => "a & b".to_string(),
        BinaryOp::Or => "a | b".to_string(),
        BinaryOp::Xor => "a ^ b".to_string(),
    };
    Some(e)
}

/// The Bool (u32 0/1) expression of comparison `op` on operands of dtype `d`. Float operators are
/// ordered comparisons (false with NaN); `Ne` is written `!(a == b)` because naga emits an ordered
/// not-equal, which is false for NaN.
pub(super) fn compare(op: CompareOp, d: DType) -> Option<String> {
    if !op.dtypes().contains(d) {
        return None;
    }
    let vector = Class::of(d) == Class::C64;
    let cond = match op {
        CompareOp::Eq if vector => "all(a == b)",
        CompareOp::Ne if vector => "!all(a == b)",
        CompareOp::Eq => "a == b",
        CompareOp::Ne => "!(a == b)",
        CompareOp::Lt => "a < b",
        CompareOp::Le => "a <= b",
        CompareOp::Gt => "a > b",
        CompareOp::Ge => "a >= b",
    };
    Some(format!("select(0u, 1u, {cond})"))
}
