//! One test per op-table row with a generator: every dtype of the row is property-tested on the
//! backend under test (`CONFORMANCE_BACKEND`, default `wgpu`) against `cpu-ref`. Cases per dtype
//! come from `PROPTEST_CASES` (default 8). A case the backend refuses with `Unsupported` fails
//! unless `conformance::expected` lists it, and a listed case that runs fails too. Rows whose kind
//! the backend lowers natively and that have a decomposition also run compiled with
//! `decompose_all`. Plus: coverage of the op table, and validity of the generated problems.

use backend_api::spec::{op_entry, op_label, op_table, tolerance_for};
use backend_api::{check_run_inputs, check_slot, DType, Signature, TensorView};
use conformance::{
    covered_rows, expected_unsupported, not_covered_reason, proptest_config, variants, Problem, Runner, Status,
    DEFAULT_BACKEND, DEFAULT_CASES, EXPECTED_UNSUPPORTED, FEATURE_ROWS, NOT_COVERED, NO_BACKEND, REFERENCE,
};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config as ProptestConfig, TestRunner};
use std::sync::OnceLock;

// Registrations of the backends (see `backend_api::registry`).
use backend_cpu_ref as _;
#[cfg(feature = "wgpu")]
use backend_wgpu as _;

/// The runner shared by every test of this binary: opening a GPU device once is much cheaper
/// than once per test.
fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(|| {
        let name = std::env::var("CONFORMANCE_BACKEND").unwrap_or_else(|_| DEFAULT_BACKEND.to_string());
        Runner::new(&name, REFERENCE)
            .unwrap_or_else(|e| panic!("cannot create the backend under test {name:?} or the reference: {e}"))
    })
}

fn config() -> ProptestConfig {
    let cases = match std::env::var_os("PROPTEST_CASES") {
        Some(_) => None,
        None => Some(DEFAULT_CASES),
    };
    proptest_config(cases, Some(file!()))
}

