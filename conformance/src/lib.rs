//! `conformance`: property tests of every op of the op table on any registered backend, against
//! the `cpu-ref` oracle (SPEC-ops.md §1.11).
//!
//! - [`problems`]: one proptest strategy per op-table row and dtype, producing a [`Problem`]
//!   (graph, inputs, params and, for magnitude-scaled ops, a magnitude graph);
//! - [`compare`]: elementwise comparison by tolerance class with the spec's equivalences;
//! - [`runner`]: runs problems on the backend under test and the reference;
//! - [`report`]: the op × dtype × backend table (`docs/ops.md`);
//! - [`expected`]: the cases each backend is known to refuse as `Unsupported`, with reasons.
//!
//! Rows without a generator must be listed in [`NOT_COVERED`] with a reason; a test fails when a
//! row of the op table is in neither place, so a new op cannot go untested silently.
//!
//! # Adding a generator for an op
//!
//! 1. In `src/problems/<family>.rs`, match the row name in the family's `variants(row)` and return
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
pub mod problem;
pub mod problems;
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

const LINALG: &str = "later milestone: grouped and quantised matmuls (§2.6.4–2.6.7) are not core in milestone 1";
const NORMS: &str = "later milestone: this normalisation (§2.7.3, 2.7.6–2.7.9) is not core in milestone 1";
const ATTENTION: &str = "later milestone: attention and position ops (§2.8) are not core in milestone 1";
const CONV: &str = "later milestone: convolution, pooling and resize (§2.9) are not core in milestone 1";
const SEQUENCE: &str = "later milestone: sequence models (§2.10) are not core in milestone 1";
const SIGNAL: &str = "later milestone: signal processing (§2.11) is not core in milestone 1";
const CONTROL: &str = "later milestone: control flow (§2.13) is not core in milestone 1";
const REGIONS: &str = "later milestone: fused regions (§2.14) are not core in milestone 1";
const CUSTOM: &str = "later milestone: custom ops (§2.15) are not core in milestone 1";
const BACKWARD: &str = "later milestone: training backward ops (§2.16) are not core in milestone 1";
const SPLAT: &str = "later milestone: Gaussian splatting (§2.17, feature `splat`) is not core in milestone 1";

/// Op-table rows deliberately without a problem generator, with the reason. An entry leaves
/// this list when its generator is written (the coverage test rejects a row in both places).
pub const NOT_COVERED: &[(&str, &str)] = &[
    ("GroupedMatMul", LINALG),
    ("QuantMatMul", LINALG),
    ("QuantGroupedMatMul", LINALG),
    ("GroupNorm", NORMS),
    ("LayerNorm2d", NORMS),
    ("Attention", ATTENTION),
    ("AttentionBackward", ATTENTION),
    ("Rope", ATTENTION),
    ("RopeBackward", ATTENTION),
    ("Conv", CONV),
    ("ConvTranspose", CONV),
    ("Pool.Max", CONV),
    ("Pool.Avg", CONV),
    ("Im2Col", CONV),
    ("ResizeNearest", CONV),
    ("Rnn", SEQUENCE),
    ("Gru", SEQUENCE),
    ("Lstm", SEQUENCE),
    ("SelectiveScan", SEQUENCE),
    ("Mamba2", SEQUENCE),
    ("GatedDeltaNet", SEQUENCE),
    ("Scan", SEQUENCE),
    ("Fft", SIGNAL),
    ("LogMel", SIGNAL),
    ("WelchPeaks", SIGNAL),
    ("If", CONTROL),
    ("While", CONTROL),
    ("ElementwiseRegion", REGIONS),
    ("BatchElementwiseRegion", REGIONS),
    ("TransformRegion", REGIONS),
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
