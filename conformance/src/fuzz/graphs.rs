//! Graph cases: valid problems from the suite's generators, and graphs made from them through
//! `GraphBuilder` (more ops with random or mutated attributes, wrong arities, bad axes),
//! `Graph::from_parts` (reordered, dangling, cyclic node lists; wrong stored types) and the JSON
//! reader (serialised graphs, mutated as text).

use super::bytes::mutate_text;
use super::check::{exercise, Ctx, Data};
use super::isolate::Note;
use super::summary::{CaseReport, Event};
use super::{Backends, FuzzOptions};
use crate::problem::Problem;
use crate::rng::Rng;
use backend_api::op::{BinaryOp, CompareOp, DimSpec, PadMode, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Node, NodeId, Op, Shape, TensorType, Value};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Sizes a hostile user writes: overflowing products, `isize::MAX`, just past 32 bits.
pub const HUGE: &[usize] =
    &[1 << 31, 1 << 32, 1 << 62, (1 << 62) + 1, backend_api::shape::MAX_TENSOR_BYTES, usize::MAX];

/// One graph case: the generator problem it starts from decides nothing else; the case's seed
/// picks which front end is fuzzed.
pub fn case(b: &Backends, o: &FuzzOptions, seed: u64, note: &Note) -> CaseReport {
    let mut cx = Ctx { backends: b, options: o, rng: Rng::new(seed), note, report: CaseReport::default() };
    note.set("generating a problem");
    let Some((row, p)) = problem(&mut cx.rng) else {
        cx.report.skip("the generator gave no problem");
        return cx.report;
    };
    let data = Data { inputs: p.inputs.clone(), params: p.params.clone() };
    match cx.rng.below(9) {
        0 | 1 => {
            note.set(format!("problem of {row}"));
            exercise(&mut cx, &p.graph, Some(&data), p.magnitude.as_ref());
        }
        2 | 3 => builder_case(&mut cx, &p, &data),
        4 | 5 => parts_case(&mut cx, &p, &data),
        6 | 7 => json_case(&mut cx, &p),
        _ => nested_if_case(&mut cx),
    }
    cx.report
}

/// A problem from a random covered row's generator, drawn with a proptest runner seeded from
/// `rng` (deterministic).
pub fn problem(rng: &mut Rng) -> Option<(String, Problem)> {
    let rows = crate::covered_rows();
    let row = rows.get(rng.below(rows.len()))?.clone();
    let vs = crate::variants(&row)?;
    let v = vs.get(rng.below(vs.len()))?;
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let p = v.strategy.new_tree(&mut runner).ok()?.current().ok()?;
    Some((row, p))
}

/// A dim: mostly small, sometimes 0, with hostile sizes sometimes huge.
pub fn dim(rng: &mut Rng, hostile: bool) -> usize {
    if hostile && rng.chance(0.2) {
        return rng.pick(HUGE);
    }
    match rng.below(10) {
        0 => 0,
        1 | 2 => rng.below(9),
        _ => 1 + rng.below(4),
    }
}

fn dims(rng: &mut Rng, hostile: bool) -> Vec<usize> {
    (0..rng.below(4)).map(|_| dim(rng, hostile)).collect()
}

fn dtype(rng: &mut Rng) -> DType {
    any_of(rng, &DType::ALL, DType::F32)
}

