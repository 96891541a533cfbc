//! `--random` checks the size of what it generates: a declared input of 10^12 elements (or one
//! whose byte size overflows) is a clean error (exit 2 with a message), never an abort.

use backend_api::json::to_json;
use backend_api::op::ReduceOp;
use backend_api::{DType, GraphBuilder};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A graph file with one F32 input of `dims`, summed to a scalar.
fn graph_file(test: &str, dims: &[usize]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wgml-random-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, dims).unwrap();
    let axes: Vec<i64> = (0..dims.len() as i64).collect();
    let s = b.reduce(ReduceOp::Sum, x, &axes, false).unwrap();
    b.output(s).unwrap();
    let path = dir.join("graph.json");
    std::fs::write(&path, to_json(&b.build().unwrap()).unwrap()).unwrap();
    path
}

fn wgml(graph: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", graph.to_str().unwrap(), "--backend", "cpu-ref", "--random"];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_wgml")).args(&args).output().unwrap()
}

fn expect_error(o: &Output, parts: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    for p in parts {
        assert!(err.contains(p), "stderr lacks {p:?}:\n{err}");
    }
}

#[test]
fn a_random_input_of_a_trillion_elements_is_refused() {
    let g = graph_file("trillion", &[1_000_000, 1_000_000]);
    expect_error(&wgml(&g, &[]), &["--random \"x\"", "4000000000000 bytes", "--max-memory"]);
}

#[test]
fn a_graph_file_declaring_an_input_whose_size_overflows_is_refused() {
    // The builder refuses such an input, so the file is edited: the loader must refuse it too.
    let g = graph_file("overflow", &[7777, 4]);
    let text = std::fs::read_to_string(&g).unwrap().replace("7777", &(1usize << 62).to_string());
    std::fs::write(&g, text).unwrap();
    expect_error(&wgml(&g, &[]), &["F32[4611686018427387904, 4]"]);
}

#[test]
fn max_memory_caps_random_data() {
    let g = graph_file("cap", &[64]);
    expect_error(&wgml(&g, &["--max-memory", "100"]), &["256 bytes", "100 bytes"]);
    let ok = wgml(&g, &["--max-memory", "1K"]);
    assert_eq!(ok.status.code(), Some(0), "stderr:\n{}", String::from_utf8_lossy(&ok.stderr));
}
