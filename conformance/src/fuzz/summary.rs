//! What a fuzz run found: counts by outcome, errors by kind, skips by reason, and the findings
//! (panics, hangs, mismatches) with the case that reproduces each.

use super::isolate::Isolated;
use super::FuzzOptions;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// What one case saw, step by step (a case may build, compile and run several graphs).
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A step refused the input with an error of this kind (`"Shape"`, …) at this stage.
    Rejected {
        /// `build`, `from_parts`, `from_json`, `compile`, `run`, `from_npy`.
        stage: &'static str,
        /// The error kind's name.
        kind: &'static str,
    },
    /// A step accepted its input.
    Accepted(&'static str),
    /// Outputs of both backends compared inside the tolerance.
    Compared,
    /// Something was not done, and why (counted by reason in the summary).
    Skipped(String),
    /// Both backends ran and their outputs differ, or one ran and the other failed at run time.
    Mismatch(String),
}

/// What a case returns: its events, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CaseReport {
    /// The events.
    pub events: Vec<Event>,
}

impl CaseReport {
    /// Adds an event.
    pub fn push(&mut self, e: Event) {
        self.events.push(e);
    }

    /// Adds a skip with its reason.
    pub fn skip(&mut self, why: impl Into<String>) {
        self.events.push(Event::Skipped(why.into()));
    }

    /// Records the outcome of a fallible step: accepted, or rejected with the error's kind.
    pub fn step<T>(&mut self, stage: &'static str, r: &backend_api::Result<T>) {
        match r {
            Ok(_) => self.push(Event::Accepted(stage)),
            Err(e) => self.push(Event::Rejected { stage, kind: e.kind().name() }),
        }
    }
}

/// The class of a finding: each fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// A panic (caught).
    Panic,
    /// A case past its deadline.
    Hang,
    /// Backends disagree on a valid graph.
    Mismatch,
}

/// One failure with the case that reproduces it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// The case index (`FuzzOptions::only`).
    pub index: usize,
    /// The case's derived seed.
    pub case_seed: u64,
    /// The panic message, or the mismatch report.
    pub message: String,
    /// What the case was doing (its last note; the graph or bytes in short).
    pub note: String,
}

/// The result of a run.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The run's seed.
    pub seed: u64,
    /// The run's graph case count (case indices past it are byte cases).
    pub cases: usize,
    /// Whether hostile sizes were drawn.
    pub hostile_sizes: bool,
    /// Graph cases run.
    pub graph_cases: usize,
    /// Byte cases run.
    pub byte_cases: usize,
    /// Cases not started: the time budget ran out (or three hangs stopped the run).
    pub out_of_time: usize,
    /// Accepted steps, by stage.
    pub accepted: BTreeMap<&'static str, usize>,
    /// Rejected steps, by `stage:kind`.
    pub rejected: BTreeMap<String, usize>,
    /// Skips, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Comparisons that passed.
    pub compared: usize,
    /// Panics, hangs and mismatches.
    pub findings: Vec<Finding>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// An empty summary for a run with `options`.
    pub fn new(options: &FuzzOptions) -> Summary {
        Summary { seed: options.seed, cases: options.cases, hostile_sizes: options.hostile_sizes, ..Summary::default() }
    }

    /// Adds the outcome of case `index`; returns whether it panicked or hung (the backends
    /// should then be recreated).
    pub fn record(&mut self, index: usize, case_seed: u64, outcome: Isolated<CaseReport>) -> bool {
        let finding = |kind, message: String, note: String| Finding { kind, index, case_seed, message, note };
        match outcome {
            Isolated::Done(report) => {
                for e in report.events {
                    self.event(index, case_seed, e);
                }
                false
            }
            Isolated::Panic { message, note } => {
                self.findings.push(finding(FindingKind::Panic, message, note));
                true
            }
            Isolated::Hang { note } => {
                self.findings.push(finding(FindingKind::Hang, "no result before the case timeout".into(), note));
                true
            }
        }
    }

    fn event(&mut self, index: usize, case_seed: u64, e: Event) {
        match e {
            Event::Rejected { stage, kind } => *self.rejected.entry(format!("{stage}:{kind}")).or_default() += 1,
            Event::Accepted(stage) => *self.accepted.entry(stage).or_default() += 1,
            Event::Compared => self.compared += 1,
            Event::Skipped(why) => *self.skipped.entry(why).or_default() += 1,
            Event::Mismatch(message) => self.findings.push(Finding {
                kind: FindingKind::Mismatch,
                index,
                case_seed,
                message,
                note: String::new(),
            }),
        }
    }

    /// Findings of `kind`.
    pub fn count(&self, kind: FindingKind) -> usize {
        self.findings.iter().filter(|f| f.kind == kind).count()
    }

    /// Hangs so far.
    pub fn hangs(&self) -> usize {
        self.count(FindingKind::Hang)
    }

    /// Whether the run found any panic, hang or mismatch.
    pub fn failed(&self) -> bool {
        !self.findings.is_empty()
    }

    /// The one-line summary: cases, findings by kind, errors by kind, skips.
    pub fn line(&self) -> String {
        let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, n) in &self.rejected {
            *by_kind.entry(k.rsplit(':').next().unwrap_or(k)).or_default() += n;
        }
        let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let skipped: usize = self.skipped.values().sum();
        format!(
            "fuzz seed {:#x}{}: {} graph cases, {} byte cases in {:.1}s; {} panics, {} hangs, {} mismatches; \
             {} compared; errors by kind: {}; {} skipped; {} not started (time budget or 3 hangs)",
            self.seed,
            if self.hostile_sizes { " (hostile sizes)" } else { "" },
            self.graph_cases,
            self.byte_cases,
            self.elapsed.as_secs_f64(),
            self.count(FindingKind::Panic),
            self.count(FindingKind::Hang),
            self.count(FindingKind::Mismatch),
            self.compared,
            if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") },
            skipped,
            self.out_of_time,
        )
    }

    /// Everything: the line, accepted and rejected steps, skips by reason, and each finding with
    /// how to reproduce it.
    pub fn details(&self) -> String {
        let mut s = self.line();
        s.push('\n');
        let _ = writeln!(s, "accepted: {:?}", self.accepted);
        let _ = writeln!(s, "rejected (stage:kind): {:?}", self.rejected);
        for (why, n) in &self.skipped {
            let _ = writeln!(s, "skipped {n}x: {why}");
        }
        for f in &self.findings {
            let _ = writeln!(
                s,
                "{:?} in case {} (case seed {:#x}; reproduce with FUZZ_SEED={:#x} FUZZ_CASES={} FUZZ_ONLY={}{}): {}\n  \
                 while: {}",
                f.kind,
                f.index,
                f.case_seed,
                self.seed,
                self.cases,
                f.index,
                if self.hostile_sizes { "" } else { " FUZZ_HOSTILE=0" },
                f.message,
                f.note
            );
        }
        s
    }
}
