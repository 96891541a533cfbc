//! What a host framework (an ML library written in Rust) does with the backends:
//!
//! 1. describe its model as a [`Graph`] with a symbolic batch dim ([`mlp_graph`]);
//! 2. save and load its weights as `.npy` files ([`write_weights`], [`load_weights`]);
//! 3. pick a backend by name at run time, `"wgpu"` first, `"cpu-ref"` when no adapter exists
//!    ([`pick_backend`]);
//! 4. compile once, upload the weights once, run with any batch size ([`Model`]);
//! 5. write the graph as a JSON file and inputs as `.npy`, for the `wgml` command-line tool
//!    ([`write_artifacts`]).
//!
//! [`llm`] is a tiny decoder-only language model with a KV cache kept on the device (the
//! `tiny-llm` example runs it).

use anyhow::{Context, Result};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{Backend, DType, Dim, Executable, Graph, GraphBuilder, Shape, Tensor};
use std::path::{Path, PathBuf};

pub mod llm;

// Link both plugins so that their registrations are kept (see the README).
use backend_cpu_ref as _;
use backend_wgpu as _;

/// Input features, hidden units, classes.
pub const SIZES: (usize, usize, usize) = (16, 32, 10);

/// A two-layer classifier: `softmax(gelu(x·w1 + b1)·w2 + b2)`, x: `[batch, 16]` with `batch`
/// a symbol bound at each run.
pub fn mlp_graph() -> Result<Graph> {
    let (d_in, hidden, classes) = SIZES;
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, Shape(vec![Dim::from("batch"), Dim::Static(d_in)]))?;
    let w1 = g.param("w1", DType::F32, &[d_in, hidden])?;
    let b1 = g.param("b1", DType::F32, &[hidden])?;
    let w2 = g.param("w2", DType::F32, &[hidden, classes])?;
    let b2 = g.param("b2", DType::F32, &[classes])?;
    let h = g.matmul(x, w1)?;
    let h = g.binary(BinaryOp::Add, h, b1)?;
    let h = g.unary(UnaryOp::Gelu, h)?;
    let logits = g.matmul(h, w2)?;
    let logits = g.binary(BinaryOp::Add, logits, b2)?;
    let probs = g.softmax(logits, -1)?;
    g.output(probs)?;
    Ok(g.build()?)
}

/// Deterministic pseudo-random values in [-scale, scale) (a host framework would have trained
/// weights; any data serves here).
pub fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// Writes the model's weights as `DIR/<name>.npy` (what `wgml run --params DIR` reads).
pub fn write_weights(dir: &Path) -> Result<()> {
    let (d_in, hidden, classes) = SIZES;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let shapes: [(&str, Vec<usize>); 4] =
        [("w1", vec![d_in, hidden]), ("b1", vec![hidden]), ("w2", vec![hidden, classes]), ("b2", vec![classes])];
    for (k, (name, shape)) in shapes.iter().enumerate() {
        let n = shape.iter().product();
        let t = Tensor::from_slice(shape, &values(k as u64 + 1, n, 0.5))?;
        let path = dir.join(format!("{name}.npy"));
        std::fs::write(&path, backend_api::npy::to_npy(&t)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Reads every param of `graph` from `DIR/<name>.npy`.
pub fn load_weights(graph: &Graph, dir: &Path) -> Result<Vec<(String, Tensor)>> {
    let sig = backend_api::Signature::of(graph);
    sig.params
        .iter()
        .map(|p| {
            let path = dir.join(format!("{}.npy", p.name));
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading weight {:?} from {}", p.name, path.display()))?;
            let t = backend_api::npy::from_npy(&bytes).with_context(|| format!("decoding {}", path.display()))?;
            Ok((p.name.clone(), t))
        })
        .collect()
}

/// `"wgpu"` when an adapter exists, else `"cpu-ref"` (with the reason on stderr).
pub fn pick_backend() -> Result<Box<dyn Backend>> {
    match backend_api::create("wgpu") {
        Ok(b) => Ok(b),
        Err(e) => {
            eprintln!("wgpu unavailable ({e}); falling back to cpu-ref");
            Ok(backend_api::create("cpu-ref")?)
        }
    }
}

/// A compiled model with its weights uploaded.
pub struct Model {
    exe: Box<dyn Executable>,
}

impl Model {
    /// Compiles `graph` on `backend` and uploads `weights` once.
    pub fn new(backend: &dyn Backend, graph: &Graph, weights: &[(String, Tensor)]) -> Result<Model> {
        let mut exe = backend.compile(graph, &Default::default())?;
        for (name, t) in weights {
            exe.set_param(name, t.view())?;
        }
        Ok(Model { exe })
    }

    /// Class probabilities for a batch `x: [batch, 16]`.
    pub fn predict(&mut self, x: &Tensor) -> Result<Tensor> {
        let mut out = self.exe.run(&[("x", x.view())])?;
        out.pop().context("the graph has one output")
    }
}

/// A batch of `batch` deterministic inputs.
pub fn batch(batch: usize, seed: u64) -> Result<Tensor> {
    Ok(Tensor::from_slice(&[batch, SIZES.0], &values(seed, batch * SIZES.0, 1.0))?)
}

/// Files for the CLI: `DIR/mlp.json`, `DIR/params/*.npy`, `DIR/x_b2.npy`, `DIR/x_b7.npy`.
pub fn write_artifacts(dir: &Path) -> Result<Artifacts> {
    let graph = mlp_graph()?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let a = Artifacts {
        graph: dir.join("mlp.json"),
        params: dir.join("params"),
        inputs: vec![dir.join("x_b2.npy"), dir.join("x_b7.npy")],
    };
    std::fs::write(&a.graph, backend_api::json::to_json(&graph)?)
        .with_context(|| format!("writing {}", a.graph.display()))?;
    write_weights(&a.params)?;
    for (path, (b, seed)) in a.inputs.iter().zip([(2, 100), (7, 200)]) {
        std::fs::write(path, backend_api::npy::to_npy(&batch(b, seed)?)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(a)
}

/// Paths written by [`write_artifacts`].
pub struct Artifacts {
    /// The graph file.
    pub graph: PathBuf,
    /// The weights directory.
    pub params: PathBuf,
    /// Inputs with batch 2 and 7.
    pub inputs: Vec<PathBuf>,
}
