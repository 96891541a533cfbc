//! Every crate names an op family's module as `Family::module()` says: cpu-ref's kernels in
//! `backend-cpu-ref/src/ops/<module>` and the generators in `conformance/src/problems/<module>`,
//! and nothing else lives there besides the named helpers.

use backend_api::spec::op_entry;
use backend_api::{Backend, Family, OpKind};
use backend_cpu_ref::CpuRefBackend;
use conformance::covered_rows;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `<dir>/<module>.rs` or `<dir>/<module>/`.
fn has_module(dir: &Path, module: &str) -> bool {
    dir.join(format!("{module}.rs")).is_file() || dir.join(module).join("mod.rs").is_file()
}

/// The module names in `dir` (files without `.rs`, folders), `mod` excluded.
fn modules(dir: &Path) -> BTreeSet<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    entries
        .map(|e| e.unwrap().path())
        .filter_map(|p| match (p.is_dir(), p.file_stem(), p.extension()) {
            (true, Some(n), _) => Some(n.to_string_lossy().into_owned()),
            (false, Some(n), Some(ext)) if ext == "rs" => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .filter(|n| n != "mod")
        .collect()
}

fn check(dir: PathBuf, families: &BTreeSet<Family>, helpers: &[&str]) {
    let mut problems = Vec::new();
    for f in families {
        if !has_module(&dir, f.module()) {
            problems.push(format!("{} has no module {} (family §{})", dir.display(), f.module(), f.section()));
        }
    }
    let family_names: Vec<&str> = Family::ALL.iter().map(|f| f.module()).collect();
    for m in modules(&dir) {
        if !family_names.contains(&m.as_str()) && !helpers.contains(&m.as_str()) {
            problems.push(format!("{}/{m} is neither a family module nor a listed helper", dir.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn cpu_ref_kernels_live_in_their_family_modules() {
    let families: BTreeSet<Family> =
        OpKind::ALL.iter().filter(|k| CpuRefBackend::new().implements(**k)).map(|k| k.family()).collect();
    assert!(families.contains(&Family::Leaf) && families.contains(&Family::Reduce));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../backend-cpu-ref/src/ops");
    check(dir, &families, &["math"]);
}

#[test]
fn generators_live_in_their_family_modules() {
    let families: BTreeSet<Family> = covered_rows().iter().filter_map(|r| op_entry(r)).map(|e| e.family()).collect();
    assert!(families.contains(&Family::Backward));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/problems");
    check(dir, &families, &[]);
}
