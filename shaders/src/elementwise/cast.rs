//! Cast expressions (§2.2.6) for every (from, to) pair of dtypes. Registers: F16/BF16 values are
//! f32 and are rounded once by the store, so a conversion into them only has to produce the exact
//! value (F32, F16, BF16, C64 sources) or an f32 already rounded to the target's precision (integer
//! and F64 sources, whose rounding through f32 would happen twice). I8/U8/Bool targets keep the
//! low bits / 0-1 on store, so integer narrowing needs no code.

use super::Class;
use backend_api::DType;

/// Significant bits of a float32-family dtype (the integer rounding precision).
fn precision(to: DType) -> u32 {
    match to {
        DType::F16 => 11,
        DType::BF16 => 8,
        _ => 24,
    }
}

/// `a` (of `from`) as an f32 register holding a value of `to` ∈ {F32, F16, BF16}.
fn to_f32_family(from: DType, to: DType) -> String {
    let p = precision(to);
    match from {
        DType::F32 | DType::F16 | DType::BF16 => "a".to_string(),
        DType::C64 => "a.x".to_string(),
        DType::F64 => match to {
            DType::F16 => "f64_to_f16r(a)".to_string(),
            DType::BF16 => "f64_to_bf16r(a)".to_string(),
            _ => "f64_to_f32(a)".to_string(),
        },
        DType::I8 | DType::U8 | DType::Bool => "f32(a)".to_string(),
        DType::I32 => format!("i32_round_f32(a, {p}u)"),
        DType::U32 => format!("u32_round_f32(a, {p}u)"),
        DType::I64 => format!("i64_round_f32(a, {p}u)"),
    }
}

/// The float-to-integer helper for target `to`, by source register class.
fn float_to_int(from: DType, to: DType) -> String {
    let (src, arg) = match from {
        DType::F64 => ("f64", "a"),
        DType::C64 => ("f32", "a.x"),
        _ => ("f32", "a"),
    };
    let tgt = match to {
        DType::I32 => "i32",
        DType::I8 => "i8",
        DType::U32 => "u32",
        DType::U8 => "u8",
        _ => "i64",
    };
    format!("{src}_to_{tgt}_sat({arg})")
}

/// The expression converting `a` (register of `from`) to the register of `to`.
pub(super) fn expr(from: DType, to: DType) -> String {
    let fc = Class::of(from);
    let s = match to {
        DType::F32 | DType::F16 | DType::BF16 => return to_f32_family(from, to),
        DType::F64 => match from {
            DType::F32 | DType::F16 | DType::BF16 => "f32_to_f64(a)",
            DType::C64 => "f32_to_f64(a.x)",
            DType::F64 => "a",
            DType::I64 => "i64_to_f64(a)",
            DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool => "f64(a)",
        },
        DType::C64 if from == DType::C64 => "a",
        DType::C64 => return format!("vec2<f32>({}, 0.0)", to_f32_family(from, DType::F32)),
        DType::Bool => match fc {
            Class::F32 => "f32_to_bool(a)",
            Class::F64 => "f64_to_bool(a)",
            Class::C64 => "c64_to_bool(a)",
            Class::I32 => "select(0u, 1u, a != 0)",
            Class::I64 => "select(0u, 1u, a != 0li)",
            Class::U32 | Class::Bool => "select(0u, 1u, a != 0u)",
        },
        DType::I32 | DType::I8 => match fc {
            Class::I32 => "a",
            Class::I64 => "i32(a)",
            Class::U32 | Class::Bool => "bitcast<i32>(a)",
            Class::F32 | Class::F64 | Class::C64 => return float_to_int(from, to),
        },
        DType::U32 | DType::U8 => match fc {
            Class::U32 | Class::Bool => "a",
            Class::I64 => "u32(a)",
            Class::I32 => "bitcast<u32>(a)",
            Class::F32 | Class::F64 | Class::C64 => return float_to_int(from, to),
        },
        DType::I64 => match fc {
            Class::I64 => "a",
            Class::I32 => "i64(a)",
            Class::U32 | Class::Bool => "u32_to_i64(a)",
            Class::F32 | Class::F64 | Class::C64 => return float_to_int(from, to),
        },
    };
    s.to_string()
}
