//! Fuzzes the `.npz` params reader through the `wgml` binary: archives of `.npy` entries (stored
//! or deflated), with the entries or the archive bytes mutated by `conformance::fuzz::bytes`, run
//! with `wgml run --params`. Every run must end with status 0 or 2 (an error message) within its
//! timeout: a panic (101), a signal (an abort on a failed allocation) or a hang fails the test.
//!
//! `FUZZ_CASES` (default 40), `FUZZ_SEED` and `FUZZ_HOSTILE=0` as for conformance's fuzz test;
//! with hostile sizes the archives include inflation bombs (a 1 MiB entry that inflates to
//! 1 GiB) and `.npy` headers claiming huge shapes, and a run whose peak resident memory passes
//! 512 MiB fails, so unchecked inflation shows. docs/FUZZING.md.

use backend_api::json::to_json;
use backend_api::npy::to_npy;
use backend_api::op::BinaryOp;
use backend_api::{DType, GraphBuilder, Tensor};
use conformance::fuzz::bytes::mutate_text;
use conformance::rng::Rng;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);
/// The resident memory a run on a small archive may reach (hostile sizes): an entry inflated
/// whole before its size is checked goes far past it.
const RSS_LIMIT_KIB: u64 = 512 << 10;

/// The peak resident set (`VmHWM`) of a running process, in KiB (0 once it is gone).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn env_num(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    match v.trim().strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.trim().parse().ok(),
    }
}

/// A fresh directory for one test (tests run in parallel: one each).
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wgml-fuzz-files-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `y = x + w` over F32[2, 3]: the param `w` comes from the archive.
fn write_graph(dir: &Path) -> String {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, &[2usize, 3][..]).unwrap();
    let w = g.param("w", DType::F32, &[2, 3]).unwrap();
    let y = g.binary(BinaryOp::Add, x, w).unwrap();
    g.output(y).unwrap();
    let path = dir.join("graph.json");
    std::fs::write(&path, to_json(&g.build().unwrap()).unwrap()).unwrap();
    path.display().to_string()
}

/// One archive: `w.npy` (right or wrong shape and dtype), maybe another entry; entries or the
/// archive mutated; or, when `bomb`, an inflation bomb.
fn archive(rng: &mut Rng, hostile: bool, bomb: bool) -> Vec<u8> {
    let dims = if rng.chance(0.7) { vec![2, 3] } else { vec![rng.below(4), rng.below(4)] };
    let dtype = if rng.chance(0.8) { DType::F32 } else { DType::I32 };
    let t = Tensor::zeros(dtype, &dims);
    let mut npy = to_npy(&t).unwrap();
    if rng.chance(0.4) {
        npy = mutate_text(&npy, rng, hostile);
    }
    // A header claiming [2, 3] followed by 1 GiB of zeros: about 1 MiB once deflated.
    let method =
        if bomb || rng.chance(0.5) { zip::CompressionMethod::Deflated } else { zip::CompressionMethod::Stored };
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(method).large_file(bomb);
    z.start_file("w.npy", opts).unwrap();
    z.write_all(&npy).unwrap();
    if bomb {
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..1 << 10 {
            z.write_all(&zeros).unwrap();
        }
    }
    if rng.chance(0.3) {
        z.start_file("other.npy", opts).unwrap();
        z.write_all(&to_npy(&Tensor::zeros(DType::U8, &[rng.below(3)])).unwrap()).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    if rng.chance(0.4) {
        mutate_text(&bytes, rng, hostile)
    } else {
        bytes
    }
}

/// Runs `wgml run` on the archive; `Err` describes a panic, a signal or a hang.
fn run(graph: &str, npz: &Path, hostile: bool) -> Result<i32, String> {
    let npz = npz.display().to_string();
    wgml(&["run", graph, "--backend", "cpu-ref", "--random", "--params", &npz], hostile)
}

/// Runs `wgml` with `args`: `Ok` with status 0 or 2, `Err` describing a panic, a signal, a hang
/// or (with `rss_check`) a peak resident set past [`RSS_LIMIT_KIB`].
fn wgml(args: &[&str], rss_check: bool) -> Result<i32, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wgml"));
    let mut child = cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut peak = 0;
    loop {
        peak = peak.max(peak_rss_kib(child.id()));
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) if rss_check && peak > RSS_LIMIT_KIB => {
                return Err(format!("peak RSS {} MiB for `wgml {}`", peak >> 10, args.join(" ")));
            }
            Some(status) => {
                let mut err = String::new();
                if let Some(mut s) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut s, &mut err);
                }
                return match status.code() {
                    Some(c @ (0 | 2)) => Ok(c),
                    Some(c) => Err(format!("exit status {c}: {}", err.trim())),
                    None => Err(format!("killed by a signal ({status}): {}", err.trim())),
                };
            }
            None if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no exit within {TIMEOUT:?}"));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

