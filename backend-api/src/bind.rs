//! Binding symbolic dims (§1.2): the sizes a run's inputs give to symbols, and the static graph a
//! backend compiles for one binding.
//!
//! A backend that only compiles static shapes (wgpu) keeps the symbolic graph, binds the symbols
//! of each run with [`Bindings::from_inputs`], and compiles [`Graph::bind_symbols`] once per
//! distinct binding. Re-inference runs every check that involved a symbol at build, so a deferred
//! check fails here, before any work starts, with the error build would have given.

use crate::graph::{Graph, Node};
use crate::infer::infer;
use crate::op::{DimSpec, Op};
use crate::{bail, Dim, Error, ErrorKind, Result, Shape, Signature, TensorType};
use std::fmt;

/// Sizes bound to symbols, sorted by symbol name (so equal bindings compare and hash equal: the
/// key of a compiled-variant cache).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bindings(Vec<(String, usize)>);

impl Bindings {
    /// The empty binding (a graph with static shapes only).
    pub fn new() -> Bindings {
        Bindings(Vec::new())
    }

    /// Binds the symbols of `sig`'s inputs from the shapes a run supplies (in signature order),
    /// checking each shape against its slot. The same symbol must bind to the same size
    /// everywhere; otherwise a `ShapeBinding` error names the symbol, both sizes and both inputs.
    pub fn from_inputs(sig: &Signature, shapes: &[&[usize]]) -> Result<Bindings> {
        let mut seen = Vec::new();
        for (slot, dims) in sig.inputs.iter().zip(shapes) {
            crate::check_value(slot, slot.dtype, dims, &mut seen)?;
        }
        Ok(Bindings::from_seen(seen))
    }

    /// The bindings `check_value` collected as (symbol, size, bound by).
    pub(crate) fn from_seen(seen: Vec<(String, usize, String)>) -> Bindings {
        let mut pairs: Vec<(String, usize)> = seen.into_iter().map(|(s, n, _)| (s, n)).collect();
        pairs.sort();
        Bindings(pairs)
    }

    /// The size bound to `sym`.
    pub fn get(&self, sym: &str) -> Option<usize> {
        self.0.iter().find(|(s, _)| s == sym).map(|(_, n)| *n)
    }

    /// Whether nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The (symbol, size) pairs, sorted by symbol.
    pub fn pairs(&self) -> &[(String, usize)] {
        &self.0
    }

    fn size(&self, sym: &str) -> Result<usize> {
        match self.get(sym) {
            Some(n) => Ok(n),
            None => bail!(ShapeBinding, "symbol {sym} is not bound by any run input (bound: {self})"),
        }
    }

    fn shape(&self, s: &Shape) -> Result<Shape> {
        let dims = s
            .dims()
            .iter()
            .map(|d| match d {
                Dim::Static(n) => Ok(Dim::Static(*n)),
                Dim::Sym(sym) => Ok(Dim::Static(self.size(sym)?)),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Shape(dims))
    }

    fn dim_specs(&self, specs: &[DimSpec]) -> Result<Vec<DimSpec>> {
        specs
            .iter()
            .map(|d| match d {
                DimSpec::Sym(sym) => Ok(DimSpec::Static(self.size(sym)?)),
                DimSpec::Static(_) | DimSpec::Infer => Ok(d.clone()),
            })
            .collect()
    }
}

impl fmt::Display for Bindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no symbols");
        }
        let parts: Vec<String> = self.0.iter().map(|(s, n)| format!("{s}={n}")).collect();
        f.write_str(&parts.join(", "))
    }
}

impl Graph {
    /// Whether any value, or any shape in an attribute, has a symbolic dim.
    pub fn has_symbols(&self) -> bool {
        self.nodes.iter().any(|n| n.outputs.iter().any(|t| t.shape.as_static().is_none()))
    }

    /// The same graph with every symbol replaced by its bound size and every output type
    /// re-inferred. Errors carry the node and op, as at build.
    pub fn bind_symbols(&self, b: &Bindings) -> Result<Graph> {
        let mut nodes: Vec<Node> = Vec::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            let ctx = |e: Error| e.at_node(i, crate::spec::op_label(&node.op));
            let op = bind_op(&node.op, b).map_err(ctx)?;
            let ins: Vec<TensorType> = node
                .inputs
                .iter()
                .map(|v| match nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output)) {
                    Some(t) => Ok(t.clone()),
                    None => Err(Error::new(ErrorKind::Arity, format!("input {v} does not exist"))),
                })
                .collect::<Result<_>>()
                .map_err(ctx)?;
            let outputs = infer(&op, &ins).map_err(ctx)?;
            nodes.push(Node { op, inputs: node.inputs.clone(), outputs });
        }
        Ok(Graph { nodes, outputs: self.outputs.clone() })
    }
}

