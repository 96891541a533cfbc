//! `wgml profile` and `--pipeline-cache` on the wgpu backend (lavapipe in CI, which has
//! timestamps inside passes and a pipeline cache): the per-kernel table, the cache file written
//! by one process and loaded by the next, and the errors for backends without either.

use backend_api::json::to_json;
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{DType, GraphBuilder};
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wgml-profile-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn wgml(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wgml")).args(args).output().unwrap()
}

/// Asserts the exit code and returns stdout, showing both streams on failure.
fn expect(o: &Output, code: i32) -> String {
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(code), "stdout:\n{out}\nstderr:\n{err}");
    if code == 0 {
        out.into_owned()
    } else {
        err.into_owned()
    }
}

/// tanh(x·w) + x·w: x F32[4, 8] input, w F32[8, 4] param.
fn graph_file(dir: &std::path::Path) -> String {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [4, 8]).unwrap();
    let w = g.param("w", DType::F32, &[8, 4]).unwrap();
    let h = g.matmul(x, w).unwrap();
    let t = g.unary(UnaryOp::Tanh, h).unwrap();
    let y = g.binary(BinaryOp::Add, t, h).unwrap();
    g.output(y).unwrap();
    let path = dir.join("graph.json");
    std::fs::write(&path, to_json(&g.build().unwrap()).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn profile_prints_one_row_per_kernel_then_totals_and_host_costs() {
    let dir = scratch("table");
    let graph = graph_file(&dir);
    let o = wgml(&["profile", &graph, "--random", "--warmup", "1", "--iters", "3"]);
    let out = expect(&o, 0);
    for part in ["compile ", "3 profiled runs after 1 warm-up runs", "GPU µs", "GB/s", "TFLOP/s", "total: 3 dispatches"]
    {
        assert!(out.contains(part), "{part:?} missing:\n{out}");
    }
    let row = |op: &str| out.lines().find(|l| l.contains(op)).unwrap_or_else(|| panic!("no {op} row:\n{out}"));
    assert!(row("MatMul").contains("linalg"), "{out}");
    assert!(row("Unary.Tanh").contains("elementwise") && row("Unary.Tanh").contains(".wgsl:main#"), "{out}");
    assert!(out.contains("host (median): upload "), "{out}");
}

#[test]
fn profile_refuses_backends_without_a_profiler() {
    let dir = scratch("refuse");
    let graph = graph_file(&dir);
    let e = expect(&wgml(&["profile", &graph, "-b", "cpu-ref", "--random"]), 2);
    assert!(e.contains("needs the wgpu backend"), "{e}");
    let e = expect(&wgml(&["run", &graph, "-b", "cpu-ref", "--random", "--pipeline-cache", "x"]), 2);
    assert!(e.contains("--pipeline-cache") && e.contains("work with the wgpu backend only"), "{e}");
}

#[test]
fn the_pipeline_cache_written_by_one_process_is_loaded_by_the_next() {
    let dir = scratch("cache");
    let graph = graph_file(&dir);
    let cache = dir.join("cache").display().to_string();
    let first = expect(&wgml(&["run", &graph, "-b", "wgpu", "--random", "--pipeline-cache", &cache]), 0);
    let line = |s: &str| s.lines().find(|l| l.starts_with("pipeline cache: ")).map(str::to_string);
    let Some(l1) = line(&first) else { panic!("no cache line:\n{first}") };
    if l1.contains("not used") {
        println!("this adapter has no pipeline cache: {l1}");
        return;
    }
    assert!(l1.contains("loaded 0 bytes") && l1.contains("saved "), "{l1}");
    let second =
        expect(&wgml(&["bench", &graph, "-b", "wgpu", "--random", "--iters", "1", "--pipeline-cache", &cache]), 0);
    let l2 = line(&second).unwrap_or_default();
    assert!(!l2.contains("loaded 0 bytes") && l2.contains("loaded "), "{l2}");
    let outs = |s: &str| s.lines().filter(|l| l.starts_with("out")).map(str::to_string).collect::<Vec<_>>();
    let third = expect(&wgml(&["run", &graph, "-b", "wgpu", "--random"]), 0);
    assert_eq!(outs(&first), outs(&third), "the cache changes no result");
    let prof = expect(&wgml(&["profile", &graph, "--random", "--iters", "1", "--pipeline-cache", &cache]), 0);
    assert!(line(&prof).is_some(), "{prof}");
}
