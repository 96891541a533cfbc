//! The section of `README.md` that lists, per backend, the ops it does not run yet. It is generated
//! from the op table and each backend's `Capabilities::ops` (what it runs natively or through
//! legalisation), between two markers, by `cargo run -p conformance -- readme` (and `-- report`);
//! a test fails when the section is stale.

use crate::FEATURE_ROWS;
use backend_api::spec::op_table;
use backend_api::{Family, OpKind};
use std::fmt::Write;

/// The line before the generated section.
pub const BEGIN: &str = "<!-- not-lowered:begin -->";
/// The line after the generated section.
pub const END: &str = "<!-- not-lowered:end -->";
/// The backends the section lists, in order.
pub const BACKENDS: &[&str] = &["wgpu", "cpu-ref"];

/// What a backend lacks within one family: whole kinds by name, and single rows of kinds it runs
/// in part (`Unary.Erf`).
fn missing_in(family: Family, runs: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for kind in OpKind::ALL.iter().filter(|k| k.family() == family) {
        let rows: Vec<String> = kind.labels().into_iter().filter(|r| !FEATURE_ROWS.contains(&r.as_str())).collect();
        let missing: Vec<&String> = rows.iter().filter(|r| !runs.contains(r)).collect();
        if !rows.is_empty() && missing.len() == rows.len() {
            out.push(kind.name().to_string());
        } else {
            out.extend(missing.into_iter().cloned());
        }
    }
    out
}

/// The section's text (without the markers) for `(backend name, Capabilities::ops)` pairs.
pub fn section(backends: &[(String, Vec<String>)]) -> String {
    let table_rows = op_table().into_iter().filter(|e| !FEATURE_ROWS.contains(&e.name.as_str())).count();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Ops not run yet, per backend, by family (generated from the op table and each backend's \
         `Capabilities::ops` by `cargo run -p conformance -- readme`; do not edit by hand). The Gaussian-splatting \
         ops (§2.17, cargo feature `splat`) are not listed."
    );
    for (name, runs) in backends {
        let _ = writeln!(s);
        let listed =
            op_table().iter().filter(|e| !FEATURE_ROWS.contains(&e.name.as_str()) && runs.contains(&e.name)).count();
        let families: Vec<(Family, Vec<String>)> =
            Family::ALL.iter().map(|f| (*f, missing_in(*f, runs))).filter(|(_, m)| !m.is_empty()).collect();
        if families.is_empty() {
            let _ = writeln!(s, "- `{name}` runs every op ({table_rows} of {table_rows} table rows).");
            continue;
        }
        let _ = writeln!(s, "- `{name}` runs {listed} of {table_rows} table rows; not yet:");
        for (f, missing) in families {
            let _ = writeln!(s, "  - {} (§{}): {}", f.module(), f.section(), missing.join(", "));
        }
    }
    s
}

/// `readme` with the text between [`BEGIN`] and [`END`] replaced by `section`; `None` when the
/// markers are missing or out of order.
pub fn replace_section(readme: &str, section: &str) -> Option<String> {
    let begin = readme.find(BEGIN)? + BEGIN.len();
    let end = begin + readme[begin..].find(END)?;
    Some(format!("{}\n{}{}", &readme[..begin], section, &readme[end..]))
}

/// The capabilities of every backend of [`BACKENDS`], or the first that cannot be created.
pub fn capabilities() -> Result<Vec<(String, Vec<String>)>, String> {
    BACKENDS
        .iter()
        .map(|name| match backend_api::create(name) {
            Ok(b) => Ok((name.to_string(), b.capabilities().ops)),
            Err(e) => Err(format!("cannot create backend {name:?}: {e}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_groups_what_is_missing_by_family() {
        let all: Vec<String> = op_table().into_iter().map(|e| e.name).collect();
        let some: Vec<String> = all.iter().filter(|r| *r != "Unary.Erf" && *r != "Fft").cloned().collect();
        let s = section(&[("a".into(), all.clone()), ("b".into(), some), ("c".into(), vec![])]);
        assert!(s.contains("- `a` runs every op"), "{s}");
        assert!(s.contains("  - elementwise (§2.2): Unary.Erf\n") && s.contains("  - signal (§2.11): Fft\n"), "{s}");
        assert!(s.contains("- `c` runs 0 of") && s.contains("Unary, Binary, Compare"), "{s}");
        let readme = format!("# T\n\n{BEGIN}\nold\n{END}\nrest\n");
        assert_eq!(replace_section(&readme, "new\n").unwrap(), format!("# T\n\n{BEGIN}\nnew\n{END}\nrest\n"));
        assert!(replace_section("no markers", "x").is_none());
    }
}
