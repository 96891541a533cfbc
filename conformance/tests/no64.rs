//! The wgpu backend on a device without SHADER_F64 / SHADER_INT64 (simulated with
//! `WgpuOptions::no_64bit`): every I64 / F64 variant of every op-table row either passes against
//! cpu-ref or is refused with `Unsupported` — never a wrong result or another error — and the
//! pure data-movement rows pass every case (none skipped).
#![cfg(feature = "wgpu")]

use backend_api::spec::op_table;
use backend_api::{Backend, Result};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use conformance::{proptest_config, variants, Runner, Status, REFERENCE};

use backend_cpu_ref as _;

fn create() -> Result<Box<dyn Backend>> {
    Ok(Box::new(WgpuBackend::new(&WgpuOptions { no_64bit: true, ..Default::default() })?))
}

backend_api::register_backend!("wgpu-no64", "wgpu without SHADER_F64 / SHADER_INT64 (tests)", create);

/// Rows whose kernels only move bytes: these must run without the 64-bit features.
const MOVEMENT: &[&str] = &["Reshape", "Transpose", "Narrow", "Concat", "Expand", "Reverse"];

#[test]
fn sixty_four_bit_variants_pass_or_are_unsupported() {
    let runner = Runner::new("wgpu-no64", REFERENCE).unwrap();
    let (mut pass, mut unsupported, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for row in op_table() {
        let Some(vs) = variants(&row.name) else { continue };
        for v in vs.iter().filter(|v| v.label.contains("I64") || v.label.contains("F64")) {
            let r = runner.run_variant(&row.name, v, &proptest_config(Some(4), None));
            let key = format!("{} [{}]", row.name, v.label);
            match r.status {
                // Passing with skipped cases means only empty tensors (no kernel) ran.
                Status::Pass if r.skipped == 0 => pass.push(key),
                Status::Pass => unsupported.push(key),
                Status::Unsupported => unsupported.push(key),
                Status::Fail | Status::Untested => failures.push(format!("{key}: {}", r.message.unwrap_or_default())),
            }
        }
    }
    eprintln!("pass without 64-bit features ({}): {pass:?}", pass.len());
    eprintln!("unsupported (apart from empty tensors) ({}): {unsupported:?}", unsupported.len());
    assert!(failures.is_empty(), "{} failed:\n{}", failures.len(), failures.join("\n\n"));
    for row in MOVEMENT {
        for d in ["I64", "F64"] {
            let key = format!("{row} [{d}]");
            assert!(pass.contains(&key), "{key} should run without 64-bit features");
        }
    }
}
