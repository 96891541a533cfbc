//! `Fma` → Binary Mul + Binary Add (§2.2.5). F16/BF16 operands are widened to F32 first: the
//! product of two such values is exact in F32, so the F32 add is the op's one F32 rounding and the
//! cast back its final rounding, as the spec defines Fma for those dtypes. F32 and F64 round twice,
//! which the op's Close class allows.

use super::arg;
use crate::op::BinaryOp;
use crate::{DType, GraphBuilder, Result, Value};

/// `a·b + c` as `Add(Mul(a, b), c)`, in F32 for F16/BF16.
pub(crate) fn fma(g: &mut GraphBuilder, ins: &[Value]) -> Result<Vec<Value>> {
    let (a, b, c) = (arg(ins, 0)?, arg(ins, 1)?, arg(ins, 2)?);
    let dtype = g.value_type(a)?.dtype;
    if matches!(dtype, DType::F16 | DType::BF16) {
        let (a, b, c) = (g.cast(a, DType::F32)?, g.cast(b, DType::F32)?, g.cast(c, DType::F32)?);
        let p = g.binary(BinaryOp::Mul, a, b)?;
        let s = g.binary(BinaryOp::Add, p, c)?;
        return Ok(vec![g.cast(s, dtype)?]);
    }
    let p = g.binary(BinaryOp::Mul, a, b)?;
    Ok(vec![g.binary(BinaryOp::Add, p, c)?])
}
