//! Runs generated problems on the backend under test and on the reference, compares the outputs,
//! and property-tests whole op-table rows with proptest.
//!
//! Backends are chosen by registry name by the caller (the test and bin entry points read
//! `CONFORMANCE_BACKEND`; nothing here reads the environment).

use crate::compare::{compare, Comparison};
use crate::problem::{Generated, Problem};
use crate::problems::{variants, Variant};
use backend_api::decompose::decomposition_uses;
use backend_api::spec::{op_entry, op_label, tolerance_for, Tolerance};
use backend_api::{Backend, CompileOptions, DType, ErrorKind, Graph, OpKind, Result, Tensor};
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, TestCaseError, TestError, TestRunner};
use std::cell::RefCell;
use std::fmt::Write;

/// The oracle every backend is compared with.
pub const REFERENCE: &str = "cpu-ref";
/// The backend tested when the entry point is given none.
pub const DEFAULT_BACKEND: &str = "wgpu";
/// Cases per (row, dtype) when `PROPTEST_CASES` is not set: keeps the default run fast.
pub const DEFAULT_CASES: u32 = 8;
/// Shrink steps after a failure unless `PROPTEST_MAX_SHRINK_ITERS` says otherwise (each step
/// runs a case on the backend, which is slow on a software GPU).
pub const DEFAULT_SHRINK_ITERS: u32 = 256;

/// The proptest configuration: proptest's defaults (which honour its `PROPTEST_*` variables),
/// with `cases` when given, and failure persistence when `source_file` is given (seeds of failed
/// cases go to `<source>.proptest-regressions` and are replayed first on the next run).
pub fn proptest_config(cases: Option<u32>, source_file: Option<&'static str>) -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if let Some(n) = cases {
        c.cases = n;
    }
    if c.max_shrink_iters == u32::MAX {
        c.max_shrink_iters = DEFAULT_SHRINK_ITERS;
    }
    c.source_file = source_file;
    c.failure_persistence = match source_file {
        Some(_) => Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        None => None,
    };
    c
}

/// The verdict for one (row, dtype) of a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Every case compared inside the tolerance.
    Pass,
    /// Some case failed (wrong values, wrong shape, an error other than `Unsupported`).
    Fail,
    /// The backend refused every case with `Unsupported` at compile.
    Unsupported,
    /// No generator exists for it: never reported as passing.
    Untested,
}

impl Status {
    /// The report's word for the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Unsupported => "unsupported",
            Status::Untested => "untested",
        }
    }
}

/// The result of one case.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseOutcome {
    /// Compared inside the tolerance; `worst` is the largest error ratio.
    Pass {
        /// Largest `|got − want| / allowed`.
        worst: f64,
    },
    /// The backend under test returned `Unsupported` at compile: not compared; the op tests check
    /// it against [`crate::expected`].
    Unsupported(String),
    /// Anything else: the report says what and where.
    Fail {
        /// Largest error ratio seen (∞ for errors and exact mismatches).
        worst: f64,
        /// What went wrong, with the worst element.
        report: String,
    },
}

/// The outcome of property-testing one variant (a row and a dtype or dtype pair).
#[derive(Clone, Debug, PartialEq)]
pub struct VariantResult {
    /// The op-table row.
    pub op: String,
    /// The dtype label (`F32`, `F32->I8`).
    pub label: String,
    /// The dtype of the row's table entry (for Cast: the source dtype).
    pub dtype: DType,
    /// The verdict.
    pub status: Status,
    /// Cases compared (shrinking steps after a failure included).
    pub cases: usize,
    /// Cases skipped as unsupported.
    pub skipped: usize,
    /// Largest error ratio over the compared cases.
    pub worst: Option<f64>,
    /// The failure (with the minimal case) or the unsupported message.
    pub message: Option<String>,
    /// Whether every case also ran compiled with `CompileOptions::decompose_all` (the row's kind
    /// is native on the backend and has a decomposition): both paths compared with the reference.
    pub both_paths: bool,
}

