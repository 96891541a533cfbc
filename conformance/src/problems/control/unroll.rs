//! A problem's graph without control flow: `If` replaced by the branch its condition selects,
//! `While` by as many copies of its body as it runs, `Scan` by one copy per step (slices by
//! `Narrow`, stacks by `Concat`), nested bodies likewise. Conditions are computed by running the
//! part of the plain graph built so far on a backend (the reference), so data-dependent trip
//! counts and branches unroll exactly as the semantics say (§2.13, §2.10.7).

use crate::problem::Problem;
use backend_api::op::{DimSpec, IfAttrs, NarrowAttrs, ScanAttrs, WhileAttrs};
use backend_api::{
    bail, Backend, CompileOptions, Graph, Node, NodeId, Op, Result, Signature, Tensor, TensorType, TensorView, Value,
};
use std::sync::Arc;

/// What unrolling met, counted over every control op of the problem, nested ones included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// `If`s whose condition was true.
    pub then_taken: usize,
    /// `If`s whose condition was false.
    pub else_taken: usize,
    /// Bodies run by each `While`.
    pub while_trips: Vec<u64>,
    /// `While`s with `max_iterations = 0`.
    pub while_zero_bound: usize,
    /// `While`s whose condition was false at the start.
    pub while_false_at_start: usize,
    /// `While`s stopped by `max_iterations` while the condition still held.
    pub while_cut: usize,
    /// Steps of each `Scan`.
    pub scan_lengths: Vec<u64>,
    /// Deepest nesting of control ops (1: the problem's op has no control op in its bodies).
    pub depth: usize,
}

/// A plain graph and what unrolling met.
#[derive(Clone, Debug)]
pub struct Unrolled {
    /// The graph without control ops; same inputs, params (those still used) and outputs.
    pub graph: Graph,
    /// Branches taken, trips, lengths, nesting.
    pub trace: Trace,
}

/// Unrolls `p.graph`, evaluating conditions on `oracle` with `p`'s inputs and params.
pub fn unroll(p: &Problem, oracle: &dyn Backend) -> Result<Unrolled> {
    let mut plain = Plain { nodes: Vec::new(), problem: p, oracle, trace: Trace::default(), level: 0 };
    let outs = plain.graph(&p.graph, None)?;
    let graph = Graph::from_parts(plain.nodes, outs)?;
    Ok(Unrolled { graph, trace: plain.trace })
}

/// Runs `graph` on `backend` with the inputs and params of `p` that it declares (an unrolled
/// graph may lack some: the branch not taken, a loop that never ran).
pub fn run_with(backend: &dyn Backend, graph: &Graph, p: &Problem) -> Result<Vec<Tensor>> {
    let sig = Signature::of(graph);
    let mut exe = backend.compile(graph, &CompileOptions::default())?;
    for (name, t) in p.params.iter().filter(|(n, _)| sig.params.iter().any(|s| &s.name == n)) {
        exe.set_param(name, t.view())?;
    }
    let inputs: Vec<(&str, TensorView<'_>)> = p
        .inputs
        .iter()
        .filter(|(n, _)| sig.inputs.iter().any(|s| &s.name == n))
        .map(|(n, t)| (n.as_str(), t.view()))
        .collect();
    exe.run(&inputs)
}

/// The plain graph under construction.
struct Plain<'a> {
    nodes: Vec<Node>,
    problem: &'a Problem,
    oracle: &'a dyn Backend,
    trace: Trace,
    /// Control ops around the graph being copied.
    level: usize,
}