#[test]
fn npz_params_never_panic_abort_or_hang() {
    let cases = env_num("FUZZ_CASES").map_or(40, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let seed = env_num("FUZZ_SEED").unwrap_or(0);
    let hostile = std::env::var("FUZZ_HOSTILE").map_or(true, |v| v != "0");
    let dir = scratch("npz");
    let graph = write_graph(&dir);
    let (mut ok, mut refused, mut failures) = (0, 0, Vec::new());
    let start = Instant::now();
    for i in 0..cases {
        let mut rng = Rng::new(conformance::fuzz::case_seed(seed, i));
        // With hostile sizes every 50th archive (the first included) is an inflation bomb.
        let bytes = archive(&mut rng, hostile, hostile && i % 50 == 0);
        let npz = dir.join(format!("case{i}.npz"));
        std::fs::write(&npz, &bytes).unwrap();
        match run(&graph, &npz, hostile) {
            Ok(0) => ok += 1,
            Ok(_) => refused += 1,
            Err(e) => failures.push(format!("case {i} (FUZZ_SEED={seed:#x}, file {}): {e}", npz.display())),
        }
        if !failures.iter().any(|f| f.starts_with(&format!("case {i} "))) {
            let _ = std::fs::remove_file(&npz);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "npz fuzz seed {seed:#x}{}: {cases} archives in {secs:.1}s ({:.0}/min): {ok} ran, {refused} refused with an \
         error, {} failures",
        if hostile { " (hostile sizes)" } else { "" },
        cases as f64 * 60.0 / secs.max(1e-9),
        failures.len()
    );
    assert!(failures.is_empty(), "wgml failed on fuzzed .npz params:\n{}", failures.join("\n"));
}

/// `wgml run --random` on graphs declaring inputs of impossible or huge sizes must refuse them
/// with an error (status 2), not abort on the allocation or wrap the size.
#[test]
fn random_inputs_of_huge_declared_graphs_are_refused() {
    let dir = scratch("huge");
    let shapes: [&[usize]; 4] = [&[1_000_000, 1_000_000], &[1 << 62, 4], &[usize::MAX], &[1 << 31, 3]];
    let mut failures = Vec::new();
    for (i, dims) in shapes.iter().enumerate() {
        let mut g = GraphBuilder::new();
        // An impossible size is refused already here (a Shape error): nothing to run.
        let Ok(x) = g.input("x", DType::F32, *dims) else { continue };
        let y = g.unary(backend_api::op::UnaryOp::Neg, x);
        let Ok(y) = y else { continue };
        g.output(y).unwrap();
        let Ok(graph) = g.build() else { continue };
        let path = dir.join(format!("huge{i}.json"));
        std::fs::write(&path, to_json(&graph).unwrap()).unwrap();
        let path = path.display().to_string();
        match wgml(&["run", &path, "--backend", "cpu-ref", "--random"], true) {
            Ok(2) => {}
            Ok(c) => failures.push(format!("F32{dims:?}: status {c}, not a refusal")),
            Err(e) => failures.push(format!("F32{dims:?}: {e}")),
        }
    }
    assert!(failures.is_empty(), "wgml run --random on huge declared inputs:\n{}", failures.join("\n"));
}
