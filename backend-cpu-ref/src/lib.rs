//! `backend-cpu-ref`: the reference backend ("cpu-ref"), the oracle every other backend is judged
//! against.
//!
//! It computes each op of SPEC-ops.md exactly as written, in plain loops on the host: floats in f64
//! rounded once into the output dtype (F16/BF16 included, with our own single-rounding
//! conversions), integers exactly with the wrapping rules of §1.8. No SIMD, no threads, no memory
//! planning: it must be obviously right.
//!
//! It must also never abort: every size a graph or caller decides is checked
//! (`backend_api::shape::{try_numel, nbytes}`), memory is reserved fallibly, and a run counts the
//! bytes it holds against [`CpuRefOptions::max_memory_bytes`] (default: half of physical memory),
//! so a huge declared tensor is a `Capacity` error naming the node and op. Ops over empty tensors
//! return at once, whatever the size of their other dims.
//!
//! Layout: [`value`] is the only place that knows how dtypes are stored and rounded; `layout`
//! holds index arithmetic; `mem` the options, fallible allocation and the memory meter; `eval`
//! has the single exhaustive match over ops; `ops::*` one module per op family; `exec` the
//! executable.
#![warn(missing_docs)]

mod eval;
mod exec;
mod layout;
mod mem;
mod ops;
pub mod value;

use backend_api::decompose::{legalise, reachable};
use backend_api::{Backend, Capabilities, CompileOptions, DType, Executable, Graph, OpKind, Result};

pub use exec::CpuRefExecutable;
pub use mem::{physical_memory_bytes, CpuRefOptions, FALLBACK_MAX_MEMORY_BYTES};

/// The reference backend: its options, and nothing else; every compile makes an independent
/// executable.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuRefBackend {
    /// `None`: [`CpuRefOptions::default`], read when an executable is compiled.
    opts: Option<CpuRefOptions>,
}

impl CpuRefBackend {
    /// A reference backend with default options (a memory cap of half of physical memory).
    pub fn new() -> CpuRefBackend {
        CpuRefBackend { opts: None }
    }

    /// A reference backend with `opts`.
    pub fn with_options(opts: &CpuRefOptions) -> CpuRefBackend {
        CpuRefBackend { opts: Some(*opts) }
    }

    /// The options its executables run with.
    pub fn options(&self) -> CpuRefOptions {
        self.opts.unwrap_or_default()
    }
}

impl Backend for CpuRefBackend {
    fn name(&self) -> &str {
        "cpu-ref"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            device: "host CPU (plain reference loops, f64 accumulation)".to_string(),
            dtypes: DType::ALL.to_vec(),
            // Every kind cpu-ref runs: its own kernels and what legalisation builds from them.
            ops: backend_api::spec::labels_where(|k| reachable(k, &eval::implements)),
        }
    }

    /// Validates the graph, legalises it (every op cpu-ref has no kernel for and that has a
    /// decomposition becomes its primitives; with `decompose_all`, every op that has one) and
    /// builds a kernel per node. Ops that are neither implemented nor decomposable give an
    /// `Unsupported` error naming the node and op; errors always name the user's node.
    fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<Box<dyn Executable>> {
        graph.validate()?;
        let legal = legalise(graph, &eval::implements, options.decompose_all)?;
        Ok(Box::new(CpuRefExecutable::new(graph, legal, self.options())?))
    }

    fn implements(&self, kind: OpKind) -> bool {
        eval::implements(kind)
    }
}

fn create() -> Result<Box<dyn Backend>> {
    Ok(Box::new(CpuRefBackend::new()))
}

backend_api::register_backend!("cpu-ref", "plain CPU reference loops (the oracle)", create);