/// Replays the problem's nodes into a `GraphBuilder` (some with mutated attributes or inputs),
/// appends random ops, builds and exercises what builds.
fn builder_case(cx: &mut Ctx<'_>, p: &Problem, data: &Data) {
    let (o, note) = (cx.options, cx.note);
    let (rng, report) = (&mut cx.rng, &mut cx.report);
    let mut gb = GraphBuilder::new();
    let mut values: Vec<Value> = Vec::new();
    for node in p.graph.nodes() {
        let mut op = node.op.clone();
        let mut inputs = node.inputs.clone();
        if !is_leaf(&op) && rng.chance(0.2) {
            mutate_op(&mut op, rng, o.hostile_sizes);
        }
        if rng.chance(0.05) {
            rewire(&mut inputs, &values, rng);
        }
        note.set(format!("GraphBuilder::add {op:?}"));
        let r = gb.add(op, &inputs);
        report.step("build-add", &r);
        match r {
            Ok(vs) => values.extend(vs),
            // Later nodes refer to this one's ids: the replay cannot go on.
            Err(_) => return,
        }
    }
    let mut outputs: Vec<Value> = p.graph.outputs().to_vec();
    // Fresh leaves of any dtype and shape (zero dims; huge ones with hostile sizes).
    for k in 0..rng.below(3) {
        let (t, d) = (dtype(rng), dims(rng, o.hostile_sizes));
        note.set(format!("GraphBuilder::input {t}{d:?}"));
        let r = gb.input(&format!("fuzz{k}"), t, &d[..]);
        report.step("build-input", &r);
        values.extend(r.ok());
    }
    for _ in 0..1 + rng.below(3) {
        let op = random_op(rng, &gb, &values, o.hostile_sizes);
        let arity = op.kind().arity();
        let n = match arity {
            backend_api::spec::Arity::Exactly(k) | backend_api::spec::Arity::AtLeast(k) => k,
            backend_api::spec::Arity::Between(lo, hi) => lo + rng.below(hi - lo + 1),
        };
        // A wrong arity now and then; otherwise inputs drawn from every value so far.
        let n = if rng.chance(0.1) { rng.below(4) } else { n.max(usize::from(matches!(op, Op::Concat { .. }))) };
        let inputs: Vec<Value> = (0..n).map(|_| pick_value(rng, &values)).collect();
        note.set(format!("GraphBuilder::add {op:?} on {inputs:?}"));
        let r = gb.add(op, &inputs);
        report.step("build-add", &r);
        if let Ok(vs) = r {
            outputs.extend(vs.first().copied());
            values.extend(vs);
        }
    }
    for v in outputs.iter().rev().take(2) {
        let r = gb.output(*v);
        report.step("build-output", &r);
    }
    note.set("GraphBuilder::build");
    let g = gb.build();
    report.step("build", &g);
    if let Ok(g) = g {
        let same = backend_api::Signature::of(&g).inputs == backend_api::Signature::of(&p.graph).inputs;
        exercise(cx, &g, same.then_some(data), None);
    }
}

fn pick_value(rng: &mut Rng, values: &[Value]) -> Value {
    values.get(rng.below(values.len())).copied().unwrap_or(Value::first(NodeId(0)))
}

/// Points one input at another existing value (or at a value that does not exist).
fn rewire(inputs: &mut [Value], values: &[Value], rng: &mut Rng) {
    let i = rng.below(inputs.len());
    let v = if rng.chance(0.3) {
        Value { node: NodeId(values.len() + rng.below(3)), output: rng.below(3) }
    } else {
        pick_value(rng, values)
    };
    if let Some(slot) = inputs.get_mut(i) {
        *slot = v;
    }
}

/// A random op of the movement, elementwise and reduction families with attributes fitted to a
/// random existing value (or off by a little: bad axes, oversize slices), or one of a freshly
/// generated problem's ops (any covered row of the table).
fn random_op(rng: &mut Rng, gb: &GraphBuilder, values: &[Value], hostile: bool) -> Op {
    let rank = gb.value_type(pick_value(rng, values)).map_or(2, |t| t.rank());
    let axis = |rng: &mut Rng| if rng.chance(0.1) { rank + rng.below(3) } else { rng.below(rank.max(1)) };
    match rng.below(12) {
        0 => Op::Unary(any_of(rng, UnaryOp::ALL, UnaryOp::Neg)),
        1 => Op::Binary(any_of(rng, BinaryOp::ALL, BinaryOp::Add)),
        2 => Op::Compare(any_of(rng, CompareOp::ALL, CompareOp::Eq)),
        3 => Op::Cast { to: dtype(rng) },
        4 => Op::Reshape { new_shape: dims(rng, hostile).into_iter().map(DimSpec::Static).collect() },
        5 => Op::Transpose { perm: (0..rank).rev().collect() },
        6 => Op::Concat { axis: axis(rng) },
        7 => Op::Reverse { axes: vec![axis(rng)] },
        8 => Op::Softmax { axis: axis(rng) },
        9 => {
            let cap = if hostile { usize::MAX } else { 3 };
            let pads = |rng: &mut Rng| -> Vec<usize> { (0..rank).map(|_| dim(rng, hostile).min(cap)).collect() };
            let modes = [PadMode::Constant { value: 1.5 }, PadMode::Edge, PadMode::Reflect];
            let mode = any_of(rng, &modes, PadMode::Edge);
            Op::Pad(backend_api::op::PadAttrs { pads_begin: pads(rng), pads_end: pads(rng), mode })
        }
        10 => Op::Narrow(backend_api::op::NarrowAttrs {
            axis: axis(rng),
            start: dim(rng, hostile),
            len: dim(rng, hostile),
            step: 1 + rng.below(3),
        }),
        _ => problem(rng)
            .and_then(|(_, p)| p.graph.nodes().iter().rev().find(|n| !is_leaf(&n.op)).map(|n| n.op.clone()))
            .unwrap_or(Op::Unary(UnaryOp::Neg)),
    }
}

