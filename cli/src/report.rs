//! `wgml report`: the conformance report (`conformance::report`), printed as TSV; the markdown
//! table is written only where `--docs PATH` says.

use crate::args::ReportArgs;
use crate::progress::Progress;
use anyhow::{Context, Result};
use conformance::report::{expected_keys, markdown, run_backend, tsv};
use conformance::{proptest_config, Status, VariantResult, DEFAULT_BACKEND, DEFAULT_CASES, REFERENCE};
use std::process::ExitCode;
use std::sync::Mutex;

/// Runs the subcommand.
pub fn report(a: &ReportArgs) -> Result<ExitCode> {
    let backends = match a.backends.is_empty() {
        true => vec![DEFAULT_BACKEND.to_string(), REFERENCE.to_string()],
        false => a.backends.clone(),
    };
    // As in the conformance binary: an explicit PROPTEST_CASES wins (proptest reads it itself);
    // otherwise the suite's fast default.
    let cases = a.cases.or(match std::env::var_os("PROPTEST_CASES") {
        Some(_) => None,
        None => Some(DEFAULT_CASES),
    });
    let config = proptest_config(cases, None);
    let mut reports = Vec::new();
    for b in &backends {
        eprintln!("== {b} against {REFERENCE} ({} cases per op and dtype)", config.cases);
        let bar = Mutex::new(Progress::new(b, expected_keys().len() as u64, a.progress));
        let on_result = |r: &VariantResult| {
            if let Ok(mut bar) = bar.lock() {
                // Failures are worth reading at once; passes only move the bar.
                if r.status == Status::Fail || !bar.enabled() {
                    bar.println(&r.tsv());
                }
                bar.inc();
            }
        };
        let report = run_backend(b, &config, a.threads, &on_result);
        if let Ok(mut bar) = bar.lock() {
            bar.finish();
        }
        println!("# backend: {b}");
        print!("{}", tsv(&report));
        reports.push(report);
    }
    if let Some(path) = &a.docs {
        std::fs::write(path, markdown(&reports, &config.cases.to_string()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
