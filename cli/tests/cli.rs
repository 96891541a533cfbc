//! Runs the `wgml` binary: run (cpu-ref and wgpu), params from directories and .npz (stored and
//! deflated), compare (pass and mismatch), backends, trace, bench, symbolic dims and every error
//! path. Shapes are tiny: lavapipe is slow.

use backend_api::json::to_json;
use backend_api::npy::{from_npy, to_npy};
use backend_api::op::{BinaryOp, ReduceOp, UnaryOp};
use backend_api::{DType, Dim, Graph, GraphBuilder, Shape, Tensor};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wgml-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `wgml` with `args` (paths relative to nothing: pass absolute ones).
fn wgml(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wgml")).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit code, showing both streams when it differs.
fn expect_code(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", stdout(o), stderr(o));
}

/// Asserts an error exit (2) whose message contains every one of `parts`.
fn expect_error(o: &Output, parts: &[&str]) {
    expect_code(o, 2);
    let e = stderr(o);
    for p in parts {
        assert!(e.contains(p), "stderr lacks {p:?}:\n{e}");
    }
}

fn write_graph(dir: &Path, g: &Graph) -> String {
    let path = dir.join("graph.json");
    std::fs::write(&path, to_json(g).unwrap()).unwrap();
    path.display().to_string()
}

fn write_npy(path: &Path, t: &Tensor) -> String {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, to_npy(t).unwrap()).unwrap();
    path.display().to_string()
}

fn read_npy(path: &Path) -> Tensor {
    from_npy(&std::fs::read(path).unwrap()).unwrap()
}

fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_slice(shape, v).unwrap()
}

/// relu(x·w + b) and its row sums as I32: x input F32[2, 3], params `layer/w` F32[3, 2] and
/// `b` F32[2].
fn mlp() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [2, 3]).unwrap();
    let w = g.param("layer/w", DType::F32, &[3, 2]).unwrap();
    let b = g.param("b", DType::F32, &[2]).unwrap();
    let h = g.matmul(x, w).unwrap();
    let h = g.binary(BinaryOp::Add, h, b).unwrap();
    let y = g.unary(UnaryOp::Relu, h).unwrap();
    let s = g.reduce(ReduceOp::Sum, y, &[1], false).unwrap();
    let s = g.cast(s, DType::I32).unwrap();
    g.output(y).unwrap();
    g.output(s).unwrap();
    g.build().unwrap()
}

fn mlp_x() -> Tensor {
    f32s(&[2, 3], &[1.0, 2.0, 3.0, -1.0, 0.0, 1.0])
}
fn mlp_w() -> Tensor {
    f32s(&[3, 2], &[1.0, -1.0, 0.5, 2.0, 0.0, 1.0])
}
fn mlp_b() -> Tensor {
    f32s(&[2], &[0.5, -10.0])
}
/// By hand: x·w = [[2, 6], [-1, 2]]; + b = [[2.5, -4], [-0.5, -8]]; relu; row sums 2.5 → 2, 0.
const MLP_Y: [f32; 4] = [2.5, 0.0, 0.0, 0.0];
const MLP_S: [i32; 2] = [2, 0];

/// Writes the mlp's input and a params directory (with the subdirectory for `layer/w`).
fn mlp_files(dir: &Path) -> (String, String, String) {
    let graph = write_graph(dir, &mlp());
    let x = write_npy(&dir.join("x.npy"), &mlp_x());
    let params = dir.join("params");
    write_npy(&params.join("layer").join("w.npy"), &mlp_w());
    write_npy(&params.join("b.npy"), &mlp_b());
    (graph, x, params.display().to_string())
}

/// An .npz of the mlp's params, entries stored or deflated.
fn write_npz(path: &Path, method: zip::CompressionMethod) -> String {
    let file = std::fs::File::create(path).unwrap();
    let mut z = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, t) in [("layer/w.npy", mlp_w()), ("b.npy", mlp_b())] {
        z.start_file(name, opts).unwrap();
        z.write_all(&to_npy(&t).unwrap()).unwrap();
    }
    z.finish().unwrap();
    path.display().to_string()
}

fn check_mlp_outputs(out: &Path) {
    let y = read_npy(&out.join("out0.npy"));
    assert_eq!((y.dtype(), y.shape()), (DType::F32, &[2usize, 2][..]));
    assert_eq!(y.to_vec::<f32>().unwrap(), MLP_Y);
    assert_eq!(read_npy(&out.join("out1.npy")).to_vec::<i32>().unwrap(), MLP_S);
}

