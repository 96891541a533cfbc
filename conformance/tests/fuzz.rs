//! The fuzzer (`conformance::fuzz`) over graphs and byte inputs: fails on any panic, hang or
//! backend mismatch and prints a summary line. `FUZZ_CASES` (graph cases; byte cases are four
//! times as many), `FUZZ_SEED`, `FUZZ_ONLY` (one case index, to reproduce a finding),
//! `FUZZ_SECONDS` (time budget), `FUZZ_HOSTILE=0` (small sizes only) and `FUZZ_BACKEND` (the backend
//! under test, `cpu-ref` alone when set to `none`) override the defaults; docs/FUZZING.md.

use conformance::fuzz::{self, FuzzOptions, JsonCodec};
use std::time::Duration;

fn env_num(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

fn options() -> FuzzOptions {
    let mut o = FuzzOptions {
        json: Some(JsonCodec { to_json: backend_api::json::to_json, from_json: backend_api::json::from_json }),
        ..FuzzOptions::default()
    };
    // Small by default: about 10 s on two cores with lavapipe, and the time budget (40 s) caps it.
    o.cases = 400;
    o.byte_cases = 1600;
    if let Some(n) = env_num("FUZZ_CASES") {
        o.cases = usize::try_from(n).unwrap_or(usize::MAX);
        o.byte_cases = o.cases.saturating_mul(4);
    }
    o.seed = env_num("FUZZ_SEED").unwrap_or(0);
    o.only = env_num("FUZZ_ONLY").and_then(|n| usize::try_from(n).ok());
    if let Some(s) = env_num("FUZZ_SECONDS") {
        o.time_budget = Duration::from_secs(s);
    } else if std::env::var("FUZZ_CASES").is_ok() {
        // An explicit case count is a long run: let it finish.
        o.time_budget = Duration::from_secs(24 * 3600);
    }
    o.hostile_sizes = std::env::var("FUZZ_HOSTILE").map_or(true, |v| v != "0");
    match std::env::var("FUZZ_BACKEND").ok().as_deref() {
        Some("none") => o.under_test = None,
        Some(name) => o.under_test = Some(name.to_string()),
        None => {}
    }
    o
}

#[test]
fn fuzz_graphs_and_bytes() {
    let o = options();
    let summary = match fuzz::run(&o) {
        Ok(s) => s,
        Err(e) => panic!("the fuzzer could not start: {e}"),
    };
    println!("{}", summary.details());
    eprintln!("{}", summary.line());
    assert!(!summary.failed(), "the fuzzer found failures:\n{}", summary.details());
}
