//! [`GraphBuilder`] methods that add the ops of §2.2 (elementwise ops).

use crate::op::*;
use crate::{DType, GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `f(x)`.
    pub fn unary(&mut self, op: UnaryOp, x: Value) -> Result<Value> {
        self.add1(Op::Unary(op), &[x])
    }
    /// `g(a, b)` with broadcasting.
    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Result<Value> {
        self.add1(Op::Binary(op), &[a, b])
    }
    /// Bool comparison with broadcasting.
    pub fn compare(&mut self, op: CompareOp, a: Value, b: Value) -> Result<Value> {
        self.add1(Op::Compare(op), &[a, b])
    }
    /// `cond ? x : y`.
    pub fn where_(&mut self, cond: Value, x: Value, y: Value) -> Result<Value> {
        self.add1(Op::Where, &[cond, x, y])
    }
    /// `a·b + c`.
    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Result<Value> {
        self.add1(Op::Fma, &[a, b, c])
    }
    /// Value conversion.
    pub fn cast(&mut self, x: Value, to: DType) -> Result<Value> {
        self.add1(Op::Cast { to }, &[x])
    }
}