impl Plain<'_> {
    /// Adds a node, its output types inferred.
    fn add(&mut self, op: Op, ins: &[Value]) -> Result<Vec<Value>> {
        let types = ins.iter().map(|v| self.ty(*v)).collect::<Result<Vec<_>>>()?;
        let outputs = backend_api::infer::infer(&op, &types)?;
        let id = NodeId(self.nodes.len());
        let n = outputs.len();
        self.nodes.push(Node { op, inputs: ins.to_vec(), outputs });
        Ok((0..n).map(|output| Value { node: id, output }).collect())
    }

    fn add1(&mut self, op: Op, ins: &[Value]) -> Result<Value> {
        match self.add(op, ins)?.first() {
            Some(v) => Ok(*v),
            None => bail!(Arity, "an op without outputs"),
        }
    }

    fn ty(&self, v: Value) -> Result<TensorType> {
        match self.nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output)) {
            Some(t) => Ok(t.clone()),
            None => bail!(Arity, "value {v} does not exist in the plain graph"),
        }
    }

    /// The value of `v`: the plain graph so far, with `v` as its output, run on the oracle.
    fn eval(&self, v: Value) -> Result<Tensor> {
        let g = Graph::from_parts(self.nodes.clone(), vec![v])?;
        let outs = run_with(self.oracle, &g, self.problem)?;
        match outs.into_iter().next() {
            Some(t) => Ok(t),
            None => bail!(Arity, "the oracle returned no output"),
        }
    }

    /// Whether the one-element Bool `v` is true.
    fn truth(&self, v: Value) -> Result<bool> {
        match self.eval(v)?.bytes().first() {
            Some(&b) => Ok(b != 0),
            None => bail!(Shape, "a condition without an element"),
        }
    }

    /// Copies `g`, its `Input` nodes replaced by `args` (kept as inputs when `None`: the
    /// problem's graph), control ops unrolled; returns the copies of its outputs.
    fn graph(&mut self, g: &Graph, args: Option<&[Value]>) -> Result<Vec<Value>> {
        let mut values: Vec<Vec<Value>> = Vec::with_capacity(g.nodes().len());
        let mut next_arg = args.map(|a| a.iter());
        for node in g.nodes() {
            let ins = super::func::lookup(&values, &node.inputs)?;
            let outs = match (&node.op, next_arg.as_mut()) {
                (Op::Input(a), Some(it)) => match it.next() {
                    Some(v) => vec![*v],
                    None => bail!(Arity, "no value for body input {:?}", a.name),
                },
                (Op::If(a), _) => self.nested(|p| p.if_(a, &ins))?,
                (Op::While(a), _) => self.nested(|p| p.while_(a, &ins))?,
                (Op::Scan(a), _) => self.nested(|p| p.scan(a, &ins))?,
                (op, _) => self.add(op.clone(), &ins)?,
            };
            values.push(outs);
        }
        super::func::lookup(&values, g.outputs())
    }

    /// Runs `f` one nesting level deeper, recording the depth reached.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<Vec<Value>>) -> Result<Vec<Value>> {
        self.level += 1;
        self.trace.depth = self.trace.depth.max(self.level);
        let r = f(self);
        self.level -= 1;
        r
    }

    fn if_(&mut self, a: &IfAttrs, ins: &[Value]) -> Result<Vec<Value>> {
        let Some((&cond, captures)) = ins.split_first() else { bail!(Arity, "If without a condition") };
        if self.truth(cond)? {
            self.trace.then_taken += 1;
            self.graph(&a.then_graph, Some(captures))
        } else {
            self.trace.else_taken += 1;
            self.graph(&a.else_graph, Some(captures))
        }
    }

    fn while_(&mut self, a: &WhileAttrs, ins: &[Value]) -> Result<Vec<Value>> {
        let mut v = ins.to_vec();
        let mut trips = 0u64;
        self.trace.while_zero_bound += usize::from(a.max_iterations == 0);
        while trips < a.max_iterations {
            if !self.cond(a, &v)? {
                self.trace.while_false_at_start += usize::from(trips == 0);
                break;
            }
            v = self.graph(&a.body_graph, Some(&v))?;
            trips += 1;
        }
        if trips == a.max_iterations && trips > 0 {
            // Whether the bound cut the loop short: the condition once more, its nodes dropped.
            let len = self.nodes.len();
            let more = self.cond(a, &v);
            self.nodes.truncate(len);
            self.trace.while_cut += usize::from(more?);
        }
        self.trace.while_trips.push(trips);
        Ok(v)
    }

    /// The condition graph on `v`, computed.
    fn cond(&mut self, a: &WhileAttrs, v: &[Value]) -> Result<bool> {
        let c = self.graph(&a.cond_graph, Some(v))?;
        match c.first() {
            Some(&c) => self.truth(c),
            None => bail!(Subgraph, "While cond_graph without an output"),
        }
    }

    fn scan(&mut self, a: &ScanAttrs, ins: &[Value]) -> Result<Vec<Value>> {
        let (nc, nb) = (a.num_carry as usize, a.num_bcast as usize);
        if ins.len() < nc + nb {
            bail!(Arity, "Scan with {} inputs for {nc} carries and {nb} broadcast inputs", ins.len());
        }
        let (mut carry, rest) = (ins[..nc].to_vec(), &ins[nc..]);
        let (bcast, xs) = rest.split_at(nb);
        let length = a.length as usize;
        let types = super::func::output_types(&a.body);
        let mut rows: Vec<Vec<Value>> = vec![Vec::new(); length];
        let mut traj: Vec<Vec<Value>> = vec![Vec::new(); length];
        for s in 0..length {
            let t = if a.reverse { length - 1 - s } else { s };
            let mut args = carry.clone();
            args.extend_from_slice(bcast);
            for &x in xs {
                args.push(self.slice(x, t)?);
            }
            let outs = self.graph(&a.body, Some(&args))?;
            carry = outs[..nc.min(outs.len())].to_vec();
            rows[t] = outs[nc.min(outs.len())..].to_vec();
            traj[t] = carry.clone();
        }
        self.trace.scan_lengths.push(a.length);
        let mut outs = carry;
        for (k, ty) in types.iter().enumerate().skip(nc) {
            outs.push(self.stack(rows.iter().map(|r| r.get(k - nc).copied()), ty)?);
        }
        if a.save_trajectory {
            for (k, ty) in types.iter().enumerate().take(nc) {
                outs.push(self.stack(traj.iter().map(|r| r.get(k).copied()), ty)?);
            }
        }
        Ok(outs)
    }

    /// Row `t` of `x` without its leading axis.
    fn slice(&mut self, x: Value, t: usize) -> Result<Value> {
        let dims = self.ty(x)?.dims()?;
        let row = self.add1(Op::Narrow(NarrowAttrs { axis: 0, start: t, len: 1, step: 1 }), &[x])?;
        self.add1(reshape(dims.get(1..).unwrap_or_default()), &[row])
    }

    /// The rows (in order, each of type `ty`) stacked along a new leading axis; a constant
    /// `[0, …]` when there are none.
    fn stack(&mut self, rows: impl Iterator<Item = Option<Value>>, ty: &TensorType) -> Result<Value> {
        let dims = ty.dims()?;
        let mut one = vec![1];
        one.extend(&dims);
        let mut parts = Vec::new();
        for r in rows {
            let Some(r) = r else { bail!(Arity, "a Scan step without its per-step value") };
            parts.push(self.add1(reshape(&one), &[r])?);
        }
        if parts.is_empty() {
            let mut empty = vec![0];
            empty.extend(&dims);
            let data: Arc<[u8]> = Arc::from(Vec::new());
            return self
                .add1(Op::Constant(backend_api::op::ConstantAttrs { dtype: ty.dtype, shape: empty, data }), &[]);
        }
        self.add1(Op::Concat { axis: 0 }, &parts)
    }
}

fn reshape(dims: &[usize]) -> Op {
    Op::Reshape { new_shape: dims.iter().map(|&d| DimSpec::Static(d)).collect() }
}
