//! `wgml compare`: the same graph and data on two backends (or against saved outputs), every
//! output checked elementwise with `|got − want| ≤ atol + rtol·|want|`.
//!
//! NaN matches only NaN and an infinity only the same infinity; integers and Bool must be equal;
//! C64 is compared per part like F32. The reference (`--against` / `--expected`) is `want`.

use crate::args::CompareArgs;
use crate::feeds::{gather, Feeds};
use crate::io::{bf16_to_f32, load_expected, load_graph};
use crate::session::{compile, open_backend};
use anyhow::{Context, Result};
use backend_api::{element_to_f64, DType, Graph, Tensor};
use std::process::ExitCode;

/// `(rtol, atol)` used for a dtype when the flags do not override them.
pub fn default_tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F32 | DType::C64 => (1e-4, 1e-5),
        DType::F16 | DType::BF16 => (1e-2, 1e-3),
        DType::F64 => (1e-10, 1e-12),
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool => (0.0, 0.0),
    }
}

/// The result of comparing one output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputDiff {
    /// Largest `|got − want|` (inf where one side is NaN or inf and the other is not the same).
    pub max_abs: f64,
    /// Largest `|got − want| / |want|` (0/0 counts as 0, x/0 as inf).
    pub max_rel: f64,
    /// Elements (C64: parts) outside tolerance.
    pub mismatches: usize,
    /// First mismatch: flat element index, got, want.
    pub first: Option<(usize, f64, f64)>,
    /// A dtype or shape mismatch, which fails without an elementwise comparison.
    pub structural: Option<String>,
}

impl OutputDiff {
    /// Whether the output passes.
    pub fn passes(&self) -> bool {
        self.structural.is_none() && self.mismatches == 0
    }
}

/// Whether one pair of numbers is within tolerance, with NaN and infinities matching exactly.
pub fn within(got: f64, want: f64, rtol: f64, atol: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= atol + rtol * want.abs()
}

/// `(abs, rel)` error of one pair, consistent with [`within`] for the non-finite cases.
fn errors(got: f64, want: f64) -> (f64, f64) {
    let same_special = (got.is_nan() && want.is_nan()) || (got.is_infinite() && got == want);
    if same_special {
        return (0.0, 0.0);
    }
    let abs = (got - want).abs();
    let abs = if abs.is_nan() { f64::INFINITY } else { abs };
    let rel = match (abs == 0.0, want == 0.0) {
        (true, _) => 0.0,
        (false, true) => f64::INFINITY,
        (false, false) => abs / want.abs(),
    };
    (abs, rel)
}

/// The numbers compared for a tensor: one per element, two per C64 element (real, imaginary).
fn numbers(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::C64 => t.bytes().chunks_exact(4).map(|b| element_to_f64(DType::F32, b)).collect(),
        _ => t.view().to_f64_lossy(),
    }
}

/// Compares `got` with `want`; `tolerance` overrides the dtype's default `(rtol, atol)`.
/// Integer and Bool outputs compare their bytes, exactly, whatever the tolerance.
pub fn compare_tensors(got: &Tensor, want: &Tensor, tolerance: (Option<f64>, Option<f64>)) -> OutputDiff {
    let mut d = OutputDiff { max_abs: 0.0, max_rel: 0.0, mismatches: 0, first: None, structural: None };
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        d.structural = Some(format!("got {}{:?}, want {}{:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
        return d;
    }
    let dtype = got.dtype();
    let exact = !dtype.is_float() && dtype != DType::C64;
    let (rtol, atol) = default_tolerance(dtype);
    let (rtol, atol) = (tolerance.0.unwrap_or(rtol), tolerance.1.unwrap_or(atol));
    let per_element = if dtype == DType::C64 { 2 } else { 1 };
    let size = dtype.size() / per_element;
    let pairs = numbers(got)
        .into_iter()
        .zip(numbers(want))
        .zip(got.bytes().chunks_exact(size).zip(want.bytes().chunks_exact(size)));
    for (i, ((g, w), (gb, wb))) in pairs.enumerate() {
        let (abs, rel) = errors(g, w);
        d.max_abs = d.max_abs.max(abs);
        d.max_rel = d.max_rel.max(rel);
        // Integers compare bytes: I64 beyond 2^53 is not exact in f64. Bool is normalised already.
        let ok = if exact {
            gb == wb || (dtype == DType::Bool && (gb[0] != 0) == (wb[0] != 0))
        } else {
            within(g, w, rtol, atol)
        };
        if !ok {
            d.mismatches += 1;
            d.first.get_or_insert((i / per_element, g, w));
        }
    }
    d
}

/// `[i, j, k]` of flat element index `flat` in a row-major `shape`.
pub fn multi_index(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (k, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[k] = flat % n;
            flat /= n;
        }
    }
    idx
}

