//! Symbolic dims end to end. Every conformance problem is rebuilt with its inputs' dims replaced
//! by symbols — one symbol per distinct size ≥ 2, so equal dims stay equal and broadcasts still
//! type-check — and the symbolic graph, whose symbols the same inputs bind at run, must give
//! exactly (bit for bit) the static graph's outputs on the wgpu backend: the variant compiled for
//! a binding is the static graph. Graphs that do not type-check with symbols (ops that need
//! static sizes: Reshape with −1, Concat or Narrow on a symbolic axis, …) are skipped; a test
//! asserts that enough rows ran. ScatterAdd / GatherBackward are skipped too: float atomics make
//! their sums order-dependent, so two runs need not agree bit for bit.
#![cfg(feature = "wgpu")]

use backend_api::infer::infer;
use backend_api::spec::op_table;
use backend_api::{Backend, Dim, Graph, Node, Op, Shape, Tensor};
use conformance::{proptest_config, variants, Problem, DEFAULT_CASES};
use proptest::test_runner::{TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeSet;

use backend_cpu_ref as _;
use backend_wgpu as _;

const NONDETERMINISTIC: &[&str] = &["ScatterAdd", "GatherBackward"];

/// Rows wgpu runs as a `Scan` whose length is an attribute: it refuses a symbolic sequence
/// length as `Unsupported`, which is a documented limit of the decomposition, not a mismatch.
const STATIC_LENGTH: &[&str] = &["Rnn", "Gru", "Lstm"];

/// `g` with every input dim of size ≥ 2 replaced by the symbol `s<size>`; `None` when the graph
/// does not type-check that way or has no such dim.
fn symbolize(g: &Graph) -> Option<Graph> {
    let mut nodes: Vec<Node> = Vec::with_capacity(g.nodes().len());
    let mut any = false;
    for node in g.nodes() {
        let op = match &node.op {
            Op::Input(a) => {
                let mut a = a.clone();
                let dims = a.shape.dims().iter().map(|d| match d {
                    Dim::Static(n) if *n >= 2 => {
                        any = true;
                        Dim::Sym(format!("s{n}"))
                    }
                    other => other.clone(),
                });
                a.shape = Shape(dims.collect());
                Op::Input(a)
            }
            other => other.clone(),
        };
        let ins: Vec<_> = node
            .inputs
            .iter()
            .map(|v| nodes.get(v.node.0).and_then(|n| n.outputs.get(v.output)).cloned())
            .collect::<Option<_>>()?;
        let outputs = infer(&op, &ins).ok()?;
        nodes.push(Node { op, inputs: node.inputs.clone(), outputs });
    }
    if !any {
        return None;
    }
    Graph::from_parts(nodes, g.outputs().to_vec()).ok()
}

fn run(be: &dyn Backend, g: &Graph, p: &Problem) -> Result<Vec<Tensor>, String> {
    let mut exe = be.compile(g, &Default::default()).map_err(|e| e.to_string())?;
    for (name, t) in &p.params {
        exe.set_param(name, t.view()).map_err(|e| e.to_string())?;
    }
    let inputs: Vec<_> = p.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs).map_err(|e| e.to_string())
}

#[test]
fn symbolic_graphs_bound_at_run_match_their_static_graphs_bit_for_bit() {
    let be = backend_api::create("wgpu").expect("a wgpu adapter");
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() { None } else { Some(DEFAULT_CASES) };
    let ran: RefCell<BTreeSet<String>> = RefCell::new(BTreeSet::new());
    let mut failures = Vec::new();
    for row in op_table().into_iter().map(|e| e.name) {
        if NONDETERMINISTIC.contains(&row.as_str()) {
            continue;
        }
        for v in variants(&row).unwrap_or_default() {
            let mut runner = TestRunner::new(proptest_config(cases, None));
            let result = runner.run(&v.strategy, |p| {
                let Ok(p) = p else { return Ok(()) };
                let Some(sym) = symbolize(&p.graph) else { return Ok(()) };
                // A static graph the backend refuses (Unsupported dtype, …) has nothing to match.
                let Ok(want) = run(be.as_ref(), &p.graph, &p) else { return Ok(()) };
                let got = match run(be.as_ref(), &sym, &p) {
                    Err(e) if STATIC_LENGTH.contains(&row.as_str()) && e.starts_with("Unsupported") => return Ok(()),
                    got => got.map_err(|e| TestCaseError::fail(format!("symbolic run: {e}")))?,
                };
                if got != want {
                    return Err(TestCaseError::fail(format!(
                        "outputs differ:\nstatic {want:?}\nsymbolic {got:?}\n{p:?}"
                    )));
                }
                ran.borrow_mut().insert(row.clone());
                Ok(())
            });
            if let Err(e) = result {
                failures.push(format!("{row} [{}]: {e}", v.label));
            }
        }
    }
    let ran = ran.into_inner();
    eprintln!("{} rows ran symbolically: {ran:?}", ran.len());
    assert!(failures.is_empty(), "{} variants failed:\n{}", failures.len(), failures.join("\n\n"));
    for row in
        ["Binary.Add", "Unary.Exp", "MatMul", "Reduce.Sum", "Softmax", "LayerNorm", "Gather", "Transpose", "Cast"]
    {
        assert!(ran.contains(row), "{row} never ran with symbolic dims");
    }
}