/// One element of `xs` (`fallback` for an empty slice): [`Rng::pick`] for types without `Default`.
pub fn any_of<T: Copy>(rng: &mut Rng, xs: &[T], fallback: T) -> T {
    xs.get(rng.below(xs.len())).copied().unwrap_or(fallback)
}

fn is_leaf(op: &Op) -> bool {
    matches!(op, Op::Input(_) | Op::Param(_) | Op::Constant(_))
}

/// Changes one attribute of `op` to a random (often invalid) value. Ops whose attributes are
/// not mutated here are mutated through their JSON text by the JSON cases.
pub fn mutate_op(op: &mut Op, rng: &mut Rng, hostile: bool) {
    let d = dim(rng, hostile);
    match op {
        Op::Unary(u) => *u = any_of(rng, UnaryOp::ALL, UnaryOp::Neg),
        Op::Binary(b) => *b = any_of(rng, BinaryOp::ALL, BinaryOp::Add),
        Op::Compare(c) => *c = any_of(rng, CompareOp::ALL, CompareOp::Eq),
        Op::Cast { to } => *to = dtype(rng),
        Op::Reshape { new_shape } => {
            let (at, infer) = (rng.below(new_shape.len()), rng.chance(0.2));
            let spec = if infer { DimSpec::Infer } else { DimSpec::Static(d) };
            match new_shape.get_mut(at) {
                Some(s) if rng.chance(0.8) => *s = spec,
                _ => new_shape.push(spec),
            }
        }
        Op::Transpose { perm } => perm.push(d),
        Op::Narrow(a) => match rng.below(4) {
            0 => a.axis = d,
            1 => a.start = d,
            2 => a.len = d,
            _ => a.step = d,
        },
        Op::Concat { axis } | Op::Softmax { axis } | Op::LogSoftmax { axis } => *axis = d,
        Op::Expand { shape } => *shape = Shape::of(&dims(rng, hostile)),
        Op::Reverse { axes } => axes.push(d),
        Op::Pad(a) => {
            let list = if rng.chance(0.5) { &mut a.pads_begin } else { &mut a.pads_end };
            let at = rng.below(list.len());
            match list.get_mut(at) {
                Some(x) => *x = d,
                None => list.push(d),
            }
        }
        Op::Gather(a) => a.axis = d,
        Op::ScatterAdd(a) => a.axis = d,
        Op::GatherBackward(a) => a.axis = d,
        Op::Reduce(a) => a.axes.push(d),
        Op::ArgMax(a) | Op::ArgMin(a) => {
            a.axis = d;
            a.index_dtype = dtype(rng);
        }
        Op::TopK(a) => a.k = d,
        Op::Cumsum(a) | Op::CumsumBackward(a) => a.axis = d,
        Op::SoftmaxCrossEntropy(a) | Op::SoftmaxCrossEntropyBackward(a) => a.axis = d,
        Op::LayerNorm(a) | Op::RmsNorm(a) => a.axis = d,
        Op::RngBits(a) => a.shape = Shape::of(&dims(rng, hostile)),
        Op::RngUniform(a) => a.shape = Shape::of(&dims(rng, hostile)),
        Op::RngNormal(a) => a.shape = Shape::of(&dims(rng, hostile)),
        Op::Input(_)
        | Op::Param(_)
        | Op::Constant(_)
        | Op::Where
        | Op::Fma
        | Op::MatMul
        | Op::DotGeneral(_)
        | Op::FusedMatMulBiasAct { .. }
        | Op::GroupedMatMul(_)
        | Op::QuantMatMul(_)
        | Op::QuantGroupedMatMul(_)
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
        | Op::Scan(_)
        | Op::Fft(_)
        | Op::LogMel(_)
        | Op::WelchPeaks(_)
        | Op::Sample(_)
        | Op::If(_)
        | Op::While(_)
        | Op::ElementwiseRegion(_)
        | Op::BatchElementwiseRegion(_)
        | Op::TransformRegion(_)
        | Op::Custom(_)
        | Op::LayerNormBackward(_)
        | Op::RmsNormBackward(_)
        | Op::LogMelBackward(_) => {}
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(_)
        | Op::GaussianSplatRasterize(_)
        | Op::GaussianSplatRender(_)
        | Op::GaussianSplatRenderBackward(_) => {}
    }
}

