//! Files: graph JSON, `.npy` tensors, param directories and `.npz` archives, output directories.
//! Every error names the file.

use anyhow::{bail, Context, Result};
use backend_api::npy::{from_npy, to_npy};
use backend_api::{DType, Graph, Tensor};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads and validates a graph file.
pub fn load_graph(path: &Path) -> Result<Graph> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read graph file {}", path.display()))?;
    backend_api::json::from_json(&text)
        .with_context(|| format!("graph file {} is not a valid wgml graph", path.display()))
}

/// Reads one `.npy` file.
pub fn load_npy(path: &Path) -> Result<Tensor> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    from_npy(&bytes).with_context(|| format!("{} is not a usable .npy file", path.display()))
}

/// A tensor read from a param source, with where it came from (for error messages).
pub struct NamedTensor {
    /// The param (or input) name.
    pub name: String,
    /// The data.
    pub tensor: Tensor,
    /// The file (and archive entry) it came from, or "random".
    pub source: String,
}

/// Reads every param of a directory (`<name>.npy`, recursively) or an `.npz` archive.
pub fn load_params(path: &Path) -> Result<Vec<NamedTensor>> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot open params {}", path.display()))?;
    if meta.is_dir() {
        let mut files = Vec::new();
        collect_npy(path, path, &mut files)?;
        files.sort();
        files
            .into_iter()
            .map(|(name, file)| {
                let tensor = load_npy(&file)?;
                Ok(NamedTensor { name, tensor, source: file.display().to_string() })
            })
            .collect()
    } else {
        load_npz(path)
    }
}

/// Collects `(param name, file)` for every `.npy` file under `dir`; the name is the path relative
/// to `root` without `.npy`, with `/` separators on every platform.
fn collect_npy(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list params directory {}", dir.display()))?;
    for entry in entries {
        let path = entry.with_context(|| format!("cannot list params directory {}", dir.display()))?.path();
        if path.is_dir() {
            collect_npy(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "npy") {
            let rel = path.strip_prefix(root).unwrap_or(&path).with_extension("");
            let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            out.push((parts.join("/"), path));
        }
    }
    Ok(())
}

/// Reads an `.npz` archive (stored or deflated entries, as np.savez / np.savez_compressed write).
fn load_npz(path: &Path) -> Result<Vec<NamedTensor>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open params {}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("params {} is neither a directory nor an .npz (zip) archive", path.display()))?;
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).with_context(|| format!("{}: cannot read entry {i}", path.display()))?;
        let entry_name =
            entry.name().with_context(|| format!("{}: entry {i} has an unreadable name", path.display()))?.into_owned();
        let Some(name) = entry_name.strip_suffix(".npy") else { continue };
        let source = format!("{}:{entry_name}", path.display());
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).with_context(|| format!("cannot read {source}"))?;
        let tensor = from_npy(&bytes).with_context(|| format!("{source} is not a usable .npy entry"))?;
        out.push(NamedTensor { name: name.to_string(), tensor, source });
    }
    Ok(out)
}

/// Writes `outputs` as `out0.npy`, `out1.npy`, … into `dir` (created if missing). BF16 has no
/// NumPy dtype: such an output is widened to F32 (exactly) and a note says so.
pub fn write_outputs(dir: &Path, outputs: &[Tensor]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create output directory {}", dir.display()))?;
    for (i, t) in outputs.iter().enumerate() {
        let path = dir.join(format!("out{i}.npy"));
        let widened;
        let t = if t.dtype() == DType::BF16 {
            eprintln!("note: out{i} is BF16, which NumPy lacks; {} holds it as F32 (exact)", path.display());
            widened = bf16_to_f32(t)?;
            &widened
        } else {
            t
        };
        let bytes = to_npy(t).with_context(|| format!("cannot encode out{i}"))?;
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// BF16 widened to F32 (exact: every BF16 is an F32).
pub fn bf16_to_f32(t: &Tensor) -> Result<Tensor> {
    let values: Vec<f32> = t.to_vec::<half::bf16>()?.into_iter().map(f32::from).collect();
    Ok(Tensor::from_slice(t.shape(), &values)?)
}

/// Reads the saved outputs `out0.npy` … `out{n-1}.npy` of a directory.
pub fn load_expected(dir: &Path, n: usize) -> Result<Vec<Tensor>> {
    (0..n)
        .map(|i| {
            let path = dir.join(format!("out{i}.npy"));
            if !path.exists() {
                bail!("expected outputs: {} is missing (the graph has {n} outputs)", path.display());
            }
            load_npy(&path)
        })
        .collect()
}
