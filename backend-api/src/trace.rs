//! A backend-agnostic trace: statistics of every intermediate value of a graph, and the first node
//! that produced a NaN or an infinity.
//!
//! No backend support is needed: [`trace`] compiles a copy of the graph whose outputs are every
//! output of every node (in node order), runs it once on the chosen backend and computes the
//! statistics on the host. The copy keeps every intermediate alive, so it needs more memory than
//! the graph itself; it is a debugging tool.
//!
//! What the numbers mean:
//! - `nan` / `inf` count elements; a `C64` element counts as NaN when either part is NaN, else as
//!   inf when either part is infinite. Integer and Bool values have neither.
//! - `min` / `max` are over the elements that are not NaN (so an infinity shows up there), `mean`
//!   over the finite elements only; each is `None` (printed `-`) when there is no such element,
//!   e.g. for an empty tensor.
//! - For `C64` the statistics are of the real parts (the classification uses both parts).
//! - Bool counts as 0 / 1.

use crate::{bail, element_to_f64, Backend, CompileOptions, DType, Graph, NodeId, Result, Tensor, TensorView, Value};
use std::fmt;

/// Statistics of one output of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueStats {
    /// The producing node.
    pub node: NodeId,
    /// Which of the node's outputs.
    pub output: usize,
    /// The op's spec name (`Unary.Log`, `MatMul`), as [`crate::spec::op_label`] gives it.
    pub op: String,
    /// The dtype.
    pub dtype: DType,
    /// The shape the run produced (symbolic dims bound).
    pub shape: Vec<usize>,
    /// Smallest non-NaN element (C64: real part); `None` when there is none.
    pub min: Option<f64>,
    /// Largest non-NaN element (C64: real part); `None` when there is none.
    pub max: Option<f64>,
    /// Mean of the finite elements (C64: real parts); `None` when there is none.
    pub mean: Option<f64>,
    /// Elements that are NaN (C64: either part).
    pub nan: usize,
    /// Elements that are ±inf and not NaN (C64: either part).
    pub inf: usize,
    /// Element count.
    pub count: usize,
}

impl ValueStats {
    /// Whether the value holds a NaN or an infinity.
    pub fn is_non_finite(&self) -> bool {
        self.nan > 0 || self.inf > 0
    }
}

/// The statistics of every value of a graph, in execution (node) order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TraceReport {
    /// One entry per output of every node, in node order.
    pub values: Vec<ValueStats>,
    /// Index into `values` of the first value holding a NaN or an infinity.
    pub first_non_finite: Option<usize>,
}

impl TraceReport {
    /// The first value holding a NaN or an infinity, if any.
    pub fn first_non_finite_value(&self) -> Option<&ValueStats> {
        self.first_non_finite.and_then(|i| self.values.get(i))
    }
}

/// Every output of every node, in node order: the outputs of the traced copy.
fn all_values(graph: &Graph) -> Vec<Value> {
    let per_node = graph.nodes().iter().enumerate();
    per_node.flat_map(|(i, n)| (0..n.outputs.len()).map(move |output| Value { node: NodeId(i), output })).collect()
}

