//! Files: graph JSON, `.npy` tensors, param directories, `.npz` archives and GGUF files, output
//! directories.
//! Every error names the file.

use anyhow::{bail, Context, Result};
use backend_api::gguf::GgufFile;
use backend_api::npy::{self, from_npy, to_npy};
use backend_api::{DType, Graph, Slot, Tensor};
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

/// Whether `path` is a GGUF file (a regular file starting with the GGUF magic).
pub fn is_gguf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"GGUF"
}

/// Reads the params of `slots` that GGUF file `path` holds, by name: each is checked against its
/// slot (dtype and shape, quantised tensors as their raw blocks) before its data is read. A model
/// file holds more tensors than one graph uses, so the others are ignored; params it lacks are
/// reported missing by the caller.
pub fn load_gguf_params(path: &Path, slots: &[Slot]) -> Result<Vec<NamedTensor>> {
    let file = GgufFile::open(path).with_context(|| format!("params {} is not a usable GGUF file", path.display()))?;
    slots
        .iter()
        .filter(|slot| file.tensor_names().any(|n| n == slot.name))
        .map(|slot| {
            file.check_param(slot)?;
            let tensor = file.tensor(&slot.name)?.tensor;
            Ok(NamedTensor { name: slot.name.clone(), tensor, source: format!("{}:{}", path.display(), slot.name) })
        })
        .collect()
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
        let declared = entry.size();
        let tensor = read_npz_entry(&mut entry, declared, &source)?;
        out.push(NamedTensor { name: name.to_string(), tensor, source });
    }
    Ok(out)
}

/// The most header bytes an `.npz` entry may have: NumPy writes headers of a few hundred bytes;
/// the bound keeps a hostile header length from being read whole.
const MAX_NPY_HEADER: usize = 1 << 20;

/// Reads one `.npy` entry of an archive without ever inflating more than it declares: the
/// preamble and header first (bounded), then exactly the data length the header declares, which
/// must equal the archive's `declared` uncompressed size, plus one byte to detect a longer stream.
fn read_npz_entry(entry: &mut impl Read, declared: u64, source: &str) -> Result<Tensor> {
    let mut head = Vec::new();
    read_bounded(entry, npy::PREAMBLE_LEN, &mut head, source)?;
    let end = npy::header_end(&head).with_context(|| format!("{source} is not a usable .npy entry"))?;
    if end > MAX_NPY_HEADER {
        bail!("{source}: .npy header of {end} bytes is longer than {MAX_NPY_HEADER}");
    }
    read_bounded(entry, end.saturating_sub(head.len()), &mut head, source)?;
    let layout = npy::read_layout(&head).with_context(|| format!("{source} is not a usable .npy entry"))?;
    let Some(want) = layout.data_offset.checked_add(layout.data_bytes) else {
        bail!("{source}: the entry's size overflows")
    };
    if u64::try_from(want).ok() != Some(declared) {
        bail!(
            "{source}: the .npy header declares {}{:?} ({want} bytes with the header) but the archive says the entry \
             has {declared} bytes",
            layout.dtype,
            layout.shape
        );
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(want).map_err(|_| anyhow::anyhow!("{source}: cannot allocate {want} bytes"))?;
    bytes.extend_from_slice(&head);
    // One byte more than expected, so that a stream longer than declared is detected, not read.
    read_bounded(entry, want.saturating_sub(head.len()).saturating_add(1), &mut bytes, source)?;
    if bytes.len() > want {
        bail!("{source}: the entry inflates to more than the {want} bytes its header and the archive declare");
    }
    from_npy(&bytes).with_context(|| format!("{source} is not a usable .npy entry"))
}

/// Appends at most `n` more bytes of `r` to `out`.
fn read_bounded(r: &mut impl Read, n: usize, out: &mut Vec<u8>, source: &str) -> Result<()> {
    let n = u64::try_from(n).unwrap_or(u64::MAX);
    r.take(n).read_to_end(out).with_context(|| format!("cannot read {source}"))?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// An archive of `entries` (name, bytes), deflated.
    fn npz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(bytes).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    fn load(bytes: &[u8]) -> Result<Vec<NamedTensor>> {
        let dir = std::env::temp_dir().join(format!("wgml-npz-{}-{:p}", std::process::id(), bytes));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.npz");
        std::fs::write(&path, bytes).unwrap();
        let r = load_npz(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    #[test]
    fn a_good_archive_reads() {
        let t = Tensor::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let got = load(&npz(&[("w.npy", &to_npy(&t).unwrap())])).unwrap();
        assert_eq!((got.len(), got[0].name.as_str(), &got[0].tensor), (1, "w", &t));
    }

    #[test]
    fn an_entry_that_inflates_past_its_header_is_refused_unread() {
        // A header for 4 bytes followed by 64 MiB of zeros: deflates to ~64 KiB; reading must stop
        // after the declared size instead of inflating it all.
        let mut bomb = to_npy(&Tensor::from_slice(&[1], &[0.0f32]).unwrap()).unwrap();
        bomb.resize(64 << 20, 0);
        let file = npz(&[("w.npy", &bomb)]);
        assert!(file.len() < 1 << 20, "{} bytes", file.len());
        let e = load(&file).err().unwrap();
        assert!(format!("{e:#}").contains("the archive says the entry has 67108864 bytes"), "{e:#}");
    }

    #[test]
    fn an_entry_claiming_a_huge_shape_is_refused_before_inflating() {
        let h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
        b.extend_from_slice(h);
        let e = load(&npz(&[("w.npy", &b)])).err().unwrap();
        assert!(format!("{e:#}").contains("4611686018427387904"), "{e:#}");
        let e = load(&npz(&[("w.npy", b"\x93NUM")])).err().unwrap();
        assert!(format!("{e:#}").contains("not a usable .npy entry"), "{e:#}");
    }
}