/// Structural mutations of the problem's node list, then `Graph::from_parts`; what validates is
/// exercised.
fn parts_case(cx: &mut Ctx<'_>, p: &Problem, data: &Data) {
    let (o, note) = (cx.options, cx.note);
    let (rng, report) = (&mut cx.rng, &mut cx.report);
    let mut nodes: Vec<Node> = p.graph.nodes().to_vec();
    let mut outputs: Vec<Value> = p.graph.outputs().to_vec();
    for _ in 0..1 + rng.below(2) {
        mutate_parts(&mut nodes, &mut outputs, rng, o.hostile_sizes);
    }
    note.set(format!("Graph::from_parts({nodes:?}, {outputs:?})"));
    let g = Graph::from_parts(nodes, outputs);
    report.step("from_parts", &g);
    if let Ok(g) = g {
        // Leaves may have changed: the problem's data only if the signature is the same.
        let same = backend_api::Signature::of(&g) == backend_api::Signature::of(&p.graph);
        exercise(cx, &g, same.then_some(data), None);
    }
}

fn mutate_parts(nodes: &mut Vec<Node>, outputs: &mut Vec<Value>, rng: &mut Rng, hostile: bool) {
    let n = nodes.len();
    let i = rng.below(n);
    match rng.below(8) {
        0 if n > 1 => nodes.swap(i, rng.below(n)),
        1 => {
            // An input that refers to this node or a later one: a cycle or a forward reference.
            if let Some(v) = nodes.get_mut(i).and_then(|node| node.inputs.first_mut()) {
                v.node = NodeId(i + rng.below(3));
            }
        }
        2 => {
            if i < n {
                nodes.remove(i);
            }
        }
        3 => {
            // A duplicated leaf: a second Input of the same name, or a Param of another type.
            if let Some(leaf) = nodes.iter().find(|x| is_leaf(&x.op)).cloned() {
                nodes.insert(0, leaf);
            }
        }
        4 => {
            if let Some(t) = nodes.get_mut(i).and_then(|node| node.outputs.first_mut()) {
                *t = TensorType::new(dtype(rng), &dims(rng, hostile));
            }
        }
        5 => match rng.below(3) {
            0 => outputs.clear(),
            1 => outputs.push(Value { node: NodeId(n + rng.below(2)), output: rng.below(2) }),
            _ => outputs.push(Value { node: NodeId(i), output: 1 + rng.below(2) }),
        },
        6 => {
            if let Some(node) = nodes.get_mut(i) {
                mutate_op(&mut node.op, rng, hostile);
            }
        }
        _ => {
            if let Some(node) = nodes.get_mut(i) {
                if rng.chance(0.5) {
                    node.inputs.pop();
                } else {
                    node.inputs.push(Value::first(NodeId(rng.below(n))));
                }
            }
        }
    }
}

