//! The README's list of ops each backend does not run yet matches the op table and the backends'
//! capabilities. Skipped, with a note, when the README has no markers or a backend of the list
//! cannot be created here (no GPU adapter, or the `wgpu` feature off).

use conformance::readme::{capabilities, replace_section, section, BEGIN, END};

use backend_cpu_ref as _;
#[cfg(feature = "wgpu")]
use backend_wgpu as _;

#[test]
fn the_readme_section_of_ops_not_run_yet_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let text = std::fs::read_to_string(path).expect("README.md is readable");
    if !text.contains(BEGIN) || !text.contains(END) {
        eprintln!("note: README.md has no {BEGIN} … {END} markers; the not-lowered section is not checked");
        return;
    }
    let caps = match capabilities() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("note: the not-lowered section is not checked: {e}");
            return;
        }
    };
    let want = replace_section(&text, &section(&caps)).expect("markers in order");
    assert!(
        want == text,
        "README.md's list of ops not run yet is stale; run `cargo run -p conformance -- readme`.\nExpected section:\n{}",
        section(&caps)
    );
}
