//! `wgml profile`: compile on the wgpu backend, warm up, then profile runs with GPU timestamps
//! and print the per-kernel table (`backend_wgpu::Profile`'s format).

use crate::args::ProfileArgs;
use crate::feeds::gather;
use crate::io::load_graph;
use crate::session::{cache_line, ms, open_wgpu};
use anyhow::{bail, Context, Result};
use backend_api::{CompileOptions, Executable};
use std::process::ExitCode;
use std::time::Instant;

/// Runs the subcommand.
pub fn profile(a: &ProfileArgs) -> Result<ExitCode> {
    if a.backend != "wgpu" {
        bail!("wgml profile needs the wgpu backend (GPU timestamps); {:?} has no profiler", a.backend);
    }
    let graph = load_graph(&a.graph)?;
    let backend = open_wgpu(&a.wgpu)?;
    let start = Instant::now();
    let mut exe =
        backend.compile_wgpu(&graph, &CompileOptions::default()).context("compile on backend \"wgpu\" failed")?;
    let compile_time = start.elapsed();
    let feeds = gather(exe.signature(), &a.data)?;
    feeds.set_params(&mut exe)?;
    let inputs = feeds.input_views();
    println!("compile {}", ms(compile_time));
    if a.wgpu.dir.is_some() {
        println!("{}", cache_line(&backend));
    }
    for _ in 0..a.warmup {
        exe.run(&inputs).map_err(|e| feeds.explain_run_error(e))?;
    }
    let iters = usize::try_from(a.iters).context("--iters")?;
    let profile = exe.profile(&inputs, iters).map_err(|e| feeds.explain_run_error(e))?;
    println!("{} profiled runs after {} warm-up runs", a.iters, a.warmup);
    print!("{profile}");
    Ok(ExitCode::SUCCESS)
}
