//! Random valid graphs round-trip exactly through the JSON graph format (docs/GRAPH-FORMAT.md):
//! `from_json(to_json(g)) == g`, and writing the result again gives identical text.
//!
//! - every problem of every conformance generator (the core ops, each dtype; magnitude graphs
//!   too);
//! - random builders of this file's modules for the ops the generators do not cover
//!   (`conformance::NOT_COVERED`), with random attributes;
//! - a coverage test: every `Op` variant and every op-table row must have been produced, so that
//!   a new op without a generator here fails. [`variant`] matches `Op` exhaustively.
//!
//! Cases per generator come from `PROPTEST_CASES` (default 8).

#[path = "json_roundtrip/ctx.rs"]
mod ctx;
#[path = "json_roundtrip/ext_control.rs"]
mod ext_control;
#[path = "json_roundtrip/ext_nn.rs"]
mod ext_nn;
#[path = "json_roundtrip/ext_seq.rs"]
mod ext_seq;

use backend_api::json::{from_json, to_json};
use backend_api::op::Op;
use backend_api::spec::{op_label, op_table};
use backend_api::Graph;
use conformance::{covered_rows, proptest_config, variants, DEFAULT_CASES};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The name of an op's variant (`Unary` for every unary op). Exhaustive: a new op is a compile
/// error here until it is named, and then a failure of [`every_op_variant_round_trips`] until a
/// generator produces it.
fn variant(op: &Op) -> &'static str {
    match op {
        Op::Input(_) => "Input",
        Op::Param(_) => "Param",
        Op::Constant(_) => "Constant",
        Op::Unary(_) => "Unary",
        Op::Binary(_) => "Binary",
        Op::Compare(_) => "Compare",
        Op::Where => "Where",
        Op::Fma => "Fma",
        Op::Cast { .. } => "Cast",
        Op::Reshape { .. } => "Reshape",
        Op::Transpose { .. } => "Transpose",
        Op::Narrow(_) => "Narrow",
        Op::Concat { .. } => "Concat",
        Op::Expand { .. } => "Expand",
        Op::Reverse { .. } => "Reverse",
        Op::Pad(_) => "Pad",
        Op::Gather(_) => "Gather",
        Op::ScatterAdd(_) => "ScatterAdd",
        Op::GatherBackward(_) => "GatherBackward",
        Op::Reduce(_) => "Reduce",
        Op::ArgMax(_) => "ArgMax",
        Op::ArgMin(_) => "ArgMin",
        Op::TopK(_) => "TopK",
        Op::Cumsum(_) => "Cumsum",
        Op::CumsumBackward(_) => "CumsumBackward",
        Op::MatMul => "MatMul",
        Op::DotGeneral(_) => "DotGeneral",
        Op::FusedMatMulBiasAct { .. } => "FusedMatMulBiasAct",
        Op::GroupedMatMul(_) => "GroupedMatMul",
        Op::QuantMatMul(_) => "QuantMatMul",
        Op::QuantGroupedMatMul(_) => "QuantGroupedMatMul",
        Op::Softmax { .. } => "Softmax",
        Op::LogSoftmax { .. } => "LogSoftmax",
        Op::SoftmaxCrossEntropy(_) => "SoftmaxCrossEntropy",
        Op::LayerNorm(_) => "LayerNorm",
        Op::RmsNorm(_) => "RmsNorm",
        Op::GroupNorm(_) => "GroupNorm",
        Op::LayerNorm2d(_) => "LayerNorm2d",
        Op::FusedResidualLayerNorm(_) => "FusedResidualLayerNorm",
        Op::FusedResidualRmsNorm(_) => "FusedResidualRmsNorm",
        Op::Attention(_) => "Attention",
        Op::AttentionBackward(_) => "AttentionBackward",
        Op::Rope(_) => "Rope",
        Op::RopeBackward(_) => "RopeBackward",
        Op::Conv(_) => "Conv",
        Op::ConvTranspose(_) => "ConvTranspose",
        Op::Pool(_) => "Pool",
        Op::Im2Col(_) => "Im2Col",
        Op::ResizeNearest(_) => "ResizeNearest",
        Op::Rnn(_) => "Rnn",
        Op::Gru(_) => "Gru",
        Op::Lstm(_) => "Lstm",
        Op::SelectiveScan(_) => "SelectiveScan",
        Op::Mamba2(_) => "Mamba2",
        Op::GatedDeltaNet(_) => "GatedDeltaNet",
        Op::Scan(_) => "Scan",
        Op::Fft(_) => "Fft",
        Op::LogMel(_) => "LogMel",
        Op::WelchPeaks(_) => "WelchPeaks",
        Op::RngBits(_) => "RngBits",
        Op::RngUniform(_) => "RngUniform",
        Op::RngNormal(_) => "RngNormal",
        Op::Sample(_) => "Sample",
        Op::If(_) => "If",
        Op::While(_) => "While",
        Op::ElementwiseRegion(_) => "ElementwiseRegion",
        Op::BatchElementwiseRegion(_) => "BatchElementwiseRegion",
        Op::TransformRegion(_) => "TransformRegion",
        Op::Custom(_) => "Custom",
        Op::LayerNormBackward(_) => "LayerNormBackward",
        Op::RmsNormBackward(_) => "RmsNormBackward",
        Op::SoftmaxCrossEntropyBackward(_) => "SoftmaxCrossEntropyBackward",
        Op::LogMelBackward(_) => "LogMelBackward",
        // Splat graphs round-trip in backend-api's tests/json.rs (run with `--features serde,splat`).
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(_) => "GaussianSplatPrepare",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRasterize(_) => "GaussianSplatRasterize",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRender(_) => "GaussianSplatRender",
        #[cfg(feature = "splat")]
        Op::GaussianSplatRenderBackward(_) => "GaussianSplatRenderBackward",
    }
}