/// Runs the subcommand: exit 0 when every output passes, 1 otherwise.
pub fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let graph = load_graph(&a.graph)?;
    let backend = open_backend(&a.backend)?;
    let (mut exe, _) = compile(backend.as_ref(), &graph)?;
    let feeds = gather(exe.signature(), &a.data)?;
    feeds.set_params(exe.as_mut())?;
    let got = exe.run(&feeds.input_views()).map_err(|e| feeds.explain_run_error(e))?;
    let (reference, mut want) = match (&a.against, &a.expected) {
        (Some(name), _) => (format!("backend {name}"), run_on(name, &graph, &feeds)?),
        (None, Some(dir)) => (format!("saved outputs in {}", dir.display()), load_expected(dir, got.len())?),
        (None, None) => anyhow::bail!("give --against BACKEND or --expected DIR"),
    };
    // `run --out` saves BF16 outputs widened to F32; widen ours the same way to compare them.
    let got: Vec<Tensor> = got
        .into_iter()
        .zip(&want)
        .map(|(g, w)| if g.dtype() == DType::BF16 && w.dtype() == DType::F32 { bf16_to_f32(&g) } else { Ok(g) })
        .collect::<Result<_>>()?;
    want.truncate(got.len());
    println!("comparing backend {} against {reference}", a.backend);
    let mut all_pass = true;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let diff = compare_tensors(g, w, (a.rtol, a.atol));
        all_pass &= diff.passes();
        println!("{}", describe(i, g, &diff, (a.rtol, a.atol)));
    }
    println!("{}", if all_pass { "all outputs match" } else { "MISMATCH" });
    Ok(if all_pass { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Compiles and runs the graph on the reference backend with the same data.
fn run_on(name: &str, graph: &Graph, feeds: &Feeds) -> Result<Vec<Tensor>> {
    let backend = open_backend(name)?;
    let (mut exe, _) = compile(backend.as_ref(), graph)?;
    feeds.set_params(exe.as_mut())?;
    exe.run(&feeds.input_views())
        .map_err(|e| feeds.explain_run_error(e))
        .with_context(|| format!("on backend {name:?}"))
}

/// One line per output: name, type, errors, tolerance, verdict.
fn describe(i: usize, got: &Tensor, d: &OutputDiff, flags: (Option<f64>, Option<f64>)) -> String {
    let head = format!("out{i}  {}{:?}", got.dtype(), got.shape());
    if let Some(s) = &d.structural {
        return format!("{head}  FAIL: {s}");
    }
    let (rtol, atol) = default_tolerance(got.dtype());
    let tol = match got.dtype().is_float() || got.dtype() == DType::C64 {
        true => format!("rtol {:e} atol {:e}", flags.0.unwrap_or(rtol), flags.1.unwrap_or(atol)),
        false => "exact".to_string(),
    };
    let verdict = match d.first {
        None => "pass".to_string(),
        Some((at, g, w)) => format!(
            "FAIL: {} mismatching, first at {:?}: got {g}, want {w}",
            d.mismatches,
            multi_index(at, got.shape())
        ),
    };
    format!("{head}  max_abs {:.3e}  max_rel {:.3e}  ({tol})  {verdict}", d.max_abs, d.max_rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::Complex32;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor::from_slice(&[v.len()], v).unwrap()
    }

    #[test]
    fn nan_and_inf_match_only_themselves() {
        assert!(within(f64::NAN, f64::NAN, 0.0, 0.0));
        assert!(!within(f64::NAN, 1.0, 1.0, 1.0));
        assert!(!within(1.0, f64::NAN, 1.0, 1.0));
        assert!(within(f64::INFINITY, f64::INFINITY, 0.0, 0.0));
        assert!(!within(f64::INFINITY, f64::NEG_INFINITY, 1.0, 1.0));
        assert!(!within(1e300, f64::INFINITY, 1.0, 1.0));
        assert!(within(1.5, 1.0, 0.5, 0.0));
        assert!(!within(1.5, 1.0, 0.25, 0.0));
        assert!(within(-1.25, -1.0, 0.0, 0.25) && !within(-1.25, -1.0, 0.0, 0.125));
        assert!(within(2.5, 2.0, 0.125, 0.25), "atol + rtol·|want| = 0.5");
    }

    #[test]
    fn defaults_by_dtype_and_flags_override() {
        let want = f32s(&[1.0, 2.0, f32::NAN, f32::NEG_INFINITY]);
        let got = f32s(&[1.00005, 2.0, f32::NAN, f32::NEG_INFINITY]);
        let d = compare_tensors(&got, &want, (None, None));
        assert!(d.passes(), "{d:?}");
        assert!((d.max_abs - 5e-5).abs() < 1e-6 && (d.max_rel - 5e-5).abs() < 1e-6, "{d:?}");
        let d = compare_tensors(&got, &want, (Some(0.0), Some(0.0)));
        assert_eq!((d.mismatches, d.first.map(|f| f.0)), (1, Some(0)));
        let f64s = |v: f64| Tensor::from_slice(&[1], &[v]).unwrap();
        assert!(!compare_tensors(&f64s(1.0 + 1e-9), &f64s(1.0), (None, None)).passes());
    }

    #[test]
    fn nan_against_a_number_fails_with_infinite_error() {
        let d = compare_tensors(&f32s(&[0.0, f32::NAN]), &f32s(&[0.0, 3.0]), (Some(1.0), Some(1.0)));
        assert!(!d.passes());
        assert_eq!(d.max_abs, f64::INFINITY);
        assert_eq!(d.first.map(|f| (f.0, f.2)), Some((1, 3.0)));
    }

    #[test]
    fn integers_are_exact_whatever_the_tolerance() {
        let a = Tensor::from_slice(&[2], &[i64::MAX, 5]).unwrap();
        let b = Tensor::from_slice(&[2], &[i64::MAX - 1, 5]).unwrap();
        let d = compare_tensors(&a, &b, (Some(1.0), Some(1.0)));
        assert_eq!(d.mismatches, 1, "i64 beyond 2^53 compared exactly");
        let t = Tensor::from_slice(&[2], &[true, false]).unwrap();
        assert!(compare_tensors(&t, &t, (None, None)).passes());
    }

    #[test]
    fn complex_compares_each_part_and_structure_must_match() {
        let c = |re, im| Complex32 { re, im };
        let a = Tensor::from_slice(&[2], &[c(1.0, 2.0), c(3.0, 4.0)]).unwrap();
        let b = Tensor::from_slice(&[2], &[c(1.0, 2.0), c(3.0, 4.5)]).unwrap();
        let d = compare_tensors(&a, &b, (None, None));
        assert_eq!((d.mismatches, d.first.map(|f| f.0)), (1, Some(1)), "element 1, imaginary part");
        let other_shape = Tensor::from_slice(&[1, 2], &[c(1.0, 2.0), c(3.0, 4.0)]).unwrap();
        assert!(compare_tensors(&a, &other_shape, (None, None)).structural.is_some());
    }

    #[test]
    fn multi_index_is_row_major() {
        assert_eq!(multi_index(5, &[2, 3]), vec![1, 2]);
        assert_eq!(multi_index(0, &[]), Vec::<usize>::new());
    }
}
