//! What run, compare and bench share: opening a backend by name and compiling with timing.

use anyhow::{Context, Result};
use backend_api::{Backend, CompileOptions, Executable, Graph};
use std::time::{Duration, Instant};

/// Creates the backend registered as `name`; an unknown name lists the registered ones.
pub fn open_backend(name: &str) -> Result<Box<dyn Backend>> {
    backend_api::create(name).with_context(|| format!("cannot create backend {name:?}"))
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