impl VariantResult {
    /// Whether the backend refused some case of the variant with `Unsupported`.
    pub fn saw_unsupported(&self) -> bool {
        self.status == Status::Unsupported || self.skipped > 0
    }
}

impl VariantResult {
    /// `op<TAB>dtype<TAB>status<TAB>cases<TAB>worst_error`.
    pub fn tsv(&self) -> String {
        format!("{}\t{}\t{}\t{}\t{}", self.op, self.label, self.status.as_str(), self.cases, format_worst(self.worst))
    }
}

/// A worst error ratio as the report prints it (`-` when nothing was compared).
pub fn format_worst(w: Option<f64>) -> String {
    match w {
        None => "-".to_string(),
        Some(w) if w.is_infinite() => "inf".to_string(),
        Some(0.0) => "0".to_string(),
        Some(w) => format!("{w:.3e}"),
    }
}

/// Untested results for every dtype of a row (or those listed).
pub fn untested(row: &str, dtypes: &[DType]) -> Vec<VariantResult> {
    dtypes
        .iter()
        .map(|d| VariantResult {
            op: row.to_string(),
            label: d.name().to_string(),
            dtype: *d,
            status: Status::Untested,
            cases: 0,
            skipped: 0,
            worst: None,
            message: None,
            both_paths: false,
        })
        .collect()
}

#[derive(Default)]
struct Stats {
    compared: usize,
    skipped: usize,
    worst: Option<f64>,
    unsupported: Option<String>,
}

impl Stats {
    fn saw(&mut self, w: f64) {
        self.worst = Some(self.worst.map_or(w, |x| x.max(w)));
    }
}

/// A backend under test and the reference.
pub struct Runner {
    under_test: Box<dyn Backend>,
    reference: Box<dyn Backend>,
}

impl Runner {
    /// Creates both backends from the registry.
    pub fn new(under_test: &str, reference: &str) -> Result<Runner> {
        let under_test = backend_api::create(under_test)?;
        let reference = backend_api::create(reference)?;
        Ok(Runner { under_test, reference })
    }

    /// The registry name of the backend under test.
    pub fn backend_name(&self) -> &str {
        self.under_test.name()
    }

    /// Runs one problem on both backends and compares every output.
    pub fn check(&self, p: &Problem) -> CaseOutcome {
        self.check_paths(p, false)
    }

    /// Whether rows of `kind` run both ways on the backend under test: it lowers the kind natively
    /// and the kind has a decomposition, so `decompose_all` takes another path.
    pub fn has_two_paths(&self, kind: OpKind) -> bool {
        self.under_test.implements(kind) && decomposition_uses(kind).is_some()
    }

    /// [`Runner::check`]; with `both`, the problem is also compiled with
    /// `CompileOptions::decompose_all` and that result compared with the reference too.
    pub fn check_paths(&self, p: &Problem, both: bool) -> CaseOutcome {
        let paths: &[bool] = if both { &[false, true] } else { &[false] };
        let mut runs = Vec::with_capacity(paths.len());
        for &all in paths {
            match self.run_under_test(p, all) {
                Ok(out) => runs.push((all, out)),
                Err(outcome) => return outcome,
            }
        }
        let fail = |report: String| CaseOutcome::Fail { worst: f64::INFINITY, report };
        let want = match run_on(self.reference.as_ref(), &p.graph, p) {
            Ok(out) => out,
            Err(e) => return fail(format!("the reference {} failed: {e}", self.reference.name())),
        };
        let magnitude = match magnitudes(self.reference.as_ref(), p) {
            Ok(m) => m,
            Err(e) => return fail(format!("the reference failed on the magnitude graph: {e}")),
        };
        let mut worst = 0.0f64;
        for (all, got) in runs {
            match compare_outputs(&p.graph, &got, &want, magnitude.as_deref()) {
                CaseOutcome::Pass { worst: w } => worst = worst.max(w),
                CaseOutcome::Fail { worst, report } if all => {
                    return CaseOutcome::Fail { worst, report: format!("compiled with decompose_all: {report}") }
                }
                other => return other,
            }
        }
        CaseOutcome::Pass { worst }
    }

