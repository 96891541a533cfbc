//! A deterministic, seedable fuzzer of the graph front end, both backends and the file readers.
//!
//! Every case is derived from `(FuzzOptions::seed, case index)` alone, so a failure printed as
//! `case 17 of seed 0x2a` is reproduced by [`FuzzOptions::only`] = `Some(17)` with the same seed
//! (docs/FUZZING.md). A case runs on its own thread under `catch_unwind` and a deadline: a panic
//! or a case that outlives [`FuzzOptions::case_timeout`] is a failure, as is a valid graph whose
//! outputs differ between the backend under test and the reference beyond the op table's
//! tolerance.
//!
//! - [`graphs`]: graphs built through `GraphBuilder`, `Graph::from_parts` and the JSON reader,
//!   valid and invalid, then validated, compiled and (when small) run on both backends;
//! - [`bytes`]: random and mutated bytes for `from_npy` and the JSON reader;
//! - [`isolate`]: one case on a thread, with its panic caught and its deadline;
//! - [`summary`]: the counts and findings, and the one-line summary the tests print.
//!
//! Nothing here reads the environment: the tests turn `FUZZ_CASES` / `FUZZ_SEED` into options.

pub mod bytes;
pub mod check;
pub mod graphs;
pub mod isolate;
pub mod precondition;
pub mod summary;

use crate::rng::Rng;
use backend_api::{Backend, Graph, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use summary::{Finding, FindingKind, Summary};

/// The JSON graph codec, passed in by the caller: the suite's library links `backend-api`
/// without its `serde` feature, the tests with it.
#[derive(Clone, Copy, Debug)]
pub struct JsonCodec {
    /// `backend_api::json::to_json`.
    pub to_json: fn(&Graph) -> Result<String>,
    /// `backend_api::json::from_json`.
    pub from_json: fn(&str) -> Result<Graph>,
}

/// What to fuzz, for how long, and how hard.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// The run's seed; each case's seed is derived from it and the case index.
    pub seed: u64,
    /// Graph cases (GraphBuilder, from_parts, JSON, generator problems).
    pub cases: usize,
    /// Byte-input cases (`.npy` and JSON text).
    pub byte_cases: usize,
    /// Run only this case index (graph cases first, then byte cases), to reproduce a finding.
    pub only: Option<usize>,
    /// Stop starting cases after this long (the summary says how many were left).
    pub time_budget: Duration,
    /// A case still running after this long is a hang.
    pub case_timeout: Duration,
    /// Draw huge dims and sizes (products near or past `usize::MAX`, `.npy` headers claiming
    /// terabytes, non-ASCII headers) besides small ones: every such case must end in an error,
    /// never a panic or an abort. On by default.
    pub hostile_sizes: bool,
    /// Graphs whose every value has at most this many elements run on the backends; larger ones
    /// are only compiled.
    pub max_run_elements: usize,
    /// Graphs declaring a value larger than this (bytes, or elements ignoring zero dims) are
    /// only compiled, never run (compile must refuse what no device can hold).
    pub compile_cap_bytes: usize,
    /// The backend under test (registry name); `None` runs the reference alone.
    pub under_test: Option<String>,
    /// The reference backend (registry name).
    pub reference: String,
    /// The JSON codec; `None` skips the JSON cases (counted as skipped).
    pub json: Option<JsonCodec>,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            seed: 0,
            cases: 64,
            byte_cases: 256,
            only: None,
            time_budget: Duration::from_secs(40),
            case_timeout: Duration::from_secs(20),
            hostile_sizes: true,
            max_run_elements: 4096,
            compile_cap_bytes: 1 << 26,
            under_test: Some(crate::DEFAULT_BACKEND.to_string()),
            reference: crate::REFERENCE.to_string(),
            json: None,
        }
    }
}

/// The backends a case runs on, shared with the case's thread.
pub struct Backends {
    /// The oracle.
    pub reference: Box<dyn Backend>,
    /// The backend under test, if any.
    pub under_test: Option<Box<dyn Backend>>,
}

impl Backends {
    /// Creates the backends named by `options` from the registry.
    pub fn new(options: &FuzzOptions) -> Result<Backends> {
        let reference = backend_api::create(&options.reference)?;
        let under_test = match &options.under_test {
            Some(name) => Some(backend_api::create(name)?),
            None => None,
        };
        Ok(Backends { reference, under_test })
    }
}

/// The seed of case `index` of a run seeded `seed` (SplitMix of both, so neighbouring cases are
/// unrelated).
pub fn case_seed(seed: u64, index: usize) -> u64 {
    let index = u64::try_from(index).unwrap_or(u64::MAX);
    let mut r = Rng::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64()
}

/// Runs the fuzzer: `options.cases` graph cases (indices `0..cases`) and `options.byte_cases`
/// byte cases (indices `cases..`), interleaved in proportion so that a time budget cuts both
/// alike, each isolated; returns the summary (the caller decides what fails).
pub fn run(options: &FuzzOptions) -> Result<Summary> {
    let start = Instant::now();
    let mut backends = Arc::new(Backends::new(options)?);
    let mut summary = Summary::new(options);
    let (n_graph, n_byte) = (options.cases, options.byte_cases);
    let (mut g, mut b) = (0usize, 0usize);
    while g < n_graph || b < n_byte {
        // The kind that is further behind its share goes next (cross-multiplied: no division).
        let graph_next = b >= n_byte || (g < n_graph && g.saturating_mul(n_byte) <= b.saturating_mul(n_graph));
        let index = if graph_next { g } else { n_graph.saturating_add(b) };
        if graph_next {
            g += 1;
        } else {
            b += 1;
        }
        if options.only.is_some_and(|o| o != index) {
            continue;
        }
        if start.elapsed() > options.time_budget || summary.hangs() >= 3 {
            summary.out_of_time += 1;
            continue;
        }
        let fresh = run_one(options, &backends, &mut summary, index, graph_next);
        // A panic may leave a backend's device or locks in any state, and a hung case still holds
        // its backends: later cases get new ones, so one finding does not cascade.
        if fresh {
            backends = Arc::new(Backends::new(options)?);
        }
    }
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Runs case `index` isolated and records it; returns whether it panicked or hung.
fn run_one(options: &FuzzOptions, backends: &Arc<Backends>, summary: &mut Summary, index: usize, graph: bool) -> bool {
    let seed = case_seed(options.seed, index);
    let o = options.clone();
    let outcome = if graph {
        summary.graph_cases += 1;
        let b = Arc::clone(backends);
        isolate::run(options.case_timeout, move |note| graphs::case(&b, &o, seed, note))
    } else {
        summary.byte_cases += 1;
        isolate::run(options.case_timeout, move |note| bytes::case(&o, seed, note))
    };
    summary.record(index, seed, outcome)
}
