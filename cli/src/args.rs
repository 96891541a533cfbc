//! The command line, declared with clap's derive: subcommands, `--help` text and typed values.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Run, compare, trace, benchmark and profile graph files on any registered backend.
#[derive(Parser, Debug)]
#[command(
    name = "wgml",
    version,
    about = "Run, compare, trace, benchmark and profile wgml graph files (JSON) on any registered backend",
    long_about = "Run, compare, trace, benchmark and profile wgml graph files (JSON, written by \
                  backend_api::json::to_json) on any registered backend (`wgml backends` lists them).\n\n\
                  Tensors travel as NumPy .npy files; params as a directory of <name>.npy files, an .npz \
                  archive (np.savez layout) or a GGUF file (tensors by name, quantised ones as their raw \
                  blocks). Errors exit with status 2, a failed comparison with 1.",
    after_help = "Examples:\n  \
                  wgml run model.json --backend wgpu --input x=x.npy --params weights.npz --out out/\n  \
                  wgml compare model.json --backend wgpu --against cpu-ref --random --dim batch=4\n  \
                  wgml run model.json --backend cpu-ref --random --trace\n  \
                  wgml bench model.json --backend wgpu --random --iters 100\n  \
                  wgml profile model.json --random --iters 20"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a graph once: print each output's name, dtype and shape and the compile/upload/run
    /// times; optionally save the outputs and trace every intermediate value.
    Run(RunArgs),
    /// Run a graph on two backends (or one backend against saved outputs) and compare every
    /// output within tolerances; exits 1 on any mismatch.
    Compare(CompareArgs),
    /// List the registered backends and the GPU adapters wgpu sees, with limits and features.
    Backends,
    /// Property-test every op of the op table on backends against cpu-ref; print a TSV table.
    Report(ReportArgs),
    /// Time repeated runs of a graph (each includes input upload and output readback).
    Bench(BenchArgs),
    /// Profile a graph on the wgpu backend: the GPU time of every kernel (GPU timestamps), with
    /// its node, op, bytes moved and TFLOP/s, and the host-side costs of a run.
    Profile(ProfileArgs),
}

/// Where a graph's inputs and params come from (shared by run, compare and bench).
#[derive(Args, Debug, Clone, Default)]
pub struct DataArgs {
    /// An input from a .npy file; repeat for each input.
    #[arg(long = "input", value_name = "NAME=FILE.npy", value_parser = parse_named_path)]
    pub inputs: Vec<(String, PathBuf)>,
    /// Params: a directory with one <param name>.npy per param (a name with `/` maps to
    /// subdirectories), an .npz archive with <param name>.npy entries (np.savez layout), or a
    /// GGUF file (v2/v3) whose tensors of the params' names are read (others are ignored).
    #[arg(long, value_name = "DIR|FILE.npz|FILE.gguf")]
    pub params: Option<PathBuf>,
    /// Fill every input and param not given with seeded random data of its declared dtype
    /// (floats in [-1, 1), signed ints in [-3, 3], unsigned ints in [0, 7], random bools).
    #[arg(long)]
    pub random: bool,
    /// Seed of --random; the same seed gives the same data on every machine.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Binds a symbolic dim for --random inputs (e.g. --dim batch=4); repeat for each symbol.
    #[arg(long = "dim", value_name = "SYM=N", value_parser = parse_dim)]
    pub dims: Vec<(String, usize)>,
    /// Most bytes --random may generate, all its inputs and params together (a number with an
    /// optional K, M, G or T suffix, powers of 1024); default: half of physical memory, the
    /// cpu-ref backend's default cap.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
}

/// `wgml run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The graph file (JSON).
    #[arg(value_name = "GRAPH.json")]
    pub graph: PathBuf,
    /// Backend name (see `wgml backends`).
    #[arg(long, short)]
    pub backend: String,
    #[command(flatten)]
    pub data: DataArgs,
    /// Write out0.npy, out1.npy, … into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also print shape, dtype, min, max, mean and NaN/inf counts of every intermediate value and
    /// name the first node that produced a NaN or inf (runs the graph a second time).
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub wgpu: WgpuArgs,
}

/// `wgml compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The graph file (JSON).
    #[arg(value_name = "GRAPH.json")]
    pub graph: PathBuf,
    /// The backend under test.
    #[arg(long, short)]
    pub backend: String,
    /// The reference backend.
    #[arg(long, value_name = "BACKEND", required_unless_present = "expected", conflicts_with = "expected")]
    pub against: Option<String>,
    /// Compare against saved outputs instead: a directory of out0.npy, out1.npy, … (as
    /// `wgml run --out` writes them, or NumPy).
    #[arg(long, value_name = "DIR")]
    pub expected: Option<PathBuf>,
    #[command(flatten)]
    pub data: DataArgs,
    /// Relative tolerance for every float output (default by dtype: F32/C64 1e-4, F16/BF16
    /// 1e-2, F64 1e-10).
    #[arg(long, value_name = "R", value_parser = parse_tolerance)]
    pub rtol: Option<f64>,
    /// Absolute tolerance for every float output (default by dtype: F32/C64 1e-5, F16/BF16
    /// 1e-3, F64 1e-12).
    #[arg(long, value_name = "A", value_parser = parse_tolerance)]
    pub atol: Option<f64>,
}