#[test]
fn run_on_cpu_ref_with_a_params_directory() {
    let dir = scratch("run-cpu");
    let (graph, x, params) = mlp_files(&dir);
    let out = dir.join("out");
    let input = format!("x={x}");
    let o = wgml(&[
        "run",
        &graph,
        "--backend",
        "cpu-ref",
        "--input",
        &input,
        "--params",
        &params,
        "--out",
        &out.display().to_string(),
    ]);
    expect_code(&o, 0);
    let s = stdout(&o);
    assert!(s.contains("out0  F32[2, 2]  [2.5, 0, 0, 0]"), "{s}");
    assert!(s.contains("out1  I32[2]  [2, 0]"), "{s}");
    assert!(s.contains("compile ") && s.contains("set_param (upload) ") && s.contains("run "), "{s}");
    check_mlp_outputs(&out);
}

/// A GGUF v3 file (no metadata, default alignment 32) of F32 `tensors`, dims written fastest
/// first as GGUF lists them.
fn write_gguf(path: &Path, tensors: &[(&str, Tensor)]) -> String {
    let pad = |v: &mut Vec<u8>| v.resize(v.len().div_ceil(32) * 32, 0);
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend((tensors.len() as u64).to_le_bytes());
    head.extend(0u64.to_le_bytes());
    let mut data = Vec::new();
    for (name, t) in tensors {
        head.extend((name.len() as u64).to_le_bytes());
        head.extend(name.as_bytes());
        head.extend((t.shape().len() as u32).to_le_bytes());
        for d in t.shape().iter().rev() {
            head.extend((*d as u64).to_le_bytes());
        }
        head.extend(0u32.to_le_bytes());
        head.extend((data.len() as u64).to_le_bytes());
        data.extend(t.bytes());
        pad(&mut data);
    }
    pad(&mut head);
    head.extend(data);
    std::fs::write(path, head).unwrap();
    path.display().to_string()
}

#[test]
fn run_on_cpu_ref_with_gguf_params() {
    let dir = scratch("run-gguf");
    let (graph, x, _) = mlp_files(&dir);
    let unused = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let gguf = write_gguf(&dir.join("m.gguf"), &[("unused", unused), ("b", mlp_b()), ("layer/w", mlp_w())]);
    let out = dir.join("out");
    let input = format!("x={x}");
    let run = |params: &str| {
        wgml(&[
            "run",
            &graph,
            "--backend",
            "cpu-ref",
            "--input",
            &input,
            "--params",
            params,
            "--out",
            &out.display().to_string(),
        ])
    };
    expect_code(&run(&gguf), 0);
    check_mlp_outputs(&out);
    // The weight stored [2, 3] where the graph declares [3, 2]: refused before any data is read.
    let wrong = write_gguf(&dir.join("wrong.gguf"), &[("b", mlp_b()), ("layer/w", f32s(&[2, 3], &[0.0; 6]))]);
    expect_error(&run(&wrong), &["layer/w", "wrong.gguf"]);
    // A file cut inside its tensor data.
    let bytes = std::fs::read(&gguf).unwrap();
    let cut = dir.join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() - 16]).unwrap();
    expect_error(&run(&cut.display().to_string()), &["cut.gguf"]);
    // A param the file lacks is missing, as with any params source.
    let partial = write_gguf(&dir.join("partial.gguf"), &[("b", mlp_b())]);
    expect_error(&run(&partial), &["missing data", "param layer/w"]);
}

#[test]
fn run_on_wgpu_with_stored_npz_params() {
    let dir = scratch("run-wgpu");
    let (graph, x, _) = mlp_files(&dir);
    let npz = write_npz(&dir.join("params.npz"), zip::CompressionMethod::Stored);
    let out = dir.join("out");
    let input = format!("x={x}");
    let o =
        wgml(&["run", &graph, "-b", "wgpu", "--input", &input, "--params", &npz, "--out", &out.display().to_string()]);
    expect_code(&o, 0);
    check_mlp_outputs(&out);
}

