//! [`Func`]: a small graph with declared inputs, example values for them and the params it
//! declares, the unit the control-flow generators compose; [`FuncBuilder`] makes one, inlining
//! other funcs; [`Class`] says how far its results may be trusted by what consumes them.

use backend_api::op::UnaryOp;
use backend_api::spec::{tolerance_for, Tolerance};
use backend_api::{DType, Graph, GraphBuilder, Op, Result, Tensor, TensorType, Value};

/// A function graph: its `Input` nodes (in order) are its parameters, its outputs its results.
/// `args` holds one example value per input (the data the problem finally feeds), `params` the
/// `Param`s its nodes and nested bodies declare (names unique across the problem).
#[derive(Clone, Debug)]
pub(crate) struct Func {
    /// The graph.
    pub graph: Graph,
    /// One example value per declared input.
    pub args: Vec<Tensor>,
    /// Declared params with their data.
    pub params: Vec<(String, Tensor)>,
}

impl Func {
    /// The declared input types, in order.
    pub fn input_types(&self) -> Vec<TensorType> {
        self.args.iter().map(|t| TensorType::new(t.dtype(), t.shape())).collect()
    }

    /// The output types, in order.
    pub fn output_types(&self) -> Vec<TensorType> {
        output_types(&self.graph)
    }

    /// How its results may be used.
    pub fn class(&self) -> Class {
        Class::of(&self.graph)
    }
}

/// The output types of a graph, in order.
pub(crate) fn output_types(g: &Graph) -> Vec<TensorType> {
    g.outputs().iter().filter_map(|v| g.value_type(*v).cloned()).collect()
}

/// How far the results of a graph can be trusted by what consumes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Class {
    /// Every op is Exact for its output dtype: every backend gives the same bits (up to flushed
    /// subnormals), so the results may feed casts, comparisons and loop iterations.
    pub exact: bool,
    /// No op turns a float input into something discontinuous in it (a comparison, a cast to an
    /// integer, a rounding): a backend that flushes subnormal inputs (which the spec allows)
    /// gives results within tolerance, so the graph may consume another graph's float results.
    pub safe: bool,
    /// Every op's class is at most Approx and not magnitude-scaled: the class the control-flow
    /// rows are compared with (`If`, `While`, `Scan` are Approx, §3) covers its results.
    pub tolerable: bool,
}

impl Class {
    /// The class of every node of `g`, bodies of control ops included (the ops themselves only
    /// pass values on).
    pub fn of(g: &Graph) -> Class {
        let mut c = Class { exact: true, safe: true, tolerable: true };
        for node in g.nodes() {
            let subs = node.op.subgraphs();
            if !subs.is_empty() {
                for s in subs {
                    c = c.and(Class::of(s));
                }
                continue;
            }
            for t in &node.outputs {
                let (tol, scaled) = tolerance_for(&node.op, t.dtype);
                c.exact &= tol == Tolerance::Exact;
                c.tolerable &= !scaled && tol <= Tolerance::Approx;
            }
            let float_in = node.inputs.iter().any(|v| g.value_type(*v).is_some_and(|t| floaty(t.dtype)));
            c.safe &= !float_in || continuous(&node.op);
        }
        c
    }

    fn and(self, o: Class) -> Class {
        Class { exact: self.exact && o.exact, safe: self.safe && o.safe, tolerable: self.tolerable && o.tolerable }
    }
}

/// Float or complex: the dtypes whose tiny values a backend may flush to zero.
pub(crate) fn floaty(d: DType) -> bool {
    d.is_float() || d == DType::C64
}

