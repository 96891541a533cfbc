//! Compiling and running one fuzzed graph on the reference and the backend under test, and
//! comparing their outputs with the op table's tolerances ([`crate::compare`]).

use super::isolate::Note;
use super::precondition;
use super::summary::{CaseReport, Event};
use super::{Backends, FuzzOptions};
use crate::compare::compare;
use crate::display;
use crate::rng::Rng;
use crate::values::any_tensor;
use backend_api::spec::{op_label, tolerance_for, Tolerance};
use backend_api::{Backend, CompileOptions, ErrorKind, Graph, Op, Result, Signature, Tensor};

/// Run inputs and params by name.
#[derive(Clone, Debug, Default)]
pub struct Data {
    /// Inputs, passed to `run`.
    pub inputs: Vec<(String, Tensor)>,
    /// Params, uploaded with `set_param`.
    pub params: Vec<(String, Tensor)>,
}

/// How far a graph may go given its declared sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Small enough to run.
    Run,
    /// Too large, impossible or symbolic: compile only (an impossible size must be refused).
    Compile,
}

/// The reach of `graph` under `options`: every declared value is sized with the checked helpers;
/// an impossible size is `Compile` (the backends must refuse it with an error).
pub fn reach(graph: &Graph, options: &FuzzOptions) -> Reach {
    let mut reach = Reach::Run;
    for t in graph.nodes().iter().flat_map(|n| &n.outputs) {
        let Some(dims) = t.shape.as_static() else {
            reach = Reach::Compile;
            continue;
        };
        // Elements ignoring zero dims: the work some loops do over an empty tensor's other dims.
        let span = backend_api::shape::try_numel(&dims.iter().map(|&d| d.max(1)).collect::<Vec<_>>());
        let bytes = backend_api::shape::nbytes(t.dtype, &dims);
        let too_big = |n: &usize| *n > options.compile_cap_bytes;
        match (bytes, span) {
            (Ok(b), Ok(s)) if !too_big(&b) && !too_big(&s) => {
                if s > options.max_run_elements {
                    reach = Reach::Compile;
                }
            }
            _ => reach = Reach::Compile,
        }
    }
    reach
}

/// Data for every input and param of `graph` (static shapes only): the tensor of the same name,
/// dtype and shape from `given` where there is one (a generator's data, inside its op's domain),
/// else random data of any value (specials included).
pub fn data_for(graph: &Graph, given: Option<&Data>, rng: &mut Rng) -> Result<Data> {
    let sig = Signature::of(graph);
    let mut data = Data::default();
    let empty = Data::default();
    let given = given.unwrap_or(&empty);
    for (slots, have, out) in
        [(&sig.inputs, &given.inputs, &mut data.inputs), (&sig.params, &given.params, &mut data.params)]
    {
        for s in slots {
            let dims = s.shape.static_dims(&s.name)?;
            let known = have.iter().find(|(n, t)| *n == s.name && t.dtype() == s.dtype && t.shape() == dims);
            let t = match known {
                Some((_, t)) => t.clone(),
                None => any_tensor(rng, s.dtype, &dims, 0.1, false)?,
            };
            out.push((s.name.clone(), t));
        }
    }
    Ok(data)
}

/// What every step of a graph case needs: the backends, the options, the case's generator, its
/// note for the report of a panic or hang, and its report.
pub struct Ctx<'a> {
    /// The backends.
    pub backends: &'a Backends,
    /// The run's options.
    pub options: &'a FuzzOptions,
    /// The case's generator.
    pub rng: Rng,
    /// What the case is doing.
    pub note: &'a Note,
    /// What the case saw.
    pub report: CaseReport,
}

/// Validates, compiles and (when small) runs `graph` on both backends and compares the outputs.
/// `data`: the problem's own inputs (else random ones); `magnitude`: its magnitude graph.
pub fn exercise(cx: &mut Ctx<'_>, graph: &Graph, given: Option<&Data>, magnitude: Option<&Graph>) {
    let (b, o, note) = (cx.backends, cx.options, cx.note);
    let (rng, report) = (&mut cx.rng, &mut cx.report);
    let reach = reach(graph, o);
    let data = match reach {
        Reach::Run => data_for(graph, given, rng),
        _ => Ok(Data::default()),
    };
    let Ok(data) = data else {
        report.skip("no random data for the graph's leaves");
        return;
    };
    let text = display::graph(graph);
    let want = on(b.reference.as_ref(), graph, reach, &data, "ref", &text, note, report);
    let Some(under) = &b.under_test else { return };
    let got = on(under.as_ref(), graph, reach, &data, "test", &text, note, report);
    match (want, got) {
        (Some(Ok(mut w)), Some(Ok(mut g))) => {
            match precondition::excuse_unsafe_rows(graph, &data, b.reference.as_ref(), &mut w, &mut g) {
                Ok(0) => {}
                Ok(_) => report.skip("Sample rows outside the spec's conformance rule (not compared)"),
                Err(e) => return report.skip(format!("Sample's logits not recomputed: {}", e.kind().name())),
            }
            let m = magnitude.map(|m| run(b.reference.as_ref(), m, &data));
            judge(graph, &w, &g, m, under.name(), report)
        }
        (Some(Ok(_)), Some(Err(e))) | (Some(Err(e)), Some(Ok(_))) if !excused(&e) => {
            report.push(Event::Mismatch(format!("one backend ran, the other failed at run: {e}\ngraph:\n{text}")))
        }
        _ => {}
    }
}

