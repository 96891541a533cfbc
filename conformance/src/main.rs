//! `cargo run -p conformance --release -- report [--backend NAME]... [--cases N] [--threads N]
//! [--out PATH | --no-docs]`
//!
//! Property-tests every op-table row on each backend (default: `wgpu` and `cpu-ref`) against
//! `cpu-ref`, prints `op<TAB>dtype<TAB>status<TAB>cases<TAB>worst_error` per (op, dtype),
//! regenerates `docs/ops.md` with one column per backend and the README's list of ops not run
//! yet (unless `--no-docs`).
//!
//! `cargo run -p conformance -- readme` regenerates only that README section (fast: it reads
//! each backend's capabilities and runs nothing).

use conformance::report::{markdown, run_backend, tsv};
use conformance::{proptest_config, readme, VariantResult, DEFAULT_BACKEND, DEFAULT_CASES, REFERENCE};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: conformance report [--backend NAME]... [--cases N] [--threads N] [--out PATH | --no-docs]\n       conformance readme";

/// The README whose generated section `report` and `readme` rewrite.
const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");

struct Args {
    backends: Vec<String>,
    cases: Option<u32>,
    threads: usize,
    out: Option<String>,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    if it.next().as_deref() != Some("report") {
        return Err(USAGE.to_string());
    }
    let default_out = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ops.md").to_string();
    let mut a = Args { backends: Vec::new(), cases: None, threads: 2, out: Some(default_out) };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--backend" => a.backends.push(value()?),
            "--cases" => a.cases = Some(value()?.parse().map_err(|e| format!("--cases: {e}"))?),
            "--threads" => a.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--out" => a.out = Some(value()?),
            "--no-docs" => a.out = None,
            _ => return Err(format!("unknown argument {flag:?}\n{USAGE}")),
        }
    }
    if a.backends.is_empty() {
        a.backends = vec![DEFAULT_BACKEND.to_string(), REFERENCE.to_string()];
    }
    Ok(a)
}

fn progress(r: &VariantResult) {
    eprintln!("{}", r.tsv());
    if let Some(m) = &r.message {
        let short: Vec<&str> = m.lines().take(12).collect();
        eprintln!("    {}", short.join("\n    "));
    }
}

/// Rewrites the README's not-lowered section; a note (not a failure) when the README has no
/// markers or a backend cannot be created.
fn write_readme() -> ExitCode {
    let caps = match readme::capabilities() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("README.md not updated: {e}");
            return ExitCode::SUCCESS;
        }
    };
    let text = match std::fs::read_to_string(README) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {README}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(new) = readme::replace_section(&text, &readme::section(&caps)) else {
        eprintln!(
            "README.md has no {} … {} markers; its not-lowered section was not written",
            readme::BEGIN,
            readme::END
        );
        return ExitCode::SUCCESS;
    };
    if new != text {
        if let Err(e) = std::fs::write(README, new) {
            eprintln!("cannot write {README}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote the not-lowered section of {README}");
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("readme") {
        return write_readme();
    }
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // An explicit PROPTEST_CASES wins (proptest reads it); otherwise the fast default.
    let cases = args.cases.or(match std::env::var_os("PROPTEST_CASES") {
        Some(_) => None,
        None => Some(DEFAULT_CASES),
    });
    let config = proptest_config(cases, None);
    let mut reports = Vec::new();
    let mut stdout = std::io::stdout();
    for b in &args.backends {
        eprintln!("== {b} against {REFERENCE} ({} cases per op and dtype)", config.cases);
        let report = run_backend(b, &config, args.threads, &progress);
        let _ = writeln!(stdout, "# backend: {b}");
        let _ = write!(stdout, "{}", tsv(&report));
        reports.push(report);
    }
    if let Some(path) = &args.out {
        if let Err(e) = std::fs::write(path, markdown(&reports, &config.cases.to_string())) {
            eprintln!("cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {path}");
        return write_readme();
    }
    ExitCode::SUCCESS
}
