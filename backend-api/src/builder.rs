//! [`GraphBuilder`]: adds nodes with inference and validation at build time (§1.3).

use crate::graph::{Names, Node, NodeId};
use crate::infer::infer;
use crate::op::*;
use crate::shape::{canon_axes, canon_axis};
use crate::spec::op_label;
use crate::{bail, DType, Graph, Result, Shape, Tensor, TensorType, Value};
use std::sync::Arc;

/// Builds a [`Graph`] node by node. Every method validates its node and returns an error naming
/// the node, the op, the shapes and the reason; nothing is added on error.
#[derive(Default)]
pub struct GraphBuilder {
    nodes: Vec<Node>,
    outputs: Vec<Value>,
    names: Names,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// Adds a node of any op with the given inputs and returns all its outputs.
    pub fn add(&mut self, op: Op, inputs: &[Value]) -> Result<Vec<Value>> {
        let id = self.nodes.len();
        let label = op_label(&op);
        let ctx = |e: crate::Error| e.at_node(id, label.clone());
        let types = inputs.iter().map(|v| self.value_type(*v).cloned()).collect::<Result<Vec<_>>>().map_err(ctx)?;
        crate::spec::check_arity(&op, types.len()).map_err(ctx)?;
        let outputs = infer(&op, &types).map_err(|e| ctx(e.context(describe_inputs(&types))))?;
        self.names.check(&op).map_err(ctx)?;
        let n = outputs.len();
        self.nodes.push(Node { op, inputs: inputs.to_vec(), outputs });
        Ok((0..n).map(|output| Value { node: NodeId(id), output }).collect())
    }

    /// Adds a single-output node.
    pub fn add1(&mut self, op: Op, inputs: &[Value]) -> Result<Value> {
        let outs = self.add(op, inputs)?;
        Ok(outs[0])
    }