/// Runs `graph` once on `backend` with `params` and `inputs` and returns the statistics of every
/// value it computes. Errors of compile, `set_param` and `run` are returned as they are, with
/// "trace" as context.
pub fn trace(
    backend: &dyn Backend,
    graph: &Graph,
    params: &[(&str, TensorView<'_>)],
    inputs: &[(&str, TensorView<'_>)],
) -> Result<TraceReport> {
    let values = all_values(graph);
    let traced = Graph::from_parts(graph.nodes().to_vec(), values.clone()).map_err(|e| e.context("trace"))?;
    let mut exe = backend.compile(&traced, &CompileOptions::default()).map_err(|e| e.context("trace: compile"))?;
    for (name, view) in params {
        exe.set_param(name, *view).map_err(|e| e.context(format!("trace: set_param {name:?}")))?;
    }
    let outputs = exe.run(inputs).map_err(|e| e.context("trace: run"))?;
    if outputs.len() != values.len() {
        bail!(
            Device,
            "trace: backend {} returned {} outputs for {} values",
            backend.name(),
            outputs.len(),
            values.len()
        );
    }
    Ok(report(graph, &values, &outputs))
}

/// Builds the report from the computed tensors (one per value).
fn report(graph: &Graph, values: &[Value], outputs: &[Tensor]) -> TraceReport {
    let stats: Vec<ValueStats> = values
        .iter()
        .zip(outputs)
        .map(|(v, t)| {
            let op = graph.node(v.node).map_or_else(|| "?".to_string(), |n| crate::spec::op_label(&n.op));
            value_stats(v.node, v.output, op, t)
        })
        .collect();
    let first_non_finite = stats.iter().position(ValueStats::is_non_finite);
    TraceReport { values: stats, first_non_finite }
}

/// Running sums over the elements of one tensor.
#[derive(Default)]
struct Acc {
    min: Option<f64>,
    max: Option<f64>,
    sum: f64,
    finite: usize,
    nan: usize,
    inf: usize,
}

impl Acc {
    /// Adds one element: `x` is its value (C64: real part), `nan` / `inf` its classification.
    fn add(&mut self, x: f64, nan: bool, inf: bool) {
        if nan {
            self.nan += 1;
            return;
        }
        self.min = Some(self.min.map_or(x, |m| m.min(x)));
        self.max = Some(self.max.map_or(x, |m| m.max(x)));
        if inf {
            self.inf += 1;
        } else {
            self.sum += x;
            self.finite += 1;
        }
    }
}

/// The statistics of one computed tensor.
pub fn value_stats(node: NodeId, output: usize, op: String, t: &Tensor) -> ValueStats {
    let dtype = t.dtype();
    let mut acc = Acc::default();
    for b in t.bytes().chunks_exact(dtype.size()) {
        if dtype == DType::C64 {
            let (re, im) = (element_to_f64(DType::F32, &b[0..4]), element_to_f64(DType::F32, &b[4..8]));
            let nan = re.is_nan() || im.is_nan();
            acc.add(re, nan, !nan && (re.is_infinite() || im.is_infinite()));
        } else {
            let x = element_to_f64(dtype, b);
            acc.add(x, x.is_nan(), x.is_infinite());
        }
    }
    let mean = (acc.finite > 0).then(|| acc.sum / acc.finite as f64);
    ValueStats {
        node,
        output,
        op,
        dtype,
        shape: t.shape().to_vec(),
        min: acc.min,
        max: acc.max,
        mean,
        nan: acc.nan,
        inf: acc.inf,
        count: t.numel(),
    }
}

/// A statistic for the table: `-` when absent, plain decimals for moderate magnitudes, else
/// scientific notation (so columns stay narrow).
fn num(x: Option<f64>) -> String {
    match x {
        None => "-".to_string(),
        Some(x) if x == 0.0 || x.is_infinite() => format!("{x}"),
        Some(x) if (1e-3..1e6).contains(&x.abs()) => format!("{x:.6}"),
        Some(x) => format!("{x:.4e}"),
    }
}

/// The table's cells of one value, in column order.
fn row(s: &ValueStats) -> [String; 10] {
    let shape = s.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
    [
        s.node.0.to_string(),
        s.output.to_string(),
        s.op.clone(),
        s.dtype.to_string(),
        format!("[{shape}]"),
        num(s.min),
        num(s.max),
        num(s.mean),
        s.nan.to_string(),
        s.inf.to_string(),
    ]
}

const HEADER: [&str; 10] = ["node", "out", "op", "dtype", "shape", "min", "max", "mean", "nan", "inf"];

impl fmt::Display for TraceReport {
    /// One aligned line per value (text columns left-aligned, numbers right-aligned), then the
    /// first non-finite value or "no NaN or inf".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: Vec<[String; 10]> = self.values.iter().map(row).collect();
        let mut width = HEADER.map(str::len);
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let header = HEADER.map(str::to_string);
        for r in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| match i {
                    2..=4 => format!("{c:<w$}", w = width[i]),
                    _ => format!("{c:>w$}", w = width[i]),
                })
                .collect();
            writeln!(f, "{}", cells.join("  ").trim_end())?;
        }
        match self.first_non_finite_value() {
            Some(s) => write!(f, "first non-finite value: node {} ({}) output {}", s.node.0, s.op, s.output),
            None => write!(f, "no NaN or inf"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Complex32;

    fn stats(t: &Tensor) -> ValueStats {
        value_stats(NodeId(3), 0, "Unary.Log".to_string(), t)
    }

    #[test]
    fn float_statistics_skip_nan_and_inf_as_documented() {
        let t = Tensor::from_slice(&[5], &[1.0f32, f32::NAN, -2.0, f32::INFINITY, 4.0]).unwrap();
        let s = stats(&t);
        assert_eq!((s.nan, s.inf, s.count), (1, 1, 5));
        assert_eq!((s.min, s.max, s.mean), (Some(-2.0), Some(f64::INFINITY), Some(1.0)));
        assert!(s.is_non_finite());
    }

    #[test]
    fn empty_and_all_nan_have_no_statistics() {
        let e = stats(&Tensor::from_slice(&[0, 3], &Vec::<f32>::new()).unwrap());
        assert_eq!((e.min, e.max, e.mean, e.count), (None, None, None, 0));
        let n = stats(&Tensor::from_slice(&[2], &[f64::NAN, f64::NAN]).unwrap());
        assert_eq!((n.min, n.max, n.mean, n.nan), (None, None, None, 2));
    }

    #[test]
    fn complex_classifies_by_both_parts_and_reports_real_parts() {
        let c = |re, im| Complex32 { re, im };
        let t = Tensor::from_slice(&[3], &[c(1.0, f32::NAN), c(2.0, f32::INFINITY), c(-3.0, 5.0)]).unwrap();
        let s = stats(&t);
        assert_eq!((s.nan, s.inf), (1, 1));
        assert_eq!((s.min, s.max, s.mean), (Some(-3.0), Some(2.0), Some(-3.0)));
    }

    #[test]
    fn ints_and_bools_are_finite() {
        let s = stats(&Tensor::from_slice(&[3], &[-5i32, 7, 1]).unwrap());
        assert_eq!((s.min, s.max, s.mean, s.nan, s.inf), (Some(-5.0), Some(7.0), Some(1.0), 0, 0));
        let b = stats(&Tensor::from_slice(&[4], &[true, false, true, true]).unwrap());
        assert_eq!((b.min, b.max, b.mean), (Some(0.0), Some(1.0), Some(0.75)));
    }

    #[test]
    fn display_is_aligned_and_names_the_first_non_finite_value() {
        let ok = value_stats(NodeId(0), 0, "Input".into(), &Tensor::from_slice(&[2], &[1.0f32, 2.0]).unwrap());
        let bad = stats(&Tensor::from_slice(&[1], &[f32::NAN]).unwrap());
        let empty = value_stats(NodeId(4), 1, "TopK".into(), &Tensor::zeros(DType::I64, &[0]));
        let r = TraceReport { values: vec![ok, bad, empty], first_non_finite: Some(1) };
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].starts_with("node  out  op"), "{text}");
        assert!(lines[3].contains(" - "), "{text}");
        assert_eq!(lines[4], "first non-finite value: node 3 (Unary.Log) output 0");
        let col = |l: &str| l.find("dtype").or_else(|| l.find("F32")).or_else(|| l.find("I64"));
        assert_eq!(col(lines[0]), col(lines[1]));
        assert_eq!(col(lines[1]), col(lines[3]));
        let none = TraceReport { values: vec![], first_non_finite: None };
        assert!(none.to_string().ends_with("no NaN or inf"));
    }
}
