//! [`GraphBuilder`] methods that add the ops of §2.6 (linear algebra).

use crate::op::*;
use crate::shape::canon_axis;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// Batched matrix product.
    pub fn matmul(&mut self, a: Value, b: Value) -> Result<Value> {
        self.add1(Op::MatMul, &[a, b])
    }
    /// General contraction (negative axes accepted).
    pub fn dot_general(
        &mut self,
        lhs: Value,
        rhs: Value,
        (lhs_batch, rhs_batch): (&[i64], &[i64]),
        (lhs_contract, rhs_contract): (&[i64], &[i64]),
    ) -> Result<Value> {
        let (rl, rr) = (self.rank(lhs)?, self.rank(rhs)?);
        let canon = |a: &[i64], r: usize| a.iter().map(|&x| canon_axis(x, r)).collect::<Result<Vec<_>>>();
        let a = DotGeneralAttrs {
            lhs_batch: canon(lhs_batch, rl)?,
            rhs_batch: canon(rhs_batch, rr)?,
            lhs_contract: canon(lhs_contract, rl)?,
            rhs_contract: canon(rhs_contract, rr)?,
        };
        self.add1(Op::DotGeneral(a), &[lhs, rhs])
    }
    /// `act(MatMul(a, b) + bias)`.
    pub fn fused_matmul_bias_act(&mut self, a: Value, b: Value, bias: Value, act: Option<UnaryOp>) -> Result<Value> {
        self.add1(Op::FusedMatMulBiasAct { activation: act }, &[a, b, bias])
    }

    /// `GroupedMatMul`: row `m` of `x [M, K]` times `w[expert[m]]` of `w [E, K, N]`.
    pub fn grouped_matmul(&mut self, x: Value, w: Value, expert: Value) -> Result<Value> {
        self.add1(Op::GroupedMatMul(GroupedMatMulAttrs {}), &[x, w, expert])
    }
    /// `QuantMatMul`: `x [..., K]` times the decoded `W[N, K]ᵀ`; `weights` as the format lists.
    pub fn quant_matmul(&mut self, x: Value, weights: &[Value], format: QuantFormat) -> Result<Value> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).collect();
        self.add1(Op::QuantMatMul(QuantMatMulAttrs { format }), &ins)
    }
    /// `QuantGroupedMatMul`: `weights` each with a leading expert dim, then `expert [M]`.
    pub fn quant_grouped_matmul(
        &mut self,
        x: Value,
        weights: &[Value],
        expert: Value,
        format: QuantFormat,
    ) -> Result<Value> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).chain([expert]).collect();
        self.add1(Op::QuantGroupedMatMul(QuantMatMulAttrs { format }), &ins)
    }
}