/// The problem's graph through the JSON writer and reader: unchanged it must read back equal;
/// mutated as text it must be read or refused, never panic; what reads is exercised.
fn json_case(cx: &mut Ctx<'_>, p: &Problem) {
    let (o, note) = (cx.options, cx.note);
    let (rng, report) = (&mut cx.rng, &mut cx.report);
    let Some(codec) = o.json else {
        report.skip("JSON cases: no codec given (FuzzOptions::json)");
        return;
    };
    note.set("to_json");
    let text = match (codec.to_json)(&p.graph) {
        Ok(t) => t,
        Err(e) => return report.push(Event::Mismatch(format!("to_json refused a valid graph: {e}"))),
    };
    match (codec.from_json)(&text) {
        Ok(g) if g == p.graph => report.push(Event::Accepted("json-roundtrip")),
        Ok(_) => report.push(Event::Mismatch(format!("the JSON round trip changed the graph:\n{text}"))),
        Err(e) => report.push(Event::Mismatch(format!("from_json refused what to_json wrote: {e}\n{text}"))),
    }
    let mutated = mutate_text(text.as_bytes(), rng, o.hostile_sizes);
    let Ok(mutated) = String::from_utf8(mutated) else {
        return report.skip("mutated JSON is not UTF-8 (the byte cases feed such text)");
    };
    note.set(format!("from_json({mutated:?})"));
    let g = (codec.from_json)(&mutated);
    report.step("from_json", &g);
    if let Ok(g) = g {
        exercise(cx, &g, None, None);
    }
}

/// `If` bodies nested deeper than this are refused by the JSON writer and reader alike (the
/// graph format's nesting limit, docs/GRAPH-FORMAT.md "Nesting").
const MAX_JSON_IF_DEPTH: usize = 24;

/// `If` nested `depth` deep (each branch the next level, the innermost `Neg`): through the JSON
/// writer and reader (a round trip up to the format's nesting limit, a clear refusal past it),
/// then exercised.
fn nested_if_case(cx: &mut Ctx<'_>) {
    let depth = if cx.options.hostile_sizes { cx.rng.below(65) } else { cx.rng.below(2 * MAX_JSON_IF_DEPTH) };
    cx.note.set(format!("If nested {depth} deep"));
    let g = nested_if(depth);
    cx.report.step("build-if", &g);
    let Ok(g) = g else { return };
    if let Some(codec) = cx.options.json {
        match (codec.to_json)(&g).and_then(|t| (codec.from_json)(&t)) {
            Ok(back) if back == g && depth <= MAX_JSON_IF_DEPTH => cx.report.push(Event::Accepted("json-roundtrip")),
            Ok(_) if depth > MAX_JSON_IF_DEPTH => {
                cx.report.push(Event::Mismatch(format!("an If nested {depth} deep passed the JSON nesting limit")))
            }
            Ok(_) => cx.report.push(Event::Mismatch(format!("the JSON round trip changed an If nested {depth} deep"))),
            Err(e) if depth > MAX_JSON_IF_DEPTH && e.kind() == backend_api::ErrorKind::Unsupported => {
                cx.report.push(Event::Accepted("json-depth-refused"))
            }
            Err(e) => {
                let msg = format!("an If nested {depth} deep does not survive the JSON round trip: {e}");
                cx.report.push(Event::Mismatch(msg))
            }
        }
    }
    exercise(cx, &g, None, None);
}

/// A graph of inputs `p: Bool[]`, `x: F32[2]` whose output is `If(p, p, x)` with the graph one
/// level down as its then-branch and level 0 as its else-branch (linear in `depth`); level 0 is
/// `Neg(x)`.
pub fn nested_if(depth: usize) -> backend_api::Result<Graph> {
    let mut inner: Option<Graph> = None;
    let mut base: Option<Graph> = None;
    for _ in 0..=depth {
        let mut gb = GraphBuilder::new();
        let p = gb.input("p", DType::Bool, &[][..])?;
        let x = gb.input("x", DType::F32, &[2usize][..])?;
        let y = match (inner.take(), &base) {
            (Some(sub), Some(leaf)) => match gb.if_(p, &[p, x], sub, leaf.clone())?.first() {
                Some(v) => *v,
                None => backend_api::bail!(Arity, "If gave no outputs"),
            },
            _ => gb.unary(UnaryOp::Neg, x)?,
        };
        gb.output(y)?;
        let g = gb.build()?;
        base.get_or_insert_with(|| g.clone());
        inner = Some(g);
    }
    match inner {
        Some(g) => Ok(g),
        None => backend_api::bail!(Arity, "no graph built"),
    }
}