fn config() -> ProptestConfig {
    let cases = match std::env::var_os("PROPTEST_CASES") {
        Some(_) => None,
        None => Some(DEFAULT_CASES),
    };
    proptest_config(cases, Some(file!()))
}

/// What a part of the suite saw and which of its generators failed.
#[derive(Default)]
struct Seen {
    /// Variant names of every node, subgraphs included.
    variants: BTreeSet<&'static str>,
    /// Op-table rows (`Unary.Exp`, `Pool.Max`) of every node, subgraphs included.
    rows: BTreeSet<String>,
    /// One message per failed generator.
    failures: Vec<String>,
}

impl Seen {
    fn record(&mut self, g: &Graph) {
        for n in g.nodes() {
            self.variants.insert(variant(&n.op));
            self.rows.insert(op_label(&n.op));
            for s in n.op.subgraphs() {
                self.record(s);
            }
        }
    }
}

/// `to_json → from_json` gives `g` back, and writing it again gives the same text.
fn round_trip(g: &Graph) -> Result<(), TestCaseError> {
    let text = to_json(g).map_err(|e| TestCaseError::fail(format!("to_json: {e}")))?;
    let back = from_json(&text).map_err(|e| TestCaseError::fail(format!("from_json: {e}\n{text}")))?;
    if &back != g {
        return Err(TestCaseError::fail(format!("the graph read back differs:\nwritten {g:?}\nread {back:?}\n{text}")));
    }
    let again = to_json(&back).map_err(|e| TestCaseError::fail(format!("to_json again: {e}")))?;
    prop_assert!(again == text, "writing the graph read back gives other text:\n{}\n---\n{}", text, again);
    Ok(())
}

/// Runs `strategy` under the suite's proptest config, round-tripping every graph it yields.
fn run<S: Strategy>(
    name: &str,
    strategy: &S,
    graphs: impl Fn(S::Value) -> Result<Vec<Graph>, String>,
    seen: &RefCell<Seen>,
) {
    let mut runner = TestRunner::new(config());
    let result = runner.run(strategy, |value| {
        let gs = graphs(value).map_err(|e| TestCaseError::fail(format!("building the graph: {e}")))?;
        for g in &gs {
            round_trip(g)?;
            seen.borrow_mut().record(g);
        }
        Ok(())
    });
    if let Err(e) = result {
        seen.borrow_mut().failures.push(format!("{name}: {e}"));
    }
}

/// Every problem of every conformance generator (each row, each dtype).
fn generated() -> &'static Seen {
    static SEEN: OnceLock<Seen> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = RefCell::new(Seen::default());
        for row in covered_rows() {
            for v in variants(&row).unwrap_or_default() {
                let graphs = |p: conformance::Generated| {
                    let p = p.map_err(|e| e.to_string())?;
                    Ok(p.magnitude.into_iter().chain([p.graph]).collect())
                };
                run(&format!("{row} [{}]", v.label), &v.strategy, graphs, &seen);
            }
        }
        seen.into_inner()
    })
}

/// Every builder of this file's modules, each from random seeds.
fn built() -> &'static Seen {
    static SEEN: OnceLock<Seen> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = RefCell::new(Seen::default());
        let builders = ext_nn::BUILDERS.iter().chain(ext_seq::BUILDERS).chain(ext_control::BUILDERS);
        for &(name, build) in builders {
            let graphs = |seed: u64| ctx::Ctx::run(seed, build).map(|g| vec![g]).map_err(|e| e.to_string());
            run(name, &any::<u64>(), graphs, &seen);
        }
        seen.into_inner()
    })
}

#[test]
fn generated_problems_round_trip() {
    let s = generated();
    assert!(s.failures.is_empty(), "{} generators failed:\n\n{}", s.failures.len(), s.failures.join("\n\n"));
}

#[test]
fn built_graphs_round_trip() {
    let s = built();
    assert!(s.failures.is_empty(), "{} builders failed:\n\n{}", s.failures.len(), s.failures.join("\n\n"));
}

/// Every variant of `Op` and every row of the op table was written and read back by the tests
/// above (a variant's name is its rows' name up to the first `.`).
#[test]
fn every_op_variant_round_trips() {
    let (g, b) = (generated(), built());
    let variants: BTreeSet<&str> = g.variants.union(&b.variants).copied().collect();
    let rows: BTreeSet<&String> = g.rows.union(&b.rows).collect();
    // Splat rows (feature `splat`) are round-tripped by backend-api's own tests.
    let table: Vec<String> =
        op_table().into_iter().map(|e| e.name).filter(|n| !n.starts_with("GaussianSplat")).collect();
    let missing_rows: Vec<&String> = table.iter().filter(|r| !rows.contains(r)).collect();
    let missing_variants: Vec<&str> = table
        .iter()
        .map(|r| r.split('.').next().unwrap_or(r))
        .filter(|v| !variants.contains(v))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        missing_rows.is_empty() && missing_variants.is_empty(),
        "no round-trip generator produced the variants {missing_variants:?} / rows {missing_rows:?}; \
         add a builder in conformance/tests/json_roundtrip/"
    );
    for v in &variants {
        assert!(table.iter().any(|r| r.split('.').next() == Some(*v)), "variant {v} has no op-table row");
    }
}