#[test]
fn deflated_npz_params_are_read() {
    let dir = scratch("run-deflate");
    let (graph, x, _) = mlp_files(&dir);
    let npz = write_npz(&dir.join("params.npz"), zip::CompressionMethod::Deflated);
    let out = dir.join("out");
    let input = format!("x={x}");
    let o = wgml(&[
        "run",
        &graph,
        "-b",
        "cpu-ref",
        "--input",
        &input,
        "--params",
        &npz,
        "--out",
        &out.display().to_string(),
    ]);
    expect_code(&o, 0);
    check_mlp_outputs(&out);
}

#[test]
fn compare_wgpu_against_cpu_ref_passes() {
    let dir = scratch("compare-pass");
    let (graph, x, params) = mlp_files(&dir);
    let input = format!("x={x}");
    let o =
        wgml(&["compare", &graph, "--backend", "wgpu", "--against", "cpu-ref", "--input", &input, "--params", &params]);
    expect_code(&o, 0);
    let s = stdout(&o);
    assert!(s.contains("out0  F32[2, 2]  max_abs") && s.contains("all outputs match"), "{s}");
    // Random data (same seed on both sides) on a float-rounding-sensitive graph.
    let o = wgml(&["compare", &graph, "-b", "wgpu", "--against", "cpu-ref", "--random", "--seed", "3"]);
    expect_code(&o, 0);
}

#[test]
fn compare_against_saved_outputs_passes_and_a_nan_mismatch_exits_1() {
    let dir = scratch("compare-expected");
    let (graph, x, params) = mlp_files(&dir);
    let input = format!("x={x}");
    let saved = dir.join("saved");
    let saved_s = saved.display().to_string();
    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--input", &input, "--params", &params, "--out", &saved_s]);
    expect_code(&o, 0);
    let o = wgml(&["compare", &graph, "-b", "cpu-ref", "--expected", &saved_s, "--input", &input, "--params", &params]);
    expect_code(&o, 0);

    // A NaN where the backend computes 2.5: no tolerance accepts it.
    write_npy(&saved.join("out0.npy"), &f32s(&[2, 2], &[f32::NAN, 0.0, 0.0, 0.0]));
    let o = wgml(&[
        "compare",
        &graph,
        "-b",
        "cpu-ref",
        "--expected",
        &saved_s,
        "--input",
        &input,
        "--params",
        &params,
        "--rtol",
        "1",
        "--atol",
        "1",
    ]);
    expect_code(&o, 1);
    let s = stdout(&o);
    assert!(s.contains("out0") && s.contains("FAIL: 1 mismatching, first at [0, 0]: got 2.5, want NaN"), "{s}");
    assert!(s.contains("out1  I32[2]") && s.contains("pass") && s.contains("MISMATCH"), "{s}");

    // An integer output off by one fails whatever the tolerance.
    write_npy(&saved.join("out0.npy"), &f32s(&[2, 2], &MLP_Y));
    write_npy(&saved.join("out1.npy"), &Tensor::from_slice(&[2], &[2i32, 1]).unwrap());
    let o = wgml(&[
        "compare",
        &graph,
        "-b",
        "cpu-ref",
        "--expected",
        &saved_s,
        "--input",
        &input,
        "--params",
        &params,
        "--atol",
        "5",
    ]);
    expect_code(&o, 1);
    assert!(stdout(&o).contains("(exact)  FAIL"), "{}", stdout(&o));
}

#[test]
fn backends_lists_both_backends_and_the_adapters() {
    let o = wgml(&["backends"]);
    expect_code(&o, 0);
    let s = stdout(&o);
    assert!(s.contains("  cpu-ref  ") && s.contains("  wgpu  "), "{s}");
    assert!(s.contains("wgpu adapters (") && s.contains("max_storage_buffer_binding_size"), "{s}");
}

/// x → sqrt(x) (NaN at −1) → ·2 → log: node 1 is the first to produce a NaN.
fn nan_graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [3]).unwrap();
    let r = g.unary(UnaryOp::Sqrt, x).unwrap();
    let two = g.constant(&Tensor::scalar(2.0f32)).unwrap();
    let d = g.binary(BinaryOp::Mul, r, two).unwrap();
    let l = g.unary(UnaryOp::Log, d).unwrap();
    g.output(l).unwrap();
    g.build().unwrap()
}

