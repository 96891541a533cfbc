//! `conformance`: property tests of every op of the op table on any registered backend, against
//! the `cpu-ref` oracle (SPEC-ops.md §1.11).
//!
//! - [`problems`]: one proptest strategy per op-table row and dtype, producing a [`Problem`]
//!   (graph, inputs, params and, for magnitude-scaled ops, a magnitude graph);
//! - [`compare`]: elementwise comparison by tolerance class with the spec's equivalences;
//! - [`runner`]: runs problems on the backend under test and the reference;
//! - [`report`]: the op × dtype × backend table (`docs/ops.md`);
//! - [`readme`]: the README section of ops each backend does not run yet;
//! - [`expected`]: the cases each backend is known to refuse as `Unsupported`, with reasons.
//!
//! Rows without a generator must be listed in [`NOT_COVERED`] with a reason; a test fails when a
//! row of the op table is in neither place, so a new op cannot go untested silently.
//!
//! # Adding a generator for an op
//!
//! 1. In `src/problems/<family>.rs` (or `<family>/`), match the row name in the family's `variants(row)` and return
//!    `per_dtype(row, |dtype| skeleton(ranks, cap, n_operands).prop_map(move |sk| case(dtype, &sk)).boxed())`.
//! 2. Write `case(dtype, &Skeleton) -> Generated`: draw attributes and data from `sk.rng()`
//!    (values from a [`values::Values`] domain: the op's test domain plus its special values),
//!    add operands with `ProblemBuilder::leaf(sk.kind(i), tensor)`, add the op with `pb.g()`, and
//!    finish with `pb.finish(&[y])`, or `pb.finish_with_magnitude(&[y], |g, abs| …)` for an op
//!    marked (M): the closure gets every leaf as `|Cast(leaf, F64)|` and builds `M` per element.
//! 3. Remove the row from [`NOT_COVERED`] and add `name => "Row"` to `op_tests!` in `tests/ops.rs`.
//!    `cargo test -p conformance` checks that the generator covers every dtype of the row, builds
//!    valid graphs, and passes on `CONFORMANCE_BACKEND=cpu-ref`.
#![warn(missing_docs)]

// The backends register themselves with `inventory`; a crate nothing refers to may be dropped
// by the linker together with its registration, so the suite names them explicitly.
use backend_cpu_ref as _;
#[cfg(feature = "wgpu")]
use backend_wgpu as _;

pub mod compare;
pub mod display;
pub mod expected;
pub mod fuzz;
pub mod problem;
pub mod problems;
pub mod readme;
pub mod report;
pub mod rng;
pub mod runner;
pub mod shapes;
pub mod values;

pub use expected::{expected_unsupported, ExpectedUnsupported, EXPECTED_UNSUPPORTED};
pub use problem::{Generated, LeafKind, Problem, ProblemBuilder};
pub use problems::{variants, Variant};
pub use runner::{
    proptest_config, CaseOutcome, Runner, Status, VariantResult, DEFAULT_BACKEND, DEFAULT_CASES, REFERENCE,
};

/// How the reasons of rows that no backend runs begin; a test checks that no backend lists them.
pub const NO_BACKEND: &str = "no generator yet: no backend implements";

const ATTENTION: &str = "no generator yet: no backend implements the attention backward op (§2.8.2)";
const SEQUENCE: &str =
    "no generator yet: cpu-ref runs the state-space scans (hand-computed cases); wgpu does not run them yet (§2.10)";
const SIGNAL: &str = "no generator yet: no backend implements signal processing (§2.11)";
const CUSTOM: &str = "no generator yet: no backend implements custom ops (§2.15)";
const BACKWARD: &str = "no generator yet: no backend implements this training backward op (§2.16)";
const SPLAT: &str = "no generator yet: no backend implements Gaussian splatting (§2.17, feature `splat`)";

/// Op-table rows deliberately without a problem generator, with the reason. An entry leaves
/// this list when its generator is written (the coverage test rejects a row in both places).
pub const NOT_COVERED: &[(&str, &str)] = &[
    ("AttentionBackward", ATTENTION),
    ("SelectiveScan", SEQUENCE),
    ("Mamba2", SEQUENCE),
    ("GatedDeltaNet", SEQUENCE),
    ("Fft", SIGNAL),
    ("LogMel", SIGNAL),
    ("WelchPeaks", SIGNAL),
    ("Custom", CUSTOM),
    ("LayerNormBackward", BACKWARD),
    ("RmsNormBackward", BACKWARD),
    ("LogMelBackward", BACKWARD),
    ("GaussianSplatPrepare", SPLAT),
    ("GaussianSplatRasterize", SPLAT),
    ("GaussianSplatRender", SPLAT),
    ("GaussianSplatRenderBackward", SPLAT),
];

/// Rows that exist only with `backend-api`'s `splat` feature: allowed in [`NOT_COVERED`] even
/// when the table lacks them.
pub const FEATURE_ROWS: &[&str] =
    &["GaussianSplatPrepare", "GaussianSplatRasterize", "GaussianSplatRender", "GaussianSplatRenderBackward"];

/// The reason a row has no generator, if it is listed in [`NOT_COVERED`].
pub fn not_covered_reason(row: &str) -> Option<&'static str> {
    NOT_COVERED.iter().find(|(r, _)| *r == row).map(|(_, why)| *why)
}

/// The op-table rows that have a problem generator, in table order.
pub fn covered_rows() -> Vec<String> {
    backend_api::spec::op_table().into_iter().map(|e| e.name).filter(|n| variants(n).is_some()).collect()
}
