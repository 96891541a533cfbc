//! [`GraphBuilder`] methods that add the ops of §2.10 (sequence models).

use super::two;
use crate::op::*;
use crate::{Graph, GraphBuilder, Result, Value};

impl GraphBuilder {
    fn cell(&mut self, op: Op, x: Value, weights: &[Value], states: &[Value]) -> Result<Vec<Value>> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).chain(states.iter().copied()).collect();
        self.add(op, &ins)
    }
    /// `Rnn`: `(y, h_n)`. `weights` in PyTorch order; `has_initial_state` is set from `h0`.
    pub fn rnn(
        &mut self,
        x: Value,
        weights: &[Value],
        h0: Option<Value>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value)> {
        let a = RecurrentAttrs { has_initial_state: h0.is_some(), linear_before_reset: true, ..attrs };
        two(self.cell(Op::Rnn(a), x, weights, &h0.into_iter().collect::<Vec<_>>())?)
    }
    /// `Gru`: `(y, h_n)`. `weights` in PyTorch order; `has_initial_state` is set from `h0`.
    pub fn gru(
        &mut self,
        x: Value,
        weights: &[Value],
        h0: Option<Value>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value)> {
        let a = RecurrentAttrs { has_initial_state: h0.is_some(), nonlinearity: RnnNonlinearity::Tanh, ..attrs };
        two(self.cell(Op::Gru(a), x, weights, &h0.into_iter().collect::<Vec<_>>())?)
    }
    /// `Lstm`: `(y, h_n, c_n)`. `initial` is `(h0, c0)`.
    pub fn lstm(
        &mut self,
        x: Value,
        weights: &[Value],
        initial: Option<(Value, Value)>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value, Value)> {
        let a = RecurrentAttrs {
            has_initial_state: initial.is_some(),
            nonlinearity: RnnNonlinearity::Tanh,
            linear_before_reset: true,
            ..attrs
        };
        let states: Vec<Value> = initial.map(|(h, c)| vec![h, c]).unwrap_or_default();
        let outs = self.cell(Op::Lstm(a), x, weights, &states)?;
        match outs[..] {
            [y, h, c] => Ok((y, h, c)),
            _ => crate::bail!(Arity, "Lstm produced {} outputs, expected 3", outs.len()),
        }
    }
    /// `SelectiveScan`: `(y, h_final)`.
    pub fn selective_scan(
        &mut self,
        x: Value,
        delta: Value,
        a: Value,
        b: Value,
        c: Value,
        h0: Option<Value>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [x, delta, a, b, c].into_iter().chain(h0).collect();
        two(self.add(Op::SelectiveScan(StateSpaceAttrs { has_initial_state: h0.is_some() }), &ins)?)
    }
    /// `Mamba2`: `(y, state)`.
    pub fn mamba2(
        &mut self,
        x: Value,
        dt: Value,
        a: Value,
        b: Value,
        c: Value,
        state0: Option<Value>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [x, dt, a, b, c].into_iter().chain(state0).collect();
        two(self.add(Op::Mamba2(StateSpaceAttrs { has_initial_state: state0.is_some() }), &ins)?)
    }
    /// `GatedDeltaNet`: `(o, state)`; `scale` `None` means `1/√Dk`.
    pub fn gated_delta_net(
        &mut self,
        (q, k, v): (Value, Value, Value),
        g: Value,
        beta: Value,
        state0: Option<Value>,
        scale: Option<f32>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [q, k, v, g, beta].into_iter().chain(state0).collect();
        let a = GatedDeltaNetAttrs { scale, has_initial_state: state0.is_some() };
        two(self.add(Op::GatedDeltaNet(a), &ins)?)
    }
    /// `Scan` of `body` over `length` steps: outputs final carries, stacked per-step values and
    /// (iff `save_trajectory`) stacked carries.
    pub fn scan(
        &mut self,
        body: Graph,
        length: u64,
        reverse: bool,
        (carries, bcast, xs): (&[Value], &[Value], &[Value]),
        save_trajectory: bool,
    ) -> Result<Vec<Value>> {
        let count = |v: &[Value]| u32::try_from(v.len()).unwrap_or(u32::MAX);
        let a = ScanAttrs {
            body,
            length,
            reverse,
            num_carry: count(carries),
            num_bcast: count(bcast),
            num_xs: count(xs),
            save_trajectory,
        };
        let ins: Vec<Value> = carries.iter().chain(bcast).chain(xs).copied().collect();
        self.add(Op::Scan(a), &ins)
    }
}
