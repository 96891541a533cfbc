//! Time to the first result of a fresh process: device open, compile (every pipeline built by
//! the driver) and the first run of a 100-node graph whose nodes are varied elementwise ops
//! (14 distinct kernels: 10 unary and 4 binary ops, each node one four-wide map), with or without
//! the persistent pipeline cache, and where the time went.
//!
//! ```sh
//! cargo build --release -p backend-wgpu --example cold_start
//! rm -rf target/pipeline-cache
//! target/release/examples/cold_start --pipeline-cache target/pipeline-cache   # cold: the cache starts empty
//! target/release/examples/cold_start --pipeline-cache target/pipeline-cache   # warm: loaded from the file
//! target/release/examples/cold_start --compile-threads 1              # pipelines built serially
//! target/release/examples/cold_start                                 # no cache at all
//! target/release/examples/cold_start --tune compile.prune=false      # whole modules to wgpu
//! ```
//! Each invocation is one process: the second shows what the cache saves. Drivers keep caches of
//! their own too (NVIDIA: `~/.cache/nvidia/GLCache`; disable it with
//! `__GL_SHADER_DISK_CACHE=0` to see the backend's cache alone; Mesa: `MESA_SHADER_CACHE_DISABLE=true`).
//! Pruned and whole modules translate to different SPIR-V: give each its own cache directory.
//!
//! `--nodes N` changes the chain's length (default 100), `--elements N` its tensor size (default
//! 4096), `--tune KEY=VALUE` sets a `backend_wgpu::Tuning` override. For any graph file,
//! `wgml run GRAPH.json -b wgpu --random --pipeline-cache DIR` prints the same `compile` time.
//!
//! Output: `# ...` comments, then `name<TAB>value<TAB>unit` lines: `device_open` (and its parts:
//! `adapter` — instance, driver load, adapter choice; `device` — `request_device`;
//! `pipeline_cache_load`), `compile` (and its breakdown from `WgpuExecutable::compile_stats`:
//! kernel counts, WGSL bytes before and after unused functions are left out, the wall times of
//! lowering, pipeline building, dispatch setup and the cache save, and summed over the pipelines
//! built the time in `create_shader_module` — naga's WGSL parsing and validation — and in
//! `create_compute_pipeline` — naga's SPIR-V translation plus the driver's compilation or cache
//! lookup; `instance` is the executable's arenas, bind groups and readback buffers;
//! `outside_program` is the rest: validation, legalisation, the params store), `first_run`,
//! `time_to_first_result`.

use anyhow::{Context, Result};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{DType, Executable, Graph, GraphBuilder, Tensor};
use backend_wgpu::{CompileStats, Tuning, WgpuBackend, WgpuOptions};
use std::path::PathBuf;
use std::time::Instant;

/// Unary ops that keep a chain's values finite (the input is in [-1, 1]).
const UNARY: [UnaryOp; 10] = [
    UnaryOp::Tanh,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Sigmoid,
    UnaryOp::Abs,
    UnaryOp::Neg,
    UnaryOp::Atan,
    UnaryOp::Erf,
    UnaryOp::Silu,
    UnaryOp::Gelu,
];
/// Binary ops applied with the graph input as the second operand.
const BINARY: [BinaryOp; 4] = [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub, BinaryOp::Max];

struct Args {
    nodes: usize,
    elements: usize,
    cache: Option<PathBuf>,
    threads: usize,
    tuning: Tuning,
}

fn parse_args() -> Result<Args> {
    let mut a = Args { nodes: 100, elements: 4096, cache: None, threads: 0, tuning: Tuning::default() };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--nodes" => a.nodes = value()?.parse()?,
            "--elements" => a.elements = value()?.parse()?,
            "--pipeline-cache" => a.cache = Some(value()?.into()),
            "--compile-threads" => a.threads = value()?.parse()?,
            "--tune" => a.tuning.set_pair(&value()?)?,
            other => anyhow::bail!(
                "unknown flag {other}; use --nodes N, --elements N, --pipeline-cache DIR, --compile-threads N, \
                 --tune KEY=VALUE"
            ),
        }
    }
    Ok(a)
}

