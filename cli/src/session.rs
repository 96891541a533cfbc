//! What run, compare and bench share: opening a backend by name and compiling with timing.

use crate::args::WgpuArgs;
use anyhow::{bail, Context, Result};
use backend_api::{Backend, CompileOptions, Executable, Graph};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use std::time::{Duration, Instant};

/// Creates the backend registered as `name`; an unknown name lists the registered ones.
pub fn open_backend(name: &str) -> Result<Box<dyn Backend>> {
    backend_api::create(name).with_context(|| format!("cannot create backend {name:?}"))
}

/// A backend opened by name; the wgpu backend is kept as its own type when it was opened with
/// options (`--pipeline-cache`, `--tune`), so that its extras can be shown.
pub enum Opened {
    /// Any registered backend, created with its defaults.
    Registered(Box<dyn Backend>),
    /// The wgpu backend with options; `true` when a pipeline cache was asked for.
    Wgpu(WgpuBackend, bool),
}

impl Opened {
    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        match self {
            Opened::Registered(b) => b.as_ref(),
            Opened::Wgpu(b, _) => b,
        }
    }

    /// A line on the pipeline cache (its file, the bytes loaded and saved, a save error), where
    /// one is used.
    pub fn cache_report(&self) -> Option<String> {
        match self {
            Opened::Registered(_) | Opened::Wgpu(_, false) => None,
            Opened::Wgpu(b, true) => Some(cache_line(b)),
        }
    }
}

/// What `--pipeline-cache` did on `b`.
pub fn cache_line(b: &WgpuBackend) -> String {
    match b.pipeline_cache() {
        None => "pipeline cache: not used (this adapter has no pipeline cache)".to_string(),
        Some(s) => {
            let saved = match &s.last_error {
                Some(e) => format!("not saved: {e}"),
                None => format!("saved {} bytes", s.saved_bytes),
            };
            format!("pipeline cache: {} (loaded {} bytes, {saved})", s.path.display(), s.loaded_bytes)
        }
    }
}

/// The wgpu backend with the pipeline cache and kernel-choice overrides of `a`.
pub fn open_wgpu(a: &WgpuArgs) -> Result<WgpuBackend> {
    let mut opts = WgpuOptions { pipeline_cache_dir: a.dir.clone(), ..WgpuOptions::default() };
    for pair in &a.tune {
        opts.tuning.set_pair(pair).context("--tune")?;
    }
    if let Some(p) = &a.matmul_precision {
        opts.matmul_precision = p.parse().context("--matmul-precision")?;
    }
    WgpuBackend::new(&opts).context("cannot create backend \"wgpu\"")
}

/// Opens backend `name`; with wgpu options (`--pipeline-cache`, `--tune`), only for wgpu.
pub fn open_with_options(name: &str, a: &WgpuArgs) -> Result<Opened> {
    if !a.any() {
        return Ok(Opened::Registered(open_backend(name)?));
    }
    if name != "wgpu" {
        bail!("--pipeline-cache, --tune and --matmul-precision work with the wgpu backend only, not {name:?}");
    }
    Ok(Opened::Wgpu(open_wgpu(a)?, a.dir.is_some()))
}

/// Compiles `graph` on `backend`, returning the executable and the compile time.
pub fn compile(backend: &dyn Backend, graph: &Graph) -> Result<(Box<dyn Executable>, Duration)> {
    let start = Instant::now();
    let exe = backend
        .compile(graph, &CompileOptions::default())
        .with_context(|| format!("compile on backend {:?} failed", backend.name()))?;
    Ok((exe, start.elapsed()))
}

/// A duration in milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}
