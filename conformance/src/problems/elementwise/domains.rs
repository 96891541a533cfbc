//! Test domains of the elementwise sub-ops (§2.2.1, §2.2.2 tables), with the special values each
//! op defines. Exhaustive matches: a new sub-op does not compile until its domain is written.

use crate::values::{any_float, subnormals, FloatDomain, IntDomain, Piece, Values, IEEE_SPECIALS};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::DType;

const fn uni(lo: f64, hi: f64) -> Piece {
    Piece::Uniform(lo, hi)
}

const fn log_mag(lo: f64, hi: f64, signed: bool) -> Piece {
    Piece::LogMag { lo, hi, signed }
}

/// The float domain of a unary op for `dtype`; integer, Bool and C64 operands use "any".
pub fn unary(op: UnaryOp, dtype: DType) -> Values {
    let ieee = |pieces: &[Piece]| FloatDomain::new(pieces, IEEE_SPECIALS);
    let float = match op {
        // Ops that only move a value or its sign: anything, subnormals included.
        UnaryOp::Relu | UnaryOp::Neg | UnaryOp::Abs => any_float(dtype).with(&subnormals(dtype)),
        UnaryOp::Sign => any_float(dtype),
        UnaryOp::Not => any_float(dtype),
        UnaryOp::Sigmoid | UnaryOp::Silu | UnaryOp::Softplus => ieee(&[uni(-30.0, 30.0)]),
        UnaryOp::Tanh => ieee(&[uni(-20.0, 20.0)]),
        UnaryOp::Exp if dtype == DType::F16 => ieee(&[uni(-10.0, 10.0)]).with(&[1000.0, -1000.0]),
        UnaryOp::Exp => ieee(&[uni(-80.0, 80.0)]).with(&[1000.0, -1000.0]),
        UnaryOp::Log => ieee(&[log_mag(1e-6, 1e6, false)]).with(&[-1.0, -1e-3]),
        UnaryOp::Sqrt => ieee(&[uni(0.0, 1e6), log_mag(1e-6, 1e6, false)]).with(&[-1.0]),
        UnaryOp::Rsqrt => ieee(&[log_mag(1e-6, 1e6, false)]).with(&[-1.0]),
        UnaryOp::Gelu | UnaryOp::GeluApprox => ieee(&[uni(-10.0, 10.0)]),
        UnaryOp::Round => {
            ieee(&[uni(-1e4, 1e4), Piece::Halves(1e4), Piece::Halves(4.0)]).with(&[-0.4, -0.5, 0.5, 1.5, 2.5, -2.5])
        }
        UnaryOp::Floor | UnaryOp::Ceil => {
            ieee(&[uni(-1e4, 1e4), Piece::Halves(10.0), Piece::Ints(100)]).with(&[-0.5, 0.5])
        }
        UnaryOp::Reciprocal => ieee(&[log_mag(1e-6, 1e6, true)]),
        UnaryOp::Sin | UnaryOp::Cos => ieee(&[uni(-10.0, 10.0)]),
        UnaryOp::Tan => ieee(&[uni(-10.0, 10.0)]).accepting(|x| x.cos().abs() >= 0.1),
        UnaryOp::Atan => ieee(&[uni(-1e3, 1e3)]),
        UnaryOp::Erf => ieee(&[uni(-6.0, 6.0)]),
    };
    Values::floats(float)
}

/// How the operands of a binary op are drawn.
#[derive(Clone, Debug)]
pub enum BinaryDomain {
    /// Each operand independently from its own domain.
    Independent(Values, Values),
    /// Both operands from one small pool of values, so that ties and equal operands occur.
    Pooled(Values),
    /// `Rem`/`Mod` on floats: `|a/b| ≤ 1000` and `a/b` at least 1e−3 away from an integer.
    FloatRemainder,
    /// `Pow` on floats: the two domains of the spec and the C99 special cases.
    FloatPow,
}

