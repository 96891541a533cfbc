//! `wgml bench`: compile once, set params, warm up, then time repeated runs.

use crate::args::BenchArgs;
use crate::feeds::gather;
use crate::io::load_graph;
use crate::progress::Progress;
use crate::session::{compile, ms, open_with_options};
use anyhow::Result;
use backend_api::TensorView;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Summary of the timed runs, in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Median run.
    pub median: f64,
    /// Fastest run.
    pub min: f64,
    /// Slowest run.
    pub max: f64,
    /// Mean run.
    pub mean: f64,
}

/// Median, min, max and mean of `times_ms` (which must not be empty; zeros otherwise).
pub fn summarize(times_ms: &[f64]) -> Summary {
    let mut t = times_ms.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n == 0 {
        return Summary { median: 0.0, min: 0.0, max: 0.0, mean: 0.0 };
    }
    let median = if n % 2 == 1 { t[n / 2] } else { (t[n / 2 - 1] + t[n / 2]) / 2.0 };
    Summary { median, min: t[0], max: t[n - 1], mean: t.iter().sum::<f64>() / n as f64 }
}

/// Runs the subcommand.
pub fn bench(a: &BenchArgs) -> Result<ExitCode> {
    let graph = load_graph(&a.graph)?;
    let opened = open_with_options(&a.backend, &a.wgpu)?;
    let backend = opened.backend();
    let (mut exe, compile_time) = compile(backend, &graph)?;
    let feeds = gather(exe.signature(), &a.data)?;
    let start = Instant::now();
    feeds.set_params(exe.as_mut())?;
    let upload_time = start.elapsed();
    let inputs = feeds.input_views();
    println!("backend {}: {}", backend.name(), backend.capabilities().device);
    println!("compile {}, set_param (upload) {}", ms(compile_time), ms(upload_time));
    if let Some(line) = opened.cache_report() {
        println!("{line}");
    }

    // `run_into` reuses the previous run's output tensors, as a host running in a loop would:
    // reading back into fresh memory costs page faults that are not the backend's (docs/PERF.md).
    let mut outputs = Vec::new();
    let mut run = |inputs: &[(&str, TensorView<'_>)]| -> Result<Duration> {
        let start = Instant::now();
        exe.run_into(inputs, &mut outputs).map_err(|e| feeds.explain_run_error(e))?;
        Ok(start.elapsed())
    };
    let mut bar = Progress::new("warm-up", a.warmup as u64, a.progress);
    for _ in 0..a.warmup {
        run(&inputs)?;
        bar.inc();
    }
    bar.finish();
    let mut bar = Progress::new("timing", a.iters, a.progress);
    let mut times = Vec::with_capacity(a.iters as usize);
    for _ in 0..a.iters {
        times.push(run(&inputs)?.as_secs_f64() * 1e3);
        bar.inc();
    }
    bar.finish();

    let s = summarize(&times);
    println!(
        "{} timed runs after {} warm-up runs; each run uploads the inputs and reads the outputs back (into reused host memory)",
        a.iters, a.warmup
    );
    println!(
        "median {:.3} ms  min {:.3} ms  max {:.3} ms  mean {:.3} ms  {:.1} runs/s",
        s.median,
        s.min,
        s.max,
        s.mean,
        if s.mean > 0.0 { 1e3 / s.mean } else { f64::INFINITY }
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]), Summary { median: 2.0, min: 1.0, max: 3.0, mean: 2.0 });
        assert_eq!(summarize(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert_eq!(summarize(&[]).mean, 0.0);
    }
}