/// `wgml report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Backend to test; repeat for several (default: wgpu and cpu-ref).
    #[arg(long = "backend", value_name = "NAME")]
    pub backends: Vec<String>,
    /// Property-test cases per op and dtype (default: the suite's fast default, or
    /// PROPTEST_CASES when set).
    #[arg(long, value_name = "N")]
    pub cases: Option<u32>,
    /// Worker threads.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub threads: usize,
    /// Also write the markdown table (the format of docs/ops.md) to this file.
    #[arg(long, value_name = "PATH")]
    pub docs: Option<PathBuf>,
    /// Show a progress bar even when stderr is not a terminal.
    #[arg(long)]
    pub progress: bool,
}

/// `wgml bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The graph file (JSON).
    #[arg(value_name = "GRAPH.json")]
    pub graph: PathBuf,
    /// Backend name (see `wgml backends`).
    #[arg(long, short)]
    pub backend: String,
    #[command(flatten)]
    pub data: DataArgs,
    /// Untimed runs before timing.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub warmup: usize,
    /// Timed runs.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: u64,
    /// Show a progress bar even when stderr is not a terminal.
    #[arg(long)]
    pub progress: bool,
    #[command(flatten)]
    pub wgpu: WgpuArgs,
}

/// Options of the wgpu backend (run, bench, profile): its persistent pipeline cache and
/// kernel-choice overrides.
#[derive(Args, Debug, Clone, Default)]
pub struct WgpuArgs {
    /// Load compiled pipelines from this directory and save new ones there (wgpu backend only,
    /// where the adapter supports a pipeline cache; created if missing). A later process with
    /// the same adapter and driver then skips the driver's shader compilation.
    #[arg(long = "pipeline-cache", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Override a kernel choice of the wgpu backend, `KEY=VALUE` (repeatable), to compare
    /// variants on one GPU; a forced variant applies only where it can compute the node exactly.
    /// The keys are listed by `backend_wgpu::Tuning::KEYS` (an unknown key lists them).
    #[arg(long = "tune", value_name = "KEY=VALUE")]
    pub tune: Vec<String>,
    /// Precision of F32/BF16 matrix products on the wgpu backend: `exact` (default) or `f16`,
    /// which rounds their operands to f16 for tensor cores where the adapter has them (f16 range
    /// and 11-bit significands; see `backend_wgpu::MatmulPrecision`).
    #[arg(long = "matmul-precision", value_name = "exact|f16")]
    pub matmul_precision: Option<String>,
}

impl WgpuArgs {
    /// Whether the wgpu backend must be opened with options rather than from the registry.
    pub fn any(&self) -> bool {
        self.dir.is_some() || !self.tune.is_empty() || self.matmul_precision.is_some()
    }
}

/// `wgml profile`.
#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The graph file (JSON).
    #[arg(value_name = "GRAPH.json")]
    pub graph: PathBuf,
    /// Backend name: only wgpu has a profiler.
    #[arg(long, short, default_value = "wgpu")]
    pub backend: String,
    #[command(flatten)]
    pub data: DataArgs,
    /// Unprofiled runs before profiling.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub warmup: usize,
    /// Profiled runs; each kernel's GPU time is its median over them.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: u64,
    #[command(flatten)]
    pub wgpu: WgpuArgs,
}

/// Parses `NAME=PATH`.
fn parse_named_path(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name.to_string(), PathBuf::from(path))),
        _ => Err(format!("expected NAME=FILE.npy, got {s:?}")),
    }
}

/// Parses `SYM=N`.
fn parse_dim(s: &str) -> Result<(String, usize), String> {
    let Some((sym, n)) = s.split_once('=') else { return Err(format!("expected SYM=N, got {s:?}")) };
    if sym.is_empty() {
        return Err(format!("expected SYM=N, got {s:?}"));
    }
    let n = n.parse::<usize>().map_err(|e| format!("size of {sym:?} in {s:?}: {e}"))?;
    Ok((sym.to_string(), n))
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T` suffix (powers of 1024).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let suffixes = [('K', 10), ('M', 20), ('G', 30), ('T', 40)];
    let found = suffixes.iter().find_map(|&(c, shift)| {
        s.strip_suffix(c).or_else(|| s.strip_suffix(c.to_ascii_lowercase())).map(|d| (d, shift))
    });
    let (digits, shift) = found.unwrap_or((s, 0));
    let n = digits.parse::<u64>().map_err(|e| format!("byte count {s:?}: {e}"))?;
    match n.checked_mul(1u64 << shift) {
        Some(b) => Ok(b),
        None => Err(format!("byte count {s:?} does not fit 64 bits")),
    }
}

/// Parses a tolerance: a finite number ≥ 0 (a negative one would fail every comparison).
fn parse_tolerance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(_) => Err(format!("tolerance must be a finite number >= 0, got {s}")),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn value_parsers() {
        assert_eq!(parse_named_path("x=a=b.npy").unwrap(), ("x".to_string(), PathBuf::from("a=b.npy")));
        assert!(parse_named_path("x.npy").is_err());
        assert_eq!(parse_dim("batch=4").unwrap(), ("batch".to_string(), 4));
        assert!(parse_dim("batch=-1").is_err());
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("3M").unwrap(), 3 << 20);
        assert_eq!(parse_bytes("2g").unwrap(), 2 << 30);
        assert!(parse_bytes("99999999T").is_err() && parse_bytes("M").is_err() && parse_bytes("-1").is_err());
        assert!(parse_tolerance("-1").is_err());
        assert_eq!(parse_tolerance("1e-3").unwrap(), 1e-3);
    }
}
