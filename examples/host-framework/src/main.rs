//! `cargo run -p host-framework [-- OUT_DIR]`: runs the model on "wgpu" (or "cpu-ref" without an
//! adapter) with two batch sizes, checks it against cpu-ref, and writes a graph file, weights and
//! inputs for the `wgml` CLI into OUT_DIR (default `target/host-framework`).

use anyhow::Result;
use host_framework::{batch, load_weights, mlp_graph, pick_backend, write_artifacts, Model};
use std::path::PathBuf;

fn main() -> Result<()> {
    let out = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target/host-framework"));
    let files = write_artifacts(&out)?;
    let graph = mlp_graph()?;
    let weights = load_weights(&graph, &files.params)?;
    let backend = pick_backend()?;
    println!("backend: {} ({})", backend.name(), backend.capabilities().device);
    let mut model = Model::new(backend.as_ref(), &graph, &weights)?;
    let reference_backend = backend_api::create("cpu-ref")?;
    let mut reference = Model::new(reference_backend.as_ref(), &graph, &weights)?;
    for (b, seed) in [(2, 100), (7, 200)] {
        let x = batch(b, seed)?;
        let probs = model.predict(&x)?;
        let want = reference.predict(&x)?;
        let (got, want): (Vec<f32>, Vec<f32>) = (probs.to_vec()?, want.to_vec()?);
        let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        let first: Vec<String> = got.iter().take(4).map(|v| format!("{v:.4}")).collect();
        println!(
            "batch {b}: output {:?}, row 0 starts [{}], max diff vs cpu-ref {diff:.2e}",
            probs.shape(),
            first.join(", ")
        );
        anyhow::ensure!(diff <= 1e-5, "batch {b}: {diff} exceeds 1e-5");
    }
    let d = out.display();
    println!("\nThe same through the CLI:");
    println!("  wgml run {d}/mlp.json --backend wgpu --params {d}/params --input x={d}/x_b2.npy --out {d}/out");
    println!("  wgml compare {d}/mlp.json --backend wgpu --against cpu-ref --params {d}/params --input x={d}/x_b7.npy");
    Ok(())
}