    /// The backend under test's outputs, compiled with `decompose_all` = `all`; an outcome when
    /// it refuses or fails.
    fn run_under_test(&self, p: &Problem, all: bool) -> Result<Vec<Tensor>, CaseOutcome> {
        let name = self.under_test.name();
        let how = if all { " with decompose_all" } else { "" };
        let fail = |report: String| CaseOutcome::Fail { worst: f64::INFINITY, report };
        let options = CompileOptions { decompose_all: all, ..CompileOptions::default() };
        match self.under_test.compile(&p.graph, &options) {
            Err(e) if e.kind() == ErrorKind::Unsupported => Err(CaseOutcome::Unsupported(format!("{e}{how}"))),
            Err(e) => Err(fail(format!("{name} failed to compile the graph{how}: {e}"))),
            Ok(mut exe) => {
                execute(exe.as_mut(), p).map_err(|e| fail(format!("{name} failed to run the graph{how}: {e}")))
            }
        }
    }

    /// Property-tests one variant of `row` with `config`.
    pub fn run_variant(&self, row: &str, v: &Variant, config: &ProptestConfig) -> VariantResult {
        let both = op_entry(row).is_some_and(|e| self.has_two_paths(e.kind));
        let stats = RefCell::new(Stats::default());
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&v.strategy, |case: Generated| {
            let p = case.map_err(|e| TestCaseError::fail(format!("the generator built an invalid graph: {e}")))?;
            let outcome = self.check_paths(&p, both);
            let mut s = stats.borrow_mut();
            match outcome {
                CaseOutcome::Pass { worst } => {
                    s.compared += 1;
                    s.saw(worst);
                    Ok(())
                }
                CaseOutcome::Unsupported(msg) => {
                    s.skipped += 1;
                    s.unsupported.get_or_insert(msg);
                    Ok(())
                }
                CaseOutcome::Fail { worst, report } => {
                    s.compared += 1;
                    s.saw(worst);
                    Err(TestCaseError::fail(report))
                }
            }
        });
        let s = stats.into_inner();
        let (status, message) = match result {
            Ok(()) if s.compared == 0 && s.skipped > 0 => (Status::Unsupported, s.unsupported),
            Ok(()) => (Status::Pass, None),
            Err(TestError::Fail(reason, value)) => {
                let msg = format!(
                    "{row} [{}] on {}: {reason}\nminimal failing case: {value:?}",
                    v.label,
                    self.backend_name()
                );
                (Status::Fail, Some(msg))
            }
            Err(TestError::Abort(reason)) => (Status::Fail, Some(format!("{row} [{}]: aborted: {reason}", v.label))),
        };
        let worst = if status == Status::Fail { Some(s.worst.unwrap_or(f64::INFINITY)) } else { s.worst };
        VariantResult {
            op: row.to_string(),
            label: v.label.clone(),
            dtype: v.dtype,
            status,
            cases: s.compared,
            skipped: s.skipped,
            worst,
            message,
            both_paths: both,
        }
    }

    /// Property-tests every variant of `row`; dtypes of the row without a variant are untested.
    pub fn run_row(&self, row: &str, config: &ProptestConfig) -> Vec<VariantResult> {
        let dtypes: Vec<DType> = op_entry(row).map(|e| e.dtypes.iter().collect()).unwrap_or_default();
        let Some(vs) = variants(row) else { return untested(row, &dtypes) };
        let mut out: Vec<VariantResult> = vs.iter().map(|v| self.run_variant(row, v, config)).collect();
        let missing: Vec<DType> = dtypes.into_iter().filter(|d| !vs.iter().any(|v| v.dtype == *d)).collect();
        out.extend(untested(row, &missing));
        out
    }
}

