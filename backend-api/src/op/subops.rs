//! The nested op enumerations (§2.2.1–2.2.3, §2.5.1), each defined by one table row per sub-op:
//! name, allowed dtypes and tolerance class. Everything else (backends, conformance, the report)
//! reads these tables; nothing lists the sub-ops twice.

use crate::spec::Tolerance;
use crate::{DType, DTypeSet};

macro_rules! subop_enum {
    ($(#[$m:meta])* $enum:ident { $($(#[$vm:meta])* $v:ident => $dt:expr, $tol:ident;)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum $enum { $($(#[$vm])* $v,)* }

        impl $enum {
            /// Every sub-op, in the spec's order.
            pub const ALL: &'static [$enum] = &[$($enum::$v,)*];

            /// The spec's name (`Exp`, `Add`, …).
            pub const fn name(self) -> &'static str {
                match self { $($enum::$v => stringify!($v),)* }
            }

            /// The dtypes the sub-op accepts.
            pub const fn dtypes(self) -> DTypeSet {
                match self { $($enum::$v => $dt,)* }
            }

            /// The tolerance class for float outputs (integer outputs are always exact).
            pub const fn base_tolerance(self) -> Tolerance {
                match self { $($enum::$v => Tolerance::$tol,)* }
            }
        }
    };
}

const NUM: DTypeSet = DTypeSet::NUMERIC;
const FLT: DTypeSet = DTypeSet::FLOAT;
const NUM_C64: DTypeSet = DTypeSet::NUMERIC.union(DTypeSet::C64);
const INT_BOOL: DTypeSet = DTypeSet::INT.union(DTypeSet::BOOL);

subop_enum! {
    /// Elementwise unary functions (§2.2.1).
    UnaryOp {
        /// `max(x, 0)`, NaN propagating.
        Relu => NUM, Exact;
        /// Logistic sigmoid.
        Sigmoid => FLT, Approx;
        /// Hyperbolic tangent.
        Tanh => FLT, Approx;
        /// `e^x`.
        Exp => FLT, Approx;
        /// Natural logarithm.
        Log => FLT, Approx;
        /// Square root.
        Sqrt => FLT, Close;
        /// `1/√x`.
        Rsqrt => FLT, Close;
        /// Negation (ints wrap; C64 negates both parts).
        Neg => NUM_C64, Exact;
        /// Magnitude.
        Abs => NUM, Exact;
        /// Exact-erf GELU.
        Gelu => FLT, Approx;
        /// Tanh-approximated GELU.
        GeluApprox => FLT, Approx;
        /// `x·σ(x)`.
        Silu => FLT, Approx;
        /// Round half to even.
        Round => FLT, Exact;
        /// Floor.
        Floor => FLT, Exact;
        /// Ceiling.
        Ceil => FLT, Exact;
        /// Sign (±0 and NaN kept).
        Sign => NUM, Exact;
        /// `1/x`.
        Reciprocal => FLT, Close;
        /// Sine.
        Sin => FLT, Loose;
        /// Cosine.
        Cos => FLT, Loose;
        /// Tangent.
        Tan => FLT, Loose;
        /// Arc tangent.
        Atan => FLT, Approx;
        /// Error function.
        Erf => FLT, Approx;
        /// `ln(1 + e^x)`, stable form.
        Softplus => FLT, Approx;
        /// Bitwise / logical not.
        Not => INT_BOOL, Exact;
    }
}

subop_enum! {
    /// Elementwise binary functions (§2.2.2).
    BinaryOp {
        /// `a + b`.
        Add => NUM_C64, Exact;
        /// `a − b`.
        Sub => NUM_C64, Exact;
        /// `a · b` (C64: Close).
        Mul => NUM_C64, Exact;
        /// `a / b` (floats Close; ints truncate, `/0 = 0`).
        Div => NUM_C64, Close;
        /// Truncated remainder (`fmod` for floats).
        Rem => NUM, Close;
        /// Floored modulo, sign of `b`.
        Mod => NUM, Close;
        /// Power (C99 Annex F for floats; §1.8 for ints).
        Pow => NUM, Approx;
        /// NaN-propagating maximum.
        Max => NUM, Exact;
        /// NaN-propagating minimum.
        Min => NUM, Exact;
        /// Bitwise / logical and.
        And => INT_BOOL, Exact;
        /// Bitwise / logical or.
        Or => INT_BOOL, Exact;
        /// Bitwise / logical xor.
        Xor => INT_BOOL, Exact;
    }
}

subop_enum! {
    /// Elementwise comparisons producing Bool (§2.2.3).
    CompareOp {
        /// `a == b`.
        Eq => DTypeSet::ALL, Exact;
        /// `a != b`.
        Ne => DTypeSet::ALL, Exact;
        /// `a < b`.
        Lt => NUM, Exact;
        /// `a <= b`.
        Le => NUM, Exact;
        /// `a > b`.
        Gt => NUM, Exact;
        /// `a >= b`.
        Ge => NUM, Exact;
    }
}

subop_enum! {
    /// Reductions over a set of axes (§2.5.1).
    ReduceOp {
        /// Sum (ints wrap); empty → 0.
        Sum => NUM, Approx;
        /// Mean; empty → NaN.
        Mean => FLT, Approx;
        /// NaN-propagating max; Bool: any.
        Max => DTypeSet::NUMERIC.union(DTypeSet::BOOL), Exact;
        /// NaN-propagating min; Bool: all.
        Min => DTypeSet::NUMERIC.union(DTypeSet::BOOL), Exact;
        /// Product (ints wrap); empty → 1.
        Prod => NUM, Approx;
    }
}

impl UnaryOp {
    /// Tolerance class for a float `dtype` output.
    pub fn tolerance(self, _dtype: DType) -> Tolerance {
        self.base_tolerance()
    }
}

impl BinaryOp {
    /// Tolerance class for an output of `dtype` (C64 `Mul` is Close; int ops are Exact).
    pub fn tolerance(self, dtype: DType) -> Tolerance {
        if dtype.is_int() || dtype == DType::Bool {
            return Tolerance::Exact;
        }
        match (self, dtype) {
            (BinaryOp::Mul, DType::C64) => Tolerance::Close,
            _ => self.base_tolerance(),
        }
    }
}

impl ReduceOp {
    /// Whether the float tolerance is magnitude-scaled (Sum, Mean).
    pub fn magnitude_scaled(self) -> bool {
        matches!(self, ReduceOp::Sum | ReduceOp::Mean)
    }
}