/// The operand domains of a binary op for `dtype`.
pub fn binary(op: BinaryOp, dtype: DType) -> BinaryDomain {
    let any = Values::any(dtype, false);
    let int_or = |float: Values| if dtype.is_int() { any.clone() } else { float };
    match op {
        BinaryOp::Add | BinaryOp::Sub => BinaryDomain::Independent(any.clone(), any),
        BinaryOp::Mul | BinaryOp::Div if dtype == DType::C64 => {
            BinaryDomain::Independent(complex_products(), complex_products().with_zero_divisor(op))
        }
        BinaryOp::Mul => BinaryDomain::Independent(any.clone(), any),
        BinaryOp::Div => {
            let d = Values::floats(FloatDomain::new(&[log_mag(1e-3, 1e3, true), uni(-10.0, 10.0)], IEEE_SPECIALS));
            BinaryDomain::Independent(int_or(d.clone()), int_or(d))
        }
        BinaryOp::Rem | BinaryOp::Mod if dtype.is_int() => BinaryDomain::Independent(any.clone(), any),
        BinaryOp::Rem | BinaryOp::Mod => BinaryDomain::FloatRemainder,
        BinaryOp::Pow if dtype.is_int() => BinaryDomain::Independent(
            Values { float: any_float(dtype), int: IntDomain::Range(-10, 10) },
            Values { float: any_float(dtype), int: IntDomain::Range(-5, 70) },
        ),
        BinaryOp::Pow => BinaryDomain::FloatPow,
        BinaryOp::Max | BinaryOp::Min => BinaryDomain::Pooled(Values::any(dtype, true)),
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => BinaryDomain::Independent(any.clone(), any),
    }
}

/// C64 `Mul`/`Div` components of the form `k·2^e` with `|k| < 2^11` and `e ∈ [−20, 30]`, i.e.
/// magnitudes from about 1e−6 to 2e12 (inside the spec's 1e15). Their products are exact in f32,
/// so `p·r − q·s` and friends are rounded once whatever the evaluation order (with or without a
/// fused multiply-add). With arbitrary f32 components the subtraction of two rounded products
/// cancels, and two correct f32 evaluations can differ far beyond Close.
fn complex_products() -> Values {
    Values::floats(FloatDomain::new(
        &[Piece::Halves(64.0), Piece::Ints(127), Piece::Dyadic { bits: 11, lo: -20, hi: 30 }],
        &[0.0],
    ))
}

trait ZeroDivisor {
    fn with_zero_divisor(self, op: BinaryOp) -> Values;
}

impl ZeroDivisor for Values {
    /// Division by `0 + 0i` is defined (IEEE components); make it likely enough to be seen.
    fn with_zero_divisor(mut self, op: BinaryOp) -> Values {
        if op == BinaryOp::Div {
            self.float = self.float.with(&[0.0, -0.0]);
        }
        self
    }
}

/// Specials of float `Pow` operands (C99 Annex F cases).
pub const POW_BASE_SPECIALS: &[f64] =
    &[0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 2.0, -2.0, 0.5, -0.5];
/// Specials of float `Pow` exponents.
pub const POW_EXP_SPECIALS: &[f64] =
    &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5];

/// Float `Pow` operand domains: scheme A (`a ∈ [0.01, 100]`, `b ∈ [−4, 4]`, F16 `[−2, 2]` so
/// results stay finite) or scheme B (`|a| ∈ [0.1, 10]` with integer `b ∈ [−4, 4]`).
pub fn pow(dtype: DType, scheme_b: bool) -> (Values, Values) {
    let (a, b) = if scheme_b {
        (vec![log_mag(0.1, 10.0, true)], vec![Piece::Ints(4)])
    } else {
        let e = if dtype == DType::F16 { 2.0 } else { 4.0 };
        (vec![log_mag(0.01, 100.0, false)], vec![uni(-e, e)])
    };
    (Values::floats(FloatDomain::new(&a, POW_BASE_SPECIALS)), Values::floats(FloatDomain::new(&b, POW_EXP_SPECIALS)))
}

/// Specials of float `Rem`/`Mod` dividends and divisors (all defined by §2.2.2).
pub const REM_A_SPECIALS: &[f64] = &[f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.0, -0.0];
/// Divisor specials.
pub const REM_B_SPECIALS: &[f64] = &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];

/// Fma operands: products within ±4 so that a double rounding (allowed) stays inside Close.
pub fn fma() -> (Values, Values, Values) {
    let ab = Values::floats(FloatDomain::new(&[uni(-2.0, 2.0)], IEEE_SPECIALS).with(&[1.0, -1.0]));
    let c = Values::floats(FloatDomain::new(&[uni(-4.0, 4.0)], IEEE_SPECIALS));
    (ab.clone(), ab, c)
}

/// Compare operands: any value (no subnormals: a flushed subnormal changes a Bool result).
pub fn compare(dtype: DType) -> Values {
    Values::any(dtype, false)
}
