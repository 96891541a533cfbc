//! The control-flow rows' problems against themselves unrolled: every generated problem of
//! `If`, `While` and `Scan` (every dtype) is rewritten without control ops
//! (`conformance::problems::control::unroll`, which computes conditions on the reference) and
//! both graphs run on `cpu-ref`; the same ops in the same order must give the same bits. The
//! cases must also reach the edges the generators promise (both branches, loops that never
//! start, bounds that cut loops short, empty scans, nesting three deep), counted over a row.

use backend_api::op::ScanAttrs;
use backend_api::{Backend, Graph, Op};
use conformance::problems::control::{unroll, unroll::run_with, Trace};
use conformance::{variants, Problem};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};

use backend_cpu_ref as _;

/// Cases per dtype variant (11 dtypes per row); `PROPTEST_CASES` overrides.
const CASES: u32 = 12;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(CASES)
}

/// Whether any node of `g` (bodies included) is a control op.
fn has_control(g: &Graph) -> bool {
    g.nodes().iter().any(|n| matches!(n.op, Op::If(_) | Op::While(_) | Op::Scan(_)))
}

/// The attributes of every `Scan` in `g`, bodies included.
fn scans(g: &Graph, out: &mut Vec<ScanAttrs>) {
    for n in g.nodes() {
        if let Op::Scan(a) = &n.op {
            out.push(a.clone());
        }
        for b in n.op.subgraphs() {
            scans(b, out);
        }
    }
}

/// Checks one problem; returns what unrolling met.
fn check(oracle: &dyn Backend, p: &Problem) -> Result<Trace, String> {
    let want = run_with(oracle, &p.graph, p).map_err(|e| format!("the control-flow graph failed: {e}"))?;
    let u = unroll(p, oracle).map_err(|e| format!("unrolling failed: {e}"))?;
    if has_control(&u.graph) {
        return Err("the unrolled graph still has control ops".into());
    }
    let got = run_with(oracle, &u.graph, p).map_err(|e| format!("the unrolled graph failed: {e}"))?;
    if got.len() != want.len() {
        return Err(format!("{} outputs unrolled, {} with control flow", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if (g.dtype(), g.shape(), g.bytes()) != (w.dtype(), w.shape(), w.bytes()) {
            return Err(format!("output {i} differs:\nunrolled {g:?}\ncontrol flow {w:?}"));
        }
    }
    Ok(u.trace)
}

/// Every case of every variant of `row`, with the traces added up, and the attributes of every
/// `Scan` met.
fn check_row(row: &str) -> (Trace, Vec<ScanAttrs>) {
    let oracle = backend_api::create("cpu-ref").unwrap();
    let mut total = Trace::default();
    let mut all_scans = Vec::new();
    let mut failures = Vec::new();
    for v in variants(row).unwrap() {
        let mut runner = TestRunner::new(Config { cases: cases(), ..Config::default() });
        for i in 0..cases() {
            let p = v.strategy.new_tree(&mut runner).unwrap().current();
            let p = p.unwrap_or_else(|e| panic!("{row} [{}] case {i}: generator error: {e}", v.label));
            scans(&p.graph, &mut all_scans);
            match check(oracle.as_ref(), &p) {
                Ok(t) => add(&mut total, t),
                Err(e) => failures.push(format!("{row} [{}] case {i}: {e}\n{p:?}", v.label)),
            }
        }
    }
    assert!(failures.is_empty(), "{} cases failed:\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("{row}: {total:?}");
    (total, all_scans)
}

fn add(total: &mut Trace, t: Trace) {
    total.then_taken += t.then_taken;
    total.else_taken += t.else_taken;
    total.while_trips.extend(t.while_trips);
    total.while_zero_bound += t.while_zero_bound;
    total.while_false_at_start += t.while_false_at_start;
    total.while_cut += t.while_cut;
    total.scan_lengths.extend(t.scan_lengths);
    total.depth = total.depth.max(t.depth);
}

#[test]
fn if_equals_its_selected_branch() {
    let (t, _) = check_row("If");
    assert!(t.then_taken > 0 && t.else_taken > 0, "both branches are taken: {t:?}");
    assert!(t.depth >= 3, "some bodies nest three deep: {t:?}");
}

#[test]
fn while_equals_its_unrolled_loop() {
    let (t, _) = check_row("While");
    assert!(t.while_zero_bound > 0 && t.while_false_at_start > 0 && t.while_cut > 0, "loop edges: {t:?}");
    assert!(t.while_trips.iter().any(|&n| n >= 5), "some loops run five times or more: {t:?}");
    assert!(t.depth >= 3, "some bodies nest three deep: {t:?}");
}

#[test]
fn scan_equals_its_unrolled_steps() {
    let (t, scans) = check_row("Scan");
    assert!(t.scan_lengths.contains(&0) && t.scan_lengths.iter().any(|&n| n >= 5), "lengths: {t:?}");
    let count = |f: fn(&ScanAttrs) -> bool| scans.iter().filter(|a| f(a)).count();
    let edges = [
        ("no carries", count(|a| a.num_carry == 0)),
        ("carries", count(|a| a.num_carry > 0)),
        ("broadcast inputs", count(|a| a.num_bcast > 0)),
        ("sequence inputs", count(|a| a.num_xs > 0)),
        ("no inputs at all", count(|a| a.num_carry + a.num_bcast + a.num_xs == 0)),
        ("reverse", count(|a| a.reverse)),
        ("trajectories", count(|a| a.save_trajectory)),
    ];
    eprintln!("Scan edges: {edges:?}");
    assert!(edges.iter().all(|(_, n)| *n > 0), "every edge occurs: {edges:?}");
    assert!(t.depth >= 3, "some bodies nest three deep: {t:?}");
}
