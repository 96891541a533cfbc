//! `wgml run`: one run of a graph, its outputs, timings and optionally a trace.

use crate::args::RunArgs;
use crate::feeds::gather;
use crate::io::{load_graph, write_outputs};
use crate::session::{compile, ms, open_with_options};
use anyhow::{Context, Result};
use backend_api::{DType, Element, Tensor};
use std::process::ExitCode;
use std::time::Instant;

/// Values shown per output.
const PREVIEW: usize = 8;

/// Runs the subcommand.
pub fn run(a: &RunArgs) -> Result<ExitCode> {
    let graph = load_graph(&a.graph)?;
    let opened = open_with_options(&a.backend, &a.wgpu)?;
    let backend = opened.backend();
    let (mut exe, compile_time) = compile(backend, &graph)?;
    let feeds = gather(exe.signature(), &a.data)?;
    let start = Instant::now();
    feeds.set_params(exe.as_mut())?;
    let upload_time = start.elapsed();
    let start = Instant::now();
    let outputs = exe.run(&feeds.input_views()).map_err(|e| feeds.explain_run_error(e))?;
    let run_time = start.elapsed();

    println!("backend {}: {}", backend.name(), backend.capabilities().device);
    for (i, t) in outputs.iter().enumerate() {
        println!("out{i}  {}{:?}  {}", t.dtype(), t.shape(), preview(t));
    }
    println!(
        "compile {}, set_param (upload) {}, run {} (includes input upload and output readback)",
        ms(compile_time),
        ms(upload_time),
        ms(run_time)
    );
    if let Some(line) = opened.cache_report() {
        println!("{line}");
    }
    if graph.has_symbols() {
        println!("(symbolic dims: backends that compile per binding, like wgpu, compile this binding's variant inside that first run)");
    }
    if let Some(dir) = &a.out {
        write_outputs(dir, &outputs)?;
        println!("wrote {} output(s) to {}", outputs.len(), dir.display());
    }
    if a.trace {
        let report = backend_api::trace::trace(backend, &graph, &feeds.param_views(), &feeds.input_views())
            .context("trace failed")?;
        println!("\ntrace (every value, in execution order):\n{report}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The first few values of a tensor (`re+imi` for C64), then `…` when there are more.
pub fn preview(t: &Tensor) -> String {
    let size = t.dtype().size();
    let mut parts: Vec<String> = t
        .bytes()
        .chunks_exact(size)
        .take(PREVIEW)
        .map(|b| match t.dtype() {
            DType::C64 => {
                let (re, im) = (
                    backend_api::element_to_f64(DType::F32, &b[..4]),
                    backend_api::element_to_f64(DType::F32, &b[4..]),
                );
                format!("{re}{im:+}i")
            }
            DType::Bool => (b[0] != 0).to_string(),
            // Shown at their own precision: 0.1f32 prints as 0.1, not 0.10000000149011612.
            d @ (DType::F32 | DType::F16 | DType::BF16) => (backend_api::element_to_f64(d, b) as f32).to_string(),
            DType::I64 => <i64 as Element>::read_le(b).to_string(),
            d @ (DType::F64 | DType::I32 | DType::I8 | DType::U32 | DType::U8) => {
                backend_api::element_to_f64(d, b).to_string()
            }
        })
        .collect();
    if t.numel() > PREVIEW {
        parts.push("…".to_string());
    }
    format!("[{}]", parts.join(", "))
}