#[test]
fn run_trace_names_the_first_nan_node() {
    let dir = scratch("trace");
    let graph = write_graph(&dir, &nan_graph());
    let x = write_npy(&dir.join("x.npy"), &f32s(&[3], &[4.0, -1.0, 0.0]));
    let input = format!("x={x}");
    for backend in ["cpu-ref", "wgpu"] {
        let o = wgml(&["run", &graph, "-b", backend, "--input", &input, "--trace"]);
        expect_code(&o, 0);
        let s = stdout(&o);
        assert!(s.contains("first non-finite value: node 1 (Unary.Sqrt) output 0"), "{backend}:\n{s}");
        // log(2·sqrt([4, -1, 0])) = [ln 4, NaN, -inf]: one NaN, one inf.
        let log_line = s.lines().find(|l| l.contains("Unary.Log")).unwrap();
        let cells: Vec<&str> = log_line.split_whitespace().collect();
        assert_eq!(&cells[cells.len() - 2..], ["1", "1"], "{log_line}");
        assert!(cells.contains(&"-inf"), "{log_line}");
    }
}

#[test]
fn bench_prints_the_summary() {
    let dir = scratch("bench");
    let graph = write_graph(&dir, &mlp());
    let o = wgml(&["bench", &graph, "-b", "cpu-ref", "--random", "--warmup", "1", "--iters", "3", "--progress"]);
    expect_code(&o, 0);
    let s = stdout(&o);
    for part in ["median ", "min ", "max ", "mean ", "runs/s", "uploads the inputs and reads the outputs back"] {
        assert!(s.contains(part), "{part:?} missing:\n{s}");
    }
    assert!(stderr(&o).contains("timing [") && stderr(&o).contains("3/3"), "{}", stderr(&o));
}

/// x F32[batch, 2] · w F32[2, 2] summed over axis 1: F32[batch].
fn batch_graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, Shape(vec![Dim::from("batch"), Dim::Static(2)])).unwrap();
    let w = g.param("w", DType::F32, &[2, 2]).unwrap();
    let y = g.matmul(x, w).unwrap();
    let s = g.reduce(ReduceOp::Sum, y, &[1], false).unwrap();
    g.output(s).unwrap();
    g.build().unwrap()
}

fn run_batch_sizes(backend: &str) {
    let dir = scratch(&format!("batch-{backend}"));
    let graph = write_graph(&dir, &batch_graph());
    let params = dir.join("p");
    write_npy(&params.join("w.npy"), &f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]));
    let params = params.display().to_string();
    // Row sums of x·w are 3·x0 + 7·x1.
    let x = write_npy(&dir.join("x.npy"), &f32s(&[2, 2], &[1.0, 0.0, 0.0, 1.0]));
    let out = dir.join("o2");
    let input = format!("x={x}");
    let o = wgml(&[
        "run",
        &graph,
        "-b",
        backend,
        "--input",
        &input,
        "--params",
        &params,
        "--out",
        &out.display().to_string(),
    ]);
    expect_code(&o, 0);
    assert_eq!(read_npy(&out.join("out0.npy")).to_vec::<f32>().unwrap(), [3.0, 7.0]);
    let x = write_npy(&dir.join("x5.npy"), &f32s(&[5, 2], &[1.0, 1.0, 2.0, 0.0, 0.0, 2.0, -1.0, 0.0, 0.5, 0.5]));
    let input = format!("x={x}");
    let o = wgml(&[
        "run",
        &graph,
        "-b",
        backend,
        "--input",
        &input,
        "--params",
        &params,
        "--out",
        &out.display().to_string(),
    ]);
    expect_code(&o, 0);
    assert_eq!(read_npy(&out.join("out0.npy")).to_vec::<f32>().unwrap(), [10.0, 6.0, 14.0, -3.0, 5.0]);
    // --random binds the symbol from --dim.
    let o = wgml(&["run", &graph, "-b", backend, "--random", "--dim", "batch=4"]);
    expect_code(&o, 0);
    assert!(stdout(&o).contains("out0  F32[4]"), "{}", stdout(&o));
}

#[test]
fn symbolic_batch_runs_with_two_sizes_on_cpu_ref() {
    run_batch_sizes("cpu-ref");
}

/// wgpu compiles a variant per binding of the symbols (landed in 398149d).
#[test]
fn symbolic_batch_runs_with_two_sizes_on_wgpu() {
    run_batch_sizes("wgpu");
}