/// A chain of `nodes` ops after the input: unary ops, every third node a binary op with the
/// input. Distinct (op, position) pairs render distinct kernels where the op differs.
fn chain(nodes: usize, elements: usize) -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [elements])?;
    let mut v = x;
    for i in 0..nodes {
        v = if i % 3 == 2 {
            g.binary(BINARY[(i / 3) % BINARY.len()], v, x)?
        } else {
            g.unary(UNARY[i % UNARY.len()], v)?
        };
    }
    g.output(v)?;
    Ok(g.build()?)
}

fn main() -> Result<()> {
    let a = parse_args()?;
    let graph = chain(a.nodes, a.elements)?;
    let t0 = Instant::now();
    let be = WgpuBackend::new(&WgpuOptions {
        pipeline_cache_dir: a.cache.clone(),
        compile_threads: a.threads,
        tuning: a.tuning.clone(),
        ..Default::default()
    })?;
    let open = t0.elapsed();
    let t1 = Instant::now();
    let mut exe = be.compile_wgpu(&graph, &Default::default())?;
    let compile = t1.elapsed();
    let x: Vec<f32> = (0..a.elements).map(|i| (i % 200) as f32 / 100.0 - 1.0).collect();
    let x = Tensor::from_slice(&[a.elements], &x)?;
    let t2 = Instant::now();
    let out = exe.run(&[("x", x.view())])?;
    let first_run = t2.elapsed();
    let finite = out[0].to_vec::<f32>()?.iter().all(|v| v.is_finite());
    println!("# device: {}", be.device_caps().description);
    println!("# graph: {} nodes on F32[{}], output finite: {finite}", a.nodes + 1, a.elements);
    match be.pipeline_cache() {
        Some(s) => println!(
            "# pipeline cache: {} (loaded {} bytes, saved {} bytes{})",
            s.path.display(),
            s.loaded_bytes,
            s.saved_bytes,
            s.last_error.map(|e| format!(", error: {e}")).unwrap_or_default()
        ),
        None if a.cache.is_some() => println!("# pipeline cache: not available on this adapter"),
        None => println!("# pipeline cache: off"),
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("device_open\t{:.3}\tms", ms(open));
    let o = be.open_stats();
    println!("device_open.adapter\t{:.3}\tms", ms(o.adapter));
    println!("device_open.device\t{:.3}\tms", ms(o.device));
    println!("device_open.pipeline_cache_load\t{:.3}\tms", ms(o.pipeline_cache));
    println!("compile\t{:.3}\tms", ms(compile));
    if let Some(s) = exe.compile_stats() {
        print_stats(s, compile);
    }
    println!("first_run\t{:.3}\tms", ms(first_run));
    println!("time_to_first_result\t{:.3}\tms", ms(open + compile + first_run));
    Ok(())
}

/// The compile's breakdown (`CompileStats`): counts, then wall times of its phases and, summed
/// over the pipelines built, where wgpu spent their time.
fn print_stats(s: &CompileStats, compile: std::time::Duration) {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("# compile: {s}");
    for (name, n) in [
        ("nodes", s.nodes),
        ("kernels", s.kernels),
        ("distinct_kernels", s.distinct_kernels),
        ("pipelines_built", s.pipelines_built),
        ("params_blocks", s.params_blocks),
        ("bind_groups", s.bind_groups),
    ] {
        println!("{name}\t{n}\tcount");
    }
    println!("wgsl_bytes\t{}\tbytes", s.wgsl_bytes);
    println!("wgsl_bytes_built\t{}\tbytes", s.wgsl_bytes_built);
    for (name, d) in [
        ("compile.lower", s.lower),
        ("compile.pipelines", s.pipelines),
        ("compile.pipelines.shader_modules_summed", s.shader_modules),
        ("compile.pipelines.pipeline_creation_summed", s.pipeline_creation),
        ("compile.pipelines.error_scopes_summed", s.error_scopes),
        ("compile.dispatches", s.dispatches),
        ("compile.cache_save", s.cache_save),
        ("compile.program_total", s.total),
        ("compile.instance", s.instance),
        ("compile.outside_program", compile.saturating_sub(s.total).saturating_sub(s.instance)),
    ] {
        println!("{name}\t{:.3}\tms", ms(d));
    }
}