/// `op` with the symbols of its shape attributes (and of its subgraphs) bound.
fn bind_op(op: &Op, b: &Bindings) -> Result<Op> {
    Ok(match op {
        Op::Input(a) => {
            let mut a = a.clone();
            a.shape = b.shape(&a.shape)?;
            Op::Input(a)
        }
        Op::Reshape { new_shape } => Op::Reshape { new_shape: b.dim_specs(new_shape)? },
        Op::Expand { shape } => Op::Expand { shape: b.shape(shape)? },
        Op::GatherBackward(a) => {
            let mut a = a.clone();
            a.data_shape = b.shape(&a.data_shape)?;
            Op::GatherBackward(a)
        }
        Op::RngBits(a) => {
            let mut a = a.clone();
            a.shape = b.shape(&a.shape)?;
            Op::RngBits(a)
        }
        Op::RngUniform(a) => {
            let mut a = a.clone();
            a.shape = b.shape(&a.shape)?;
            Op::RngUniform(a)
        }
        Op::RngNormal(a) => {
            let mut a = a.clone();
            a.shape = b.shape(&a.shape)?;
            Op::RngNormal(a)
        }
        Op::If(a) => {
            let mut a = a.clone();
            a.then_graph = bind_body(&a.then_graph, b)?;
            a.else_graph = bind_body(&a.else_graph, b)?;
            Op::If(a)
        }
        Op::While(a) => {
            let mut a = a.clone();
            a.cond_graph = bind_body(&a.cond_graph, b)?;
            a.body_graph = bind_body(&a.body_graph, b)?;
            Op::While(a)
        }
        Op::Scan(a) => {
            let mut a = a.clone();
            a.body = bind_body(&a.body, b)?;
            Op::Scan(a)
        }
        // No shape-valued attribute and no subgraph: nothing to bind. Listed one by one so that a
        // new op with a shape attribute must be looked at here.
        Op::Param(_)
        | Op::Constant(_)
        | Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::Where
        | Op::Fma
        | Op::Cast { .. }
        | Op::Transpose { .. }
        | Op::Narrow(_)
        | Op::Concat { .. }
        | Op::Reverse { .. }
        | Op::Pad(_)
        | Op::Gather(_)
        | Op::ScatterAdd(_)
        | Op::Reduce(_)
        | Op::ArgMax(_)
        | Op::ArgMin(_)
        | Op::TopK(_)
        | Op::Cumsum(_)
        | Op::CumsumBackward(_)
        | Op::MatMul
        | Op::DotGeneral(_)
        | Op::FusedMatMulBiasAct { .. }
        | Op::GroupedMatMul(_)
        | Op::QuantMatMul(_)
        | Op::QuantGroupedMatMul(_)
        | Op::Softmax { .. }
        | Op::LogSoftmax { .. }
        | Op::SoftmaxCrossEntropy(_)
        | Op::LayerNorm(_)
        | Op::RmsNorm(_)
        | Op::GroupNorm(_)
        | Op::LayerNorm2d(_)
        | Op::FusedResidualLayerNorm(_)
        | Op::FusedResidualRmsNorm(_)
        | Op::Attention(_)
        | Op::AttentionBackward(_)
        | Op::Rope(_)
        | Op::RopeBackward(_)
        | Op::Conv(_)
        | Op::ConvTranspose(_)
        | Op::Pool(_)
        | Op::Im2Col(_)
        | Op::ResizeNearest(_)
        | Op::Rnn(_)
        | Op::Gru(_)
        | Op::Lstm(_)
        | Op::SelectiveScan(_)
        | Op::Mamba2(_)
        | Op::GatedDeltaNet(_)
        | Op::Fft(_)
        | Op::LogMel(_)
        | Op::WelchPeaks(_)
        | Op::Sample(_)
        | Op::ElementwiseRegion(_)
        | Op::BatchElementwiseRegion(_)
        | Op::TransformRegion(_)
        | Op::Custom(_)
        | Op::LayerNormBackward(_)
        | Op::RmsNormBackward(_)
        | Op::SoftmaxCrossEntropyBackward(_)
        | Op::LogMelBackward(_) => op.clone(),
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(_)
        | Op::GaussianSplatRasterize(_)
        | Op::GaussianSplatRender(_)
        | Op::GaussianSplatRenderBackward(_) => op.clone(),
    })
}

/// A subgraph with symbols bound; its own inputs may use the outer symbols.
fn bind_body(g: &Graph, b: &Bindings) -> Result<Graph> {
    if g.has_symbols() {
        g.bind_symbols(b)
    } else {
        Ok(g.clone())
    }
}