/// Ops whose results move by at most a tolerance when a subnormal input is flushed to zero.
fn continuous(op: &Op) -> bool {
    use backend_api::op::{BinaryOp as B, ReduceOp as R};
    match op {
        Op::Reshape { .. }
        | Op::Transpose { .. }
        | Op::Narrow(_)
        | Op::Concat { .. }
        | Op::Expand { .. }
        | Op::Reverse { .. }
        | Op::Pad(_)
        | Op::Where
        | Op::Softmax { .. }
        | Op::RmsNorm(_)
        | Op::LayerNorm(_) => true,
        Op::Cast { to } => floaty(*to),
        Op::Binary(b) => matches!(b, B::Add | B::Sub | B::Max | B::Min),
        Op::Reduce(r) => matches!(r.op, R::Max | R::Min | R::Sum | R::Mean),
        Op::Unary(u) => {
            matches!(u, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu | UnaryOp::Exp | UnaryOp::Tanh | UnaryOp::Sigmoid)
        }
        _ => false,
    }
}

/// Builds a [`Func`]: inputs are declared with their example value, other funcs are inlined.
#[derive(Default)]
pub(crate) struct FuncBuilder {
    /// The graph under construction.
    pub gb: GraphBuilder,
    args: Vec<Tensor>,
    params: Vec<(String, Tensor)>,
}

impl FuncBuilder {
    /// An empty func.
    pub fn new() -> FuncBuilder {
        FuncBuilder::default()
    }

    /// Declares the next input, of the type of `example` (named `a0, a1, …`: names only serve
    /// diagnostics in a body, §2.13).
    pub fn arg(&mut self, example: Tensor) -> Result<Value> {
        let v = self.gb.input(&format!("a{}", self.args.len()), example.dtype(), example.shape())?;
        self.args.push(example);
        Ok(v)
    }

    /// Declares a param (its name must be unique in the problem).
    pub fn param(&mut self, name: &str, data: Tensor) -> Result<Value> {
        let v = self.gb.param(name, data.dtype(), data.shape())?;
        if !self.params.iter().any(|(n, _)| n == name) {
            self.params.push((name.to_string(), data));
        }
        Ok(v)
    }

    /// The type of a value built so far.
    pub fn ty(&self, v: Value) -> Result<TensorType> {
        self.gb.value_type(v).cloned()
    }

    /// Inlines `f` on `args` (one per declared input) and returns its outputs.
    pub fn call(&mut self, f: &Func, args: &[Value]) -> Result<Vec<Value>> {
        for (name, t) in &f.params {
            if !self.params.iter().any(|(n, _)| n == name) {
                self.params.push((name.clone(), t.clone()));
            }
        }
        inline(&mut self.gb, &f.graph, args)
    }

    /// Finishes the func with `outputs`.
    pub fn finish(self, outputs: &[Value]) -> Result<Func> {
        let FuncBuilder { mut gb, args, params } = self;
        for &v in outputs {
            gb.output(v)?;
        }
        Ok(Func { graph: gb.build()?, args, params })
    }
}

/// Copies the nodes of `g` into `gb`, its `Input` nodes replaced by `args` (in order), and
/// returns the copies of its outputs. Control ops are copied whole, bodies included.
pub(crate) fn inline(gb: &mut GraphBuilder, g: &Graph, args: &[Value]) -> Result<Vec<Value>> {
    let mut values: Vec<Vec<Value>> = Vec::with_capacity(g.nodes().len());
    let mut next_arg = args.iter();
    for node in g.nodes() {
        let outs = match &node.op {
            Op::Input(a) => match next_arg.next() {
                Some(v) => vec![*v],
                None => backend_api::bail!(Arity, "inlining: no argument for input {:?}", a.name),
            },
            op => {
                let ins = lookup(&values, &node.inputs)?;
                gb.add(op.clone(), &ins)?
            }
        };
        values.push(outs);
    }
    lookup(&values, g.outputs())
}

/// The copies of `vs`, given the copies of every node so far.
pub(crate) fn lookup(values: &[Vec<Value>], vs: &[Value]) -> Result<Vec<Value>> {
    vs.iter()
        .map(|v| match values.get(v.node.0).and_then(|o| o.get(v.output)) {
            Some(c) => Ok(*c),
            None => backend_api::bail!(Arity, "value {v} refers to a node not copied yet"),
        })
        .collect()
}
