//! The persistent pipeline cache ([`crate::WgpuOptions::pipeline_cache_dir`]): the driver's
//! compiled pipelines, loaded from one file per adapter when the device opens and written back
//! after each compile that built new pipelines.
//!
//! IO errors never fail a compile: a missing directory or an unreadable file starts an empty
//! cache, and a failed write leaves the file as it was and is reported by
//! [`crate::WgpuBackend::pipeline_cache`] (docs/DECISIONS.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Where a device's pipeline cache lives and how its last load and save went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStatus {
    /// The cache file (`<dir>/<wgpu::util::pipeline_cache_key>`).
    pub path: PathBuf,
    /// Bytes read from it when the device opened (0: none, the cache started empty).
    pub loaded_bytes: u64,
    /// Bytes written by the last save (0: not saved yet).
    pub saved_bytes: u64,
    /// The last save's error, if it failed.
    pub last_error: Option<String>,
}

/// A wgpu pipeline cache tied to its file.
pub(crate) struct DiskCache {
    /// What every compute pipeline of the device is created with.
    pub cache: wgpu::PipelineCache,
    status: Mutex<CacheStatus>,
    /// Pipelines built when the cache was last saved.
    saved_pipelines: AtomicU64,
}

impl DiskCache {
    /// The cache of `adapter` in `dir`, loaded from its file where one is readable; `None` where
    /// wgpu has no cache key for the adapter (non-Vulkan backends).
    pub fn open(device: &wgpu::Device, adapter: &wgpu::AdapterInfo, dir: &Path) -> Option<DiskCache> {
        let path = dir.join(wgpu::util::pipeline_cache_key(adapter)?);
        // A missing or unreadable file starts an empty cache.
        let data = std::fs::read(&path).ok();
        // SAFETY: `create_pipeline_cache` requires `data` to come from `PipelineCache::get_data`
        // of an adapter with the same cache key. The file is named by that key and written only
        // by `save` below, from `get_data`, through a temporary file renamed into place, so no
        // reader sees a partial file. Data that is stale, truncated or from another driver is
        // refused by wgpu's header check (magic, ABI, backend, adapter key, driver validation
        // key, exact length) and by the Vulkan driver's own header (vendor, device, cache UUID);
        // `fallback: true` then gives an empty cache instead of an error. What remains is a file
        // deliberately forged by someone who can write the directory, which is why the directory
        // must be one only the host writes (documented on `WgpuOptions::pipeline_cache_dir`).
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("backend-wgpu"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        let loaded_bytes = data.map_or(0, |d| u64::try_from(d.len()).unwrap_or(u64::MAX));
        let status = CacheStatus { path, loaded_bytes, ..CacheStatus::default() };
        Some(DiskCache { cache, status: Mutex::new(status), saved_pipelines: AtomicU64::new(0) })
    }

    /// Writes the cache's data to its file when the device now holds `pipelines`, more than at
    /// the last save; errors are kept in the status, never returned (a failed save is
    /// retried once more pipelines are built).
    pub fn save(&self, pipelines: usize) {
        let built = u64::try_from(pipelines).unwrap_or(u64::MAX);
        if self.saved_pipelines.fetch_max(built, Ordering::AcqRel) >= built {
            return;
        }
        // The data is taken under the lock, so that a later save never writes older data.
        let Ok(mut status) = self.status.lock() else { return };
        let Some(data) = self.cache.get_data() else { return };
        match write_atomically(&status.path, &data) {
            Ok(()) => {
                status.saved_bytes = u64::try_from(data.len()).unwrap_or(u64::MAX);
                status.last_error = None;
            }
            Err(e) => status.last_error = Some(format!("writing the pipeline cache {}: {e}", status.path.display())),
        }
    }

    /// The cache's file and the outcome of its last load and save.
    pub fn status(&self) -> CacheStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// Writes `data` to a temporary file next to `path` (named by this process, so concurrent
/// writers never share one), then renames it over `path`: a reader sees the old file or the new
/// one, never half of one. Creates the directory where missing.
pub(crate) fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    let written = std::fs::write(&tmp, data).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // Best effort: a temporary file left behind is harmless, the error is what matters.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::write_atomically;

    #[test]
    fn writes_replace_the_file_whole_and_create_the_directory() {
        let dir = std::env::temp_dir().join(format!("wgpu-cache-test-{}", std::process::id()));
        let path = dir.join("sub").join("cache_key");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["cache_key"], "no temporary file is left");
        // A path under a file cannot be written: an error, nothing panics.
        assert!(write_atomically(&path.join("below_a_file"), b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