    /// The type of a value built so far.
    pub fn value_type(&self, v: Value) -> Result<&TensorType> {
        match self.nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output)) {
            Some(t) => Ok(t),
            None => bail!(Arity, "value {v} does not exist in this graph"),
        }
    }

    /// How many nodes have been added so far (the id the next node will get).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Marks `v` as a graph output (in call order).
    pub fn output(&mut self, v: Value) -> Result<()> {
        self.value_type(v)?;
        self.outputs.push(v);
        Ok(())
    }

    /// Finishes the graph.
    pub fn build(self) -> Result<Graph> {
        if self.outputs.is_empty() {
            bail!(Arity, "graph has no outputs; call GraphBuilder::output");
        }
        Ok(Graph { nodes: self.nodes, outputs: self.outputs })
    }

    fn rank(&self, v: Value) -> Result<usize> {
        Ok(self.value_type(v)?.rank())
    }

    // ---- leaves
    /// A graph input bound by name at run.
    pub fn input(&mut self, name: &str, dtype: DType, shape: impl Into<Shape>) -> Result<Value> {
        self.add1(Op::Input(InputAttrs { name: name.into(), dtype, shape: shape.into() }), &[])
    }
    /// A named weight set with `Executable::set_param`.
    pub fn param(&mut self, name: &str, dtype: DType, shape: &[usize]) -> Result<Value> {
        self.add1(Op::Param(ParamAttrs { name: name.into(), dtype, shape: shape.to_vec() }), &[])
    }
    /// A constant holding `t`.
    pub fn constant(&mut self, t: &Tensor) -> Result<Value> {
        let data: Arc<[u8]> = Arc::from(t.bytes());
        self.add1(Op::Constant(ConstantAttrs { dtype: t.dtype(), shape: t.shape().to_vec(), data }), &[])
    }

    // ---- elementwise
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

    // ---- movement
    /// Reshape; `-1` infers one dim.
    pub fn reshape(&mut self, x: Value, new_shape: &[i64]) -> Result<Value> {
        let mut dims = Vec::with_capacity(new_shape.len());
        for &d in new_shape {
            dims.push(match d {
                -1 => DimSpec::Infer,
                d if d < 0 => bail!(Attribute, "Reshape entry {d} is negative (only -1 is allowed)"),
                d => DimSpec::Static(d as usize),
            });
        }
        self.add1(Op::Reshape { new_shape: dims }, &[x])
    }
    /// Reshape to entries that may be symbols: `reshape_to(x, &["batch".into(), DimSpec::Infer])`
    /// (`DimSpec` converts from `usize` and `&str`). `Infer` next to symbols is typed when it
    /// comes out as a size or a single symbol.
    pub fn reshape_to(&mut self, x: Value, new_shape: &[DimSpec]) -> Result<Value> {
        self.add1(Op::Reshape { new_shape: new_shape.to_vec() }, &[x])
    }
    /// Axis permutation (negative entries accepted).
    pub fn transpose(&mut self, x: Value, perm: &[i64]) -> Result<Value> {
        let r = self.rank(x)?;
        if perm.len() != r {
            bail!(Axis, "Transpose perm {perm:?} has {} entries for rank {r}", perm.len());
        }
        let perm = if r == 0 { vec![] } else { canon_axes(perm, r)? };
        self.add1(Op::Transpose { perm }, &[x])
    }
    /// Strided slice (negative `start` counts from the end).
    pub fn narrow(&mut self, x: Value, axis: i64, start: i64, len: usize, step: usize) -> Result<Value> {
        let t = self.value_type(x)?.clone();
        let axis = canon_axis(axis, t.rank())?;
        let start = if start < 0 {
            let d = t.shape.0[axis].as_static().unwrap_or(0) as i64;
            if start + d < 0 {
                bail!(Attribute, "Narrow start {start} is before the beginning of axis {axis} (size {d}) of {t}");
            }
            (start + d) as usize
        } else {
            start as usize
        };
        self.add1(Op::Narrow(NarrowAttrs { axis, start, len, step }), &[x])
    }
    /// Concatenation along `axis`.
    pub fn concat(&mut self, xs: &[Value], axis: i64) -> Result<Value> {
        let Some(&x0) = xs.first() else { bail!(Arity, "Concat needs at least one input") };
        let axis = canon_axis(axis, self.rank(x0)?)?;
        self.add1(Op::Concat { axis }, xs)
    }
    /// numpy `broadcast_to`.
    pub fn expand(&mut self, x: Value, shape: impl Into<Shape>) -> Result<Value> {
        self.add1(Op::Expand { shape: shape.into() }, &[x])
    }
    /// Flip along axes.
    pub fn reverse(&mut self, x: Value, axes: &[i64]) -> Result<Value> {
        let axes = if axes.is_empty() { vec![] } else { canon_axes(axes, self.rank(x)?)? };
        self.add1(Op::Reverse { axes }, &[x])
    }
    /// Border padding.
    pub fn pad(&mut self, x: Value, pads_begin: &[usize], pads_end: &[usize], mode: PadMode) -> Result<Value> {
        let a = PadAttrs { pads_begin: pads_begin.to_vec(), pads_end: pads_end.to_vec(), mode };
        self.add1(Op::Pad(a), &[x])
    }

    // ---- reductions, linear algebra, normalisation
    /// Reduction over `axes` (any subset; empty = identity).
    pub fn reduce(&mut self, op: ReduceOp, x: Value, axes: &[i64], keep_dims: bool) -> Result<Value> {
        let mut axes = if axes.is_empty() { vec![] } else { canon_axes(axes, self.rank(x)?)? };
        axes.sort_unstable();
        self.add1(Op::Reduce(ReduceAttrs { op, axes, keep_dims }), &[x])
    }
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
    /// Softmax along `axis`.
    pub fn softmax(&mut self, x: Value, axis: i64) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        self.add1(Op::Softmax { axis }, &[x])
    }
    /// Log-softmax along `axis`.
    pub fn log_softmax(&mut self, x: Value, axis: i64) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        self.add1(Op::LogSoftmax { axis }, &[x])
    }
    /// LayerNorm over axes `axis..`.
    pub fn layer_norm(&mut self, x: Value, gamma: Value, beta: Option<Value>, axis: i64, eps: f32) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::LayerNorm(NormAttrs { axis, eps }), &ins)
    }
    /// RmsNorm over axes `axis..`.
    pub fn rms_norm(&mut self, x: Value, gamma: Value, beta: Option<Value>, axis: i64, eps: f32) -> Result<Value> {
        let axis = canon_axis(axis, self.rank(x)?)?;
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::RmsNorm(NormAttrs { axis, eps }), &ins)
    }
}

fn describe_inputs(types: &[TensorType]) -> String {
    let parts: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    format!("inputs ({})", parts.join(", "))
}