fn execute(exe: &mut dyn backend_api::Executable, p: &Problem) -> Result<Vec<Tensor>> {
    for (name, t) in &p.params {
        exe.set_param(name, t.view())?;
    }
    let inputs: Vec<(&str, backend_api::TensorView<'_>)> =
        p.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs)
}

fn run_on(backend: &dyn Backend, graph: &Graph, p: &Problem) -> Result<Vec<Tensor>> {
    let mut exe = backend.compile(graph, &CompileOptions::default())?;
    execute(exe.as_mut(), p)
}

/// `M` per element of each output, from the magnitude graph run on the reference.
fn magnitudes(reference: &dyn Backend, p: &Problem) -> Result<Option<Vec<Vec<f64>>>> {
    let Some(g) = &p.magnitude else { return Ok(None) };
    let outs = run_on(reference, g, p)?;
    let m = outs.iter().map(|t| t.to_vec::<f64>()).collect::<Result<Vec<_>>>()?;
    Ok(Some(m))
}

fn compare_outputs(graph: &Graph, got: &[Tensor], want: &[Tensor], magnitude: Option<&[Vec<f64>]>) -> CaseOutcome {
    if got.len() != want.len() || want.len() != graph.outputs().len() {
        let report =
            format!("{} outputs, the reference {}, the graph {}", got.len(), want.len(), graph.outputs().len());
        return CaseOutcome::Fail { worst: f64::INFINITY, report };
    }
    let mut worst = 0.0f64;
    let mut report = String::new();
    for (i, ((g, w), v)) in got.iter().zip(want).zip(graph.outputs()).enumerate() {
        let Some(node) = graph.node(v.node) else {
            return CaseOutcome::Fail { worst: f64::INFINITY, report: format!("graph output {v} has no node") };
        };
        let (tol, scaled) = tolerance_for(&node.op, w.dtype());
        let m = match (scaled, magnitude.and_then(|m| m.get(i))) {
            (false, _) => None,
            (true, Some(m)) => Some(m.as_slice()),
            (true, None) => {
                let report = format!("output {i} is magnitude-scaled but the problem has no magnitude graph");
                return CaseOutcome::Fail { worst: f64::INFINITY, report };
            }
        };
        match compare(g, w, tol, m) {
            Err(msg) => {
                worst = f64::INFINITY;
                let _ = writeln!(report, "output {i} ({}): {msg}", op_label(&node.op));
            }
            Ok(c) => {
                worst = worst.max(c.worst_ratio());
                if !c.passed() {
                    report.push_str(&describe_mismatch(i, &node.op, w, tol, m.is_some(), &c));
                }
            }
        }
    }
    if report.is_empty() {
        CaseOutcome::Pass { worst }
    } else {
        CaseOutcome::Fail { worst, report }
    }
}

/// One line on an output that failed its comparison: how many elements, the class, the worst.
fn describe_mismatch(
    i: usize,
    op: &backend_api::Op,
    want: &Tensor,
    tol: Tolerance,
    scaled: bool,
    c: &Comparison,
) -> String {
    let (rtol, atol) = tol.rtol_atol(want.dtype());
    let m = if scaled { " x M" } else { "" };
    let head = format!(
        "output {i} ({} -> {}{:?}): {} of {} elements outside {tol:?} (rtol {rtol:e}, atol {atol:e}{m})",
        op_label(op),
        want.dtype(),
        want.shape(),
        c.bad,
        c.numel
    );
    match &c.worst {
        Some(x) => format!(
            "{head}; worst at {:?} (flat {}): got {}, want {}, |got - want| = {:e}, allowed {:e} (ratio {:.3e})\n",
            x.coords, x.index, x.got, x.want, x.diff, x.allowed, x.ratio
        ),
        None => format!("{head}\n"),
    }
}
