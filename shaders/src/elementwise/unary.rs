//! Unary expressions (§2.2.1). Float ops call `<op>_f32` (F32/F16/BF16) or `<op>_f64` from the
//! maths files; integer ops are written inline where WGSL's operator already has the spec's
//! meaning (wrapping `0 - a`, `~a`, `max`).

use super::Class;
use backend_api::op::UnaryOp;
use backend_api::DType;

/// The WGSL expression of `op` on operand `a` of dtype `d`; `None` when the spec does not allow `d`.
pub(super) fn expr(op: UnaryOp, d: DType) -> Option<String> {
    if !op.dtypes().contains(d) {
        return None;
    }
    let c = Class::of(d);
    let call = |name: &str| Some(format!("{name}_{}(a)", c.suffix()));
    let float = |name: &str| if c.is_float() { call(name) } else { None };
    let lit = |s: &str| Some(s.to_string());
    match op {
        UnaryOp::Relu => match c {
            Class::F32 | Class::F64 => call("relu"),
            Class::I32 => lit("max(a, 0)"),
            Class::I64 => lit("max(a, 0li)"),
            Class::U32 => lit("a"),
            Class::Bool | Class::C64 => None,
        },
        UnaryOp::Neg => match c {
            Class::F32 | Class::F64 | Class::C64 => call("neg"),
            Class::I32 => lit("0 - a"),
            Class::I64 => lit("0li - a"),
            Class::U32 => lit("0u - a"),
            Class::Bool => None,
        },
        UnaryOp::Abs => match c {
            Class::F32 | Class::F64 | Class::I32 | Class::I64 => call("abs"),
            Class::U32 => lit("a"),
            Class::Bool | Class::C64 => None,
        },
        UnaryOp::Sign => match c {
            Class::F32 | Class::F64 | Class::I32 | Class::I64 => call("sign"),
            Class::U32 => lit("min(a, 1u)"),
            Class::Bool | Class::C64 => None,
        },
        UnaryOp::Not => match c {
            Class::I32 | Class::U32 | Class::I64 => lit("~a"),
            Class::Bool => lit("a ^ 1u"),
            Class::F32 | Class::F64 | Class::C64 => None,
        },
        UnaryOp::Sigmoid => float("sigmoid"),
        UnaryOp::Tanh => float("tanh"),
        UnaryOp::Exp => float("exp"),
        UnaryOp::Log => float("log"),
        UnaryOp::Sqrt => float("sqrt"),
        UnaryOp::Rsqrt => float("rsqrt"),
        UnaryOp::Gelu => float("gelu"),
        UnaryOp::GeluApprox => float("gelu_approx"),
        UnaryOp::Silu => float("silu"),
        UnaryOp::Round => float("round"),
        UnaryOp::Floor => float("floor"),
        UnaryOp::Ceil => float("ceil"),
        UnaryOp::Reciprocal => float("reciprocal"),
        UnaryOp::Sin => float("sin"),
        UnaryOp::Cos => float("cos"),
        UnaryOp::Tan => float("tan"),
        UnaryOp::Atan => float("atan"),
        UnaryOp::Erf => float("erf"),
        UnaryOp::Softplus => float("softplus"),
    }
}
