//! `Fma` → Binary Mul + Binary Add (§2.2.5): two roundings instead of one, which the op's Close
//! class allows.

use super::arg;
use crate::op::BinaryOp;
use crate::{GraphBuilder, Result, Value};

/// `a·b + c` as `Add(Mul(a, b), c)`.
pub(crate) fn fma(g: &mut GraphBuilder, ins: &[Value]) -> Result<Vec<Value>> {
    let p = g.binary(BinaryOp::Mul, arg(ins, 0)?, arg(ins, 1)?)?;
    Ok(vec![g.binary(BinaryOp::Add, p, arg(ins, 2)?)?])
}