/// Errors a backend may give where the other runs: limits of its device, not bugs.
fn excused(e: &backend_api::Error) -> bool {
    matches!(e.kind(), ErrorKind::Unsupported | ErrorKind::DeviceLimit | ErrorKind::Device | ErrorKind::Capacity)
}

/// Compiles (and runs, when `reach` says so) on one backend: `None` when it did not get to run.
#[allow(clippy::too_many_arguments)]
fn on(
    backend: &dyn Backend,
    graph: &Graph,
    reach: Reach,
    data: &Data,
    who: &'static str,
    text: &str,
    note: &Note,
    report: &mut CaseReport,
) -> Option<Result<Vec<Tensor>>> {
    note.set(format!("compiling on {}:\n{text}", backend.name()));
    let exe = backend.compile(graph, &CompileOptions::default());
    report.step(if who == "ref" { "compile-ref" } else { "compile-test" }, &exe);
    let mut exe = match exe {
        Err(e) if e.kind() == ErrorKind::Unsupported => {
            report.skip(format!("{} refuses as Unsupported", backend.name()));
            return None;
        }
        Err(_) => return None,
        Ok(exe) => exe,
    };
    if reach != Reach::Run {
        return None;
    }
    note.set(format!("running on {}:\n{text}", backend.name()));
    let out = execute(exe.as_mut(), data);
    report.step(if who == "ref" { "run-ref" } else { "run-test" }, &out);
    Some(out)
}

fn execute(exe: &mut dyn backend_api::Executable, data: &Data) -> Result<Vec<Tensor>> {
    for (name, t) in &data.params {
        exe.set_param(name, t.view())?;
    }
    let inputs: Vec<(&str, backend_api::TensorView<'_>)> =
        data.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs)
}

fn run(backend: &dyn Backend, graph: &Graph, data: &Data) -> Result<Vec<Tensor>> {
    let mut exe = backend.compile(graph, &CompileOptions::default())?;
    execute(exe.as_mut(), data)
}

/// Compares the outputs whose tolerance is known: with a magnitude graph (a generator's problem,
/// on its own data) every output; otherwise the outputs computed through exact ops only (an
/// inexact op inside a chain compounds errors that no row of the table bounds, and on data from
/// outside its test domain its class does not hold either).
fn judge(
    graph: &Graph,
    want: &[Tensor],
    got: &[Tensor],
    magnitude: Option<Result<Vec<Tensor>>>,
    name: &str,
    report: &mut CaseReport,
) {
    let m = match magnitude.transpose() {
        Ok(m) => m,
        Err(e) => return report.skip(format!("the reference failed on the magnitude graph: {}", e.kind().name())),
    };
    if want.len() != got.len() || want.len() != graph.outputs().len() {
        let msg = format!("{name} gave {} outputs, the reference {}", got.len(), want.len());
        return report.push(Event::Mismatch(msg));
    }
    let exact = exact_through(graph);
    let mut compared = false;
    for (i, ((w, g), v)) in want.iter().zip(got).zip(graph.outputs()).enumerate() {
        let Some(node) = graph.node(v.node) else { continue };
        if m.is_none() && !exact.get(v.node.0).copied().unwrap_or(false) {
            report.skip("not compared: an output of a random graph computed through an inexact op");
            continue;
        }
        let (tol, scaled) = tolerance_for(&node.op, w.dtype());
        let mi = m.as_ref().and_then(|m| m.get(i)).and_then(|t| t.to_vec::<f64>().ok());
        match compare(g, w, tol, if scaled { mi.as_deref() } else { None }) {
            Ok(c) if c.passed() => compared = true,
            Ok(c) => {
                let worst = c.worst.map(|x| format!("at {:?}: got {}, want {}", x.coords, x.got, x.want));
                let msg = format!(
                    "output {i} ({}): {} of {} elements outside {tol:?} on {name}; worst {}\ngraph:\n{}",
                    op_label(&node.op),
                    c.bad,
                    c.numel,
                    worst.unwrap_or_default(),
                    display::graph(graph)
                );
                return report.push(Event::Mismatch(msg));
            }
            Err(e) => return report.push(Event::Mismatch(format!("output {i} on {name}: {e}"))),
        }
    }
    if compared {
        report.push(Event::Compared);
    }
}

/// Per node: whether it and every node it depends on is a leaf or exact (tolerance `Exact`, not
/// magnitude-scaled) for each of its outputs.
fn exact_through(graph: &Graph) -> Vec<bool> {
    let mut exact: Vec<bool> = Vec::with_capacity(graph.nodes().len());
    for n in graph.nodes() {
        let own =
            is_leaf(&n.op) || n.outputs.iter().all(|t| tolerance_for(&n.op, t.dtype) == (Tolerance::Exact, false));
        let inputs = n.inputs.iter().all(|v| exact.get(v.node.0).copied().unwrap_or(false));
        exact.push(own && inputs);
    }
    exact
}

fn is_leaf(op: &Op) -> bool {
    matches!(op, Op::Input(_) | Op::Param(_) | Op::Constant(_))
}