#[test]
fn errors_exit_2_with_a_helpful_message() {
    let dir = scratch("errors");
    let (graph, x, params) = mlp_files(&dir);
    let input = format!("x={x}");

    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--params", &params]);
    expect_error(&o, &["missing data", "input x: F32[2, 3]", "--random"]);

    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--input", &input]);
    expect_error(&o, &["param layer/w: F32[3, 2]", "param b: F32[2]"]);

    let o = wgml(&[
        "run",
        &graph,
        "-b",
        "cpu-ref",
        "--input",
        &input,
        "--params",
        &dir.join("nope.npz").display().to_string(),
    ]);
    expect_error(&o, &["cannot open params", "nope.npz"]);

    let extra = dir.join("extra");
    write_npy(&extra.join("bogus.npy"), &mlp_b());
    let o = wgml(&[
        "run",
        &graph,
        "-b",
        "cpu-ref",
        "--input",
        &input,
        "--params",
        &extra.display().to_string(),
        "--random",
    ]);
    expect_error(&o, &["unknown param in", "bogus (from ", "layer/w: F32[3, 2]"]);

    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--input", &format!("y={x}"), "--params", &params]);
    expect_error(&o, &["unknown input: y (from ", "x: F32[2, 3]"]);

    let bad = dir.join("bad.npy");
    std::fs::write(&bad, b"not numpy").unwrap();
    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--input", &format!("x={}", bad.display()), "--params", &params]);
    expect_error(&o, &["bad.npy is not a usable .npy file", "magic"]);

    let wrong = write_npy(&dir.join("wrong.npy"), &f32s(&[3], &[1.0, 2.0, 3.0]));
    let o = wgml(&["run", &graph, "-b", "cpu-ref", "--input", &format!("x={wrong}"), "--params", &params]);
    expect_error(&o, &["expects shape [2, 3]", "wrong.npy"]);

    let bad_graph = dir.join("bad.json");
    std::fs::write(&bad_graph, "{\"format\": 1}").unwrap();
    let o = wgml(&["run", &bad_graph.display().to_string(), "-b", "cpu-ref", "--random"]);
    expect_error(&o, &["bad.json is not a valid wgml graph"]);
    let o = wgml(&["run", &dir.join("absent.json").display().to_string(), "-b", "cpu-ref", "--random"]);
    expect_error(&o, &["cannot read graph file", "absent.json"]);

    let o = wgml(&["run", &graph, "-b", "tpu", "--random"]);
    expect_error(&o, &["\"tpu\"", "cpu-ref", "wgpu"]);

    let batch = scratch("errors-batch").join("g.json");
    std::fs::write(&batch, to_json(&batch_graph()).unwrap()).unwrap();
    let o = wgml(&["run", &batch.display().to_string(), "-b", "cpu-ref", "--random"]);
    expect_error(&o, &["symbol \"batch\" is not bound", "--dim batch=N"]);

    let o = wgml(&["compare", &graph, "-b", "cpu-ref", "--random"]);
    expect_code(&o, 2); // neither --against nor --expected: clap's usage error
    let o = wgml(&["compare", &graph, "-b", "cpu-ref", "--against", "cpu-ref", "--random", "--rtol=-1"]);
    expect_error(&o, &["tolerance must be a finite number >= 0"]);
}

#[test]
fn help_is_available_for_every_subcommand() {
    let o = wgml(&["--help"]);
    expect_code(&o, 0);
    for sub in ["run", "compare", "backends", "report", "bench", "profile"] {
        assert!(stdout(&o).contains(sub), "{sub} missing from --help");
        let h = wgml(&[sub, "--help"]);
        expect_code(&h, 0);
        assert!(stdout(&h).contains("Usage: wgml"), "{}", stdout(&h));
    }
}

#[test]
fn report_prints_the_tsv_and_writes_markdown_only_where_asked() {
    let dir = scratch("report");
    let docs = dir.join("ops.md");
    let o = wgml(&["report", "--backend", "cpu-ref", "--cases", "1", "--docs", &docs.display().to_string()]);
    expect_code(&o, 0);
    let s = stdout(&o);
    assert!(s.starts_with("# backend: cpu-ref\n") && s.contains("Unary.Exp\tF32\tpass\t1\t"), "{s}");
    assert!(std::fs::read_to_string(&docs).unwrap().starts_with("# Op conformance"));
}
