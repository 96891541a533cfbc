//! The persistent pipeline cache (`WgpuOptions::pipeline_cache_dir`): written after compile,
//! loaded by the next device, harmless when the file is corrupt or the directory cannot be
//! written, and the same results either way.

use backend_api::op::UnaryOp;
use backend_api::{CompileOptions, DType, Executable, Graph, GraphBuilder, Tensor};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use std::path::{Path, PathBuf};

fn graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, [64]).unwrap();
    let y = g.unary(UnaryOp::Tanh, x).unwrap();
    let y = g.unary(UnaryOp::Exp, y).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wgpu-pipeline-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Opens a backend with the cache in `dir`, compiles and runs the graph; returns the output bytes.
fn run_with_cache(dir: &Path) -> (Vec<u8>, Option<backend_wgpu::disk_cache::CacheStatus>) {
    let be = WgpuBackend::new(&WgpuOptions { pipeline_cache_dir: Some(dir.to_path_buf()), ..Default::default() })
        .expect("a wgpu adapter");
    let mut exe = be.compile_wgpu(&graph(), &CompileOptions::default()).unwrap();
    let x: Vec<f32> = (0..64).map(|i| i as f32 / 16.0 - 2.0).collect();
    let out = exe.run(&[("x", Tensor::from_slice(&[64], &x).unwrap().view())]).unwrap();
    (out[0].bytes().to_vec(), be.pipeline_cache())
}

#[test]
fn the_cache_is_saved_then_loaded_and_changes_no_result() {
    let plain = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter");
    if !plain.device_caps().pipeline_cache {
        println!("{} has no PIPELINE_CACHE: the option must be harmless", plain.device_caps().description);
    }
    let has_cache = plain.device_caps().pipeline_cache;
    drop(plain);
    let dir = scratch("roundtrip");
    let (first, status) = run_with_cache(&dir);
    let Some(status) = status.filter(|_| has_cache) else {
        assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none());
        return;
    };
    println!("{status:?}");
    assert_eq!(status.loaded_bytes, 0, "{status:?}");
    assert!(status.saved_bytes > 0 && status.last_error.is_none(), "{status:?}");
    assert!(status.path.starts_with(&dir) && status.path.exists(), "{status:?}");
    let (second, status2) = run_with_cache(&dir);
    assert_eq!(first, second);
    assert_eq!(status2.unwrap().loaded_bytes, status.saved_bytes);
    // A corrupt file is ignored (an empty cache), not an error.
    std::fs::write(&status.path, b"not a pipeline cache").unwrap();
    let (third, status3) = run_with_cache(&dir);
    assert_eq!(first, third);
    assert!(status3.unwrap().last_error.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_cache_directory_is_reported_not_fatal() {
    // A regular file where the directory should be: reading fails (empty cache), writing fails.
    let file = scratch("blocked");
    std::fs::write(&file, b"a file, not a directory").unwrap();
    let (out, status) = run_with_cache(&file);
    assert_eq!(out.len(), 64 * 4);
    if let Some(s) = status {
        assert_eq!(s.loaded_bytes, 0);
        assert!(s.last_error.as_deref().is_some_and(|e| e.contains("pipeline cache")), "{s:?}");
    }
    std::fs::remove_file(&file).unwrap();
}
