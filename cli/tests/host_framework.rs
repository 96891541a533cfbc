//! The graph file, weights and inputs written by `examples/host-framework` run through `wgml run`
//! and `wgml compare` on both backends, with both batch sizes, and give what the example's Rust
//! path gives.

use backend_api::npy::from_npy;
use std::process::Command;

fn wgml(args: &[&str]) -> std::process::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_wgml")).args(args).output().unwrap();
    let text =
        format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "wgml {args:?} failed\n{text}");
    o
}

#[test]
fn example_graph_file_runs_and_compares_on_both_backends() {
    let dir = std::env::temp_dir().join(format!("wgml-host-framework-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = host_framework::write_artifacts(&dir).unwrap();
    let graph = files.graph.display().to_string();
    let params = files.params.display().to_string();
    let weights = host_framework::load_weights(&host_framework::mlp_graph().unwrap(), &files.params).unwrap();
    let cpu = backend_api::create("cpu-ref").unwrap();
    let mut model = host_framework::Model::new(cpu.as_ref(), &host_framework::mlp_graph().unwrap(), &weights).unwrap();
    for (input, batch) in files.inputs.iter().zip([2usize, 7]) {
        let x = format!("x={}", input.display());
        let want = model.predict(&from_npy(&std::fs::read(input).unwrap()).unwrap()).unwrap();
        for backend in ["wgpu", "cpu-ref"] {
            let out = dir.join(format!("out-{backend}-{batch}"));
            let out_s = out.display().to_string();
            wgml(&["run", &graph, "--backend", backend, "--params", &params, "--input", &x, "--out", &out_s]);
            let got = from_npy(&std::fs::read(out.join("out0.npy")).unwrap()).unwrap();
            assert_eq!(got.shape(), &[batch, 10]);
            let (g, w): (Vec<f32>, Vec<f32>) = (got.to_vec().unwrap(), want.to_vec().unwrap());
            for (a, b) in g.iter().zip(&w) {
                assert!((a - b).abs() <= 1e-5, "{backend} batch {batch}: {a} vs {b}");
            }
        }
        let o =
            wgml(&["compare", &graph, "--backend", "wgpu", "--against", "cpu-ref", "--params", &params, "--input", &x]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("out0"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
