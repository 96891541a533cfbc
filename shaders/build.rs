//! Lists every `src/wgsl/*.wgsl` file with its text (`$OUT_DIR/wgsl_files.rs`), so that
//! [`shaders::kernel_file`] can name the file of any rendered kernel without a hand-kept list.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("src/wgsl");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("src/wgsl is readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    names.sort();
    let mut out = String::from("/// Every WGSL file of `src/wgsl`: (file name, text), sorted by name.\n");
    out.push_str("pub(crate) const WGSL_FILES: &[(&str, &str)] = &[\n");
    for n in &names {
        let path = dir.join(n);
        writeln!(out, "    ({n:?}, include_str!({:?})),", path.display().to_string()).expect("writing to a String");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("wgsl_files.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