fn check_row(row: &str) {
    let results = runner().run_row(row, &config());
    let mut failures = Vec::new();
    let backend = runner().backend_name();
    for r in &results {
        eprintln!("{}{}", r.tsv(), if r.both_paths { "\t(decomposed too)" } else { "" });
        let expected = expected_unsupported(backend, row, r.dtype);
        match (r.saw_unsupported(), expected) {
            (true, Some(e)) => eprintln!("    unsupported, as expected: {}", e.reason),
            (true, None) => failures.push(format!(
                "{row} [{}] on {backend}: unexpected Unsupported ({} of the cases): {}\n(fix it, or list it with its reason in conformance::expected)",
                r.label,
                r.skipped,
                r.message.as_deref().unwrap_or("no message")
            )),
            (false, Some(e)) if r.status == Status::Pass => failures.push(format!(
                "{row} [{}] on {backend} is listed as Unsupported in conformance::expected ({}) but it runs: remove the entry",
                r.label, e.reason
            )),
            (false, _) => {}
        }
        match r.status {
            Status::Pass | Status::Unsupported => {}
            Status::Fail => failures.push(r.message.clone().unwrap_or_else(|| format!("{} {} failed", r.op, r.label))),
            Status::Untested => failures.push(format!("{} {} has no generator", r.op, r.label)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} variants failed on {}:\n\n{}",
        failures.len(),
        results.len(),
        runner().backend_name(),
        failures.join("\n\n")
    );
}

macro_rules! op_tests {
    ($($test:ident => $row:literal,)*) => {
        /// The rows that have a named test below.
        const TESTED_ROWS: &[&str] = &[$($row,)*];
        $(
            #[test]
            fn $test() {
                check_row($row);
            }
        )*
    };
}

op_tests! {
    input => "Input",
    param => "Param",
    constant => "Constant",
    unary_relu => "Unary.Relu",
    unary_sigmoid => "Unary.Sigmoid",
    unary_tanh => "Unary.Tanh",
    unary_exp => "Unary.Exp",
    unary_log => "Unary.Log",
    unary_sqrt => "Unary.Sqrt",
    unary_rsqrt => "Unary.Rsqrt",
    unary_neg => "Unary.Neg",
    unary_abs => "Unary.Abs",
    unary_gelu => "Unary.Gelu",
    unary_gelu_approx => "Unary.GeluApprox",
    unary_silu => "Unary.Silu",
    unary_round => "Unary.Round",
    unary_floor => "Unary.Floor",
    unary_ceil => "Unary.Ceil",
    unary_sign => "Unary.Sign",
    unary_reciprocal => "Unary.Reciprocal",
    unary_sin => "Unary.Sin",
    unary_cos => "Unary.Cos",
    unary_tan => "Unary.Tan",
    unary_atan => "Unary.Atan",
    unary_erf => "Unary.Erf",
    unary_softplus => "Unary.Softplus",
    unary_not => "Unary.Not",
    binary_add => "Binary.Add",
    binary_sub => "Binary.Sub",
    binary_mul => "Binary.Mul",
    binary_div => "Binary.Div",
    binary_rem => "Binary.Rem",
    binary_mod => "Binary.Mod",
    binary_pow => "Binary.Pow",
    binary_max => "Binary.Max",
    binary_min => "Binary.Min",
    binary_and => "Binary.And",
    binary_or => "Binary.Or",
    binary_xor => "Binary.Xor",
    compare_eq => "Compare.Eq",
    compare_ne => "Compare.Ne",
    compare_lt => "Compare.Lt",
    compare_le => "Compare.Le",
    compare_gt => "Compare.Gt",
    compare_ge => "Compare.Ge",
    where_ => "Where",
    fma => "Fma",
    cast => "Cast",
    reshape => "Reshape",
    transpose => "Transpose",
    reverse => "Reverse",
    narrow => "Narrow",
    concat => "Concat",
    expand => "Expand",
    pad => "Pad",
    reduce_sum => "Reduce.Sum",
    reduce_mean => "Reduce.Mean",
    reduce_max => "Reduce.Max",
    reduce_min => "Reduce.Min",
    reduce_prod => "Reduce.Prod",
    matmul => "MatMul",
    dot_general => "DotGeneral",
    fused_matmul_bias_act => "FusedMatMulBiasAct",
    grouped_matmul => "GroupedMatMul",
    quant_matmul => "QuantMatMul",
    quant_grouped_matmul => "QuantGroupedMatMul",
    softmax => "Softmax",
    log_softmax => "LogSoftmax",
    layer_norm => "LayerNorm",
    rms_norm => "RmsNorm",
    group_norm => "GroupNorm",
    layer_norm_2d => "LayerNorm2d",
    fused_residual_layer_norm => "FusedResidualLayerNorm",
    fused_residual_rms_norm => "FusedResidualRmsNorm",
    attention => "Attention",
    arg_max => "ArgMax",
    arg_min => "ArgMin",
    top_k => "TopK",
    cumsum => "Cumsum",
    cumsum_backward => "CumsumBackward",
    softmax_cross_entropy => "SoftmaxCrossEntropy",
    rope => "Rope",
    rope_backward => "RopeBackward",
    softmax_cross_entropy_backward => "SoftmaxCrossEntropyBackward",
    gather => "Gather",
    scatter_add => "ScatterAdd",
    gather_backward => "GatherBackward",
    rng_bits => "RngBits",
    rng_uniform => "RngUniform",
    rng_normal => "RngNormal",
    sample => "Sample",
    if_ => "If",
    while_ => "While",
    pool_max => "Pool.Max",
    pool_avg => "Pool.Avg",
    im2col => "Im2Col",
    conv => "Conv",
    conv_transpose => "ConvTranspose",
    resize_nearest => "ResizeNearest",
    scan => "Scan",
    rnn => "Rnn",
    gru => "Gru",
    lstm => "Lstm",
    elementwise_region => "ElementwiseRegion",
    batch_elementwise_region => "BatchElementwiseRegion",
    transform_region => "TransformRegion",
}

/// Fails when a row of the op table has neither a generator nor a reason in `NOT_COVERED`, when
/// a generator misses a dtype the table allows, or when `NOT_COVERED` is stale.
#[test]
fn every_row_has_a_generator_or_a_reason() {
    let table: Vec<String> = op_table().into_iter().map(|e| e.name).collect();
    let mut problems = Vec::new();
    for row in &table {
        let vs = variants(row);
        match (&vs, not_covered_reason(row)) {
            (Some(_), Some(_)) => problems.push(format!("{row} has a generator but is listed in NOT_COVERED")),
            (None, None) => problems.push(format!("{row} has neither a problem generator nor an entry in NOT_COVERED")),
            _ => {}
        }
        let (Some(vs), Some(entry)) = (vs, op_entry(row)) else { continue };
        for d in entry.dtypes.iter() {
            if !vs.iter().any(|v| v.dtype == d) {
                problems.push(format!("{row} allows {d} but its generator has no variant for it"));
            }
        }
    }
    for (row, why) in NOT_COVERED {
        if !table.iter().any(|t| t == row) && !FEATURE_ROWS.contains(row) {
            problems.push(format!("NOT_COVERED lists {row}, which is not a row of the op table"));
        }
        if why.trim().is_empty() {
            problems.push(format!("NOT_COVERED gives no reason for {row}"));
        }
    }
    assert!(problems.is_empty(), "op-table coverage:\n{}", problems.join("\n"));
}

/// Every expected-Unsupported entry names a row with a generator (a case that can occur), a dtype
/// of that row, a registered backend's name and a reason.
#[test]
fn expected_unsupported_entries_are_well_formed() {
    let mut known: Vec<&str> = backend_api::available().into_iter().map(|(name, _)| name).collect();
    // Without the `wgpu` feature the backend is not linked, but its entries stay valid.
    known.push("wgpu");
    for e in EXPECTED_UNSUPPORTED {
        assert!(known.contains(&e.backend), "{e:?}: no backend {:?} is registered ({known:?})", e.backend);
        assert!(covered_rows().iter().any(|r| r == e.row), "{e:?}: {} has no generator", e.row);
        if let (Some(d), Some(entry)) = (e.dtype, op_entry(e.row)) {
            assert!(entry.dtypes.contains(d), "{e:?}: {} does not allow {d}", e.row);
        }
        assert!(!e.reason.trim().is_empty(), "{e:?} gives no reason");
        let same = EXPECTED_UNSUPPORTED.iter().filter(|o| (o.backend, o.row, o.dtype) == (e.backend, e.row, e.dtype));
        assert_eq!(same.count(), 1, "{e:?} is listed twice");
    }
}

/// A row whose reason says no backend implements it is indeed listed by no backend's capabilities.
#[test]
fn rows_no_backend_implements_are_not_in_any_capabilities() {
    let mut backends = vec![backend_api::create(REFERENCE).unwrap()];
    if let Ok(b) = backend_api::create(runner().backend_name()) {
        backends.push(b);
    }
    for (row, why) in NOT_COVERED.iter().filter(|(_, why)| why.starts_with(NO_BACKEND)) {
        for b in &backends {
            let listed = b.capabilities().ops.iter().any(|o| o == row);
            assert!(!listed, "NOT_COVERED says of {row} \"{why}\", but {} lists it", b.name());
        }
    }
}

/// Cast covers every (from, to) pair.
#[test]
fn cast_covers_every_dtype_pair() {
    let labels: Vec<String> = variants("Cast").unwrap().into_iter().map(|v| v.label).collect();
    for from in DType::ALL {
        for to in DType::ALL {
            let l = format!("{}->{}", from.name(), to.name());
            assert!(labels.contains(&l), "Cast has no variant {l}");
        }
    }
}

/// Every covered row has a named test above, and every named test a covered row.
#[test]
fn every_covered_row_has_a_named_test() {
    let covered = covered_rows();
    for row in &covered {
        assert!(TESTED_ROWS.contains(&row.as_str()), "{row} has a generator but no named test in op_tests!");
    }
    for row in TESTED_ROWS {
        assert!(covered.iter().any(|c| c == row), "op_tests! names {row}, which has no generator");
    }
}

/// The generators produce valid graphs whose only outputs are the op under test, with inputs and
/// params matching the graph's signature and a magnitude graph exactly where one is needed.
#[test]
fn generators_build_valid_problems() {
    let samples = 10;
    let mut runner = TestRunner::deterministic();
    for row in covered_rows() {
        for v in variants(&row).unwrap() {
            for i in 0..samples {
                let tree = v.strategy.new_tree(&mut runner).unwrap();
                let p =
                    tree.current().unwrap_or_else(|e| panic!("{row} [{}] sample {i}: generator error: {e}", v.label));
                if let Err(msg) = check_problem(&row, v.dtype, &p) {
                    panic!("{row} [{}] sample {i}: {msg}\n{p:?}", v.label);
                }
            }
        }
    }
}

fn check_problem(row: &str, dtype: DType, p: &Problem) -> Result<(), String> {
    p.graph.validate().map_err(|e| format!("invalid graph: {e}"))?;
    let sig = Signature::of(&p.graph);
    let inputs: Vec<(&str, TensorView<'_>)> = p.inputs.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    check_run_inputs(&sig, &inputs).map_err(|e| format!("inputs do not match the graph: {e}"))?;
    if sig.params.len() != p.params.len() {
        return Err(format!("{} params declared, {} given", sig.params.len(), p.params.len()));
    }
    for slot in &sig.params {
        let (_, t) = p.params.iter().find(|(n, _)| *n == slot.name).ok_or(format!("param {} not given", slot.name))?;
        check_slot(slot, &t.view(), &mut Vec::new()).map_err(|e| format!("param {}: {e}", slot.name))?;
    }
    let mut needs_m = false;
    for o in p.graph.outputs() {
        let node = p.graph.node(o.node).unwrap();
        if op_label(&node.op) != row {
            return Err(format!("output {o} is a {} node, not {row}", op_label(&node.op)));
        }
        let main = match node.inputs.first() {
            Some(v) => p.graph.value_type(*v).map(|t| t.dtype),
            None => node.outputs.first().map(|t| t.dtype),
        };
        // Where's first input is the Bool condition, the Rng ops' the U32 key, If's the Bool
        // condition (and a Scan may have no inputs): their table dtype is the output's.
        let by_output = row.starts_with("Where") || matches!(row, "RngUniform" | "RngNormal" | "If" | "Scan");
        let main = if by_output { node.outputs.first().map(|t| t.dtype) } else { main };
        if main != Some(dtype) {
            return Err(format!("the op's main dtype is {main:?}, the variant's {dtype}"));
        }
        let out = p.graph.value_type(*o).ok_or("missing output type")?;
        needs_m |= tolerance_for(&node.op, out.dtype).1;
        let n = out.shape.numel().ok_or("symbolic output")?;
        if n > 300_000 {
            return Err(format!("output of {n} elements exceeds the size budget"));
        }
    }
    match (&p.magnitude, needs_m) {
        (Some(m), true) => {
            m.validate().map_err(|e| format!("invalid magnitude graph: {e}"))?;
            check_run_inputs(&Signature::of(m), &inputs).map_err(|e| format!("magnitude graph inputs: {e}"))?;
            if m.outputs().len() != p.graph.outputs().len() {
                return Err("magnitude graph has a different number of outputs".into());
            }
        }
        (None, false) => {}
        (Some(_), false) => return Err("a magnitude graph for an op that is not magnitude-scaled".into()),
        (None, true) => return Err("a magnitude-scaled op without a magnitude graph".into()),
    }
    Ok(())
}
