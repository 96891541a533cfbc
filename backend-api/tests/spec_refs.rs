//! Every section reference (`§2.7.8`, `§2.6.5–2.6.7`, `§2.7.3, 2.7.6`, `(§3)`) in the workspace's
//! code and docs names a heading of `docs/SPEC-ops.md`, and no file points at the spec by a path
//! outside the repository.
//!
//! The spec is the contract and changes together with the code; a renumbered or removed section
//! would otherwise leave comments and docs pointing at nothing (or at the wrong rule) without
//! anyone noticing. A copy of the spec outside the repository is not the contract, so a path to
//! one is an error too.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The section sign, written as an escape so that this file's own test inputs are not references.
const SECTION: char = '\u{a7}';
/// The spec's file name; paths in front of it are what the path check looks at.
const SPEC_NAME: &str = "SPEC-ops.md";
/// The kinds of files that may cite the spec: code, shaders, scripts, manifests and docs.
const EXTENSIONS: &[&str] = &["rs", "wgsl", "sh", "toml", "md"];
/// Directories that hold no sources of ours: build output and git's own data.
const SKIPPED_DIRS: &[&str] = &["target", ".git"];

/// One reference as written, with every section number it names: both ends of a range and every
/// item of a list.
#[derive(Debug)]
struct Reference {
    line: usize,
    written: String,
    sections: Vec<String>,
}

/// `2`, `1.11`, `2.7.8`: digits separated by single dots.
fn is_section_number(word: &str) -> bool {
    !word.is_empty() && word.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// The section numbers the spec's headings define. A heading may define several
/// (`2.7.8 FusedResidualLayerNorm and 2.7.9 FusedResidualRmsNorm`, `2.10.1 Rnn, 2.10.2 Gru, …`),
/// so a number counts at the start of the title and after `and` or a comma; a top-level heading
/// writes its number with a dot (`3. Summary`). Lines inside code fences are not headings.
fn section_numbers(spec: &str) -> BTreeSet<String> {
    let mut numbers = BTreeSet::new();
    let mut in_fence = false;
    for line in spec.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let title = line.trim_start_matches('#');
        if in_fence || title.len() == line.len() || !title.starts_with(' ') {
            continue;
        }
        let mut defines = true;
        for word in title.split_whitespace() {
            let bare = word.trim_end_matches([',', '.', ':']);
            if defines && is_section_number(bare) {
                numbers.insert(bare.to_string());
            }
            defines = word.ends_with(',') || word == "and";
        }
    }
    numbers
}

/// Splits a section number (`2.6.5`) off the front of `text`; a dot that ends a sentence (`§1.9.`)
/// is not part of it.
fn take_number(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut end = 0;
    loop {
        let start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            return None;
        }
        if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
        } else {
            return Some((&text[..end], &text[end..]));
        }
    }
}

/// Skips what may separate a range's dash from its second end: spaces, and a line break followed by
/// the next line's comment leader (`///`, `//!`, `#`, ` *`), since comments wrap anywhere.
fn skip_wrap(text: &str) -> &str {
    let rest = text.trim_start_matches([' ', '\t']);
    match rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n')) {
        Some(next_line) => next_line.trim_start_matches([' ', '\t', '/', '!', '#', '*']),
        None => rest,
    }
}

/// A number, or a range `A–B` (en dash or hyphen): both ends, since both must exist.
fn take_range(text: &str) -> Option<(Vec<String>, &str)> {
    let (first, rest) = take_number(text)?;
    let mut sections = vec![first.to_string()];
    let after_dash = rest.trim_start_matches([' ', '\t']);
    let after_dash = after_dash.strip_prefix('–').or_else(|| after_dash.strip_prefix('-'));
    if let Some(second) = after_dash.and_then(|tail| take_number(skip_wrap(tail))) {
        sections.push(second.0.to_string());
        return Some((sections, second.1));
    }
    Some((sections, rest))
}

/// A further item of a list (`, 2.7.6–2.7.9`, ` and 2.2.5`). Only dotted numbers continue a list,
/// so that `§1.11, 2 ulp` stays one reference.
fn take_list_item(text: &str) -> Option<(Vec<String>, &str)> {
    let rest = text
        .strip_prefix(',')
        .map(|tail| tail.trim_start_matches(' '))
        .or_else(|| text.strip_prefix(" and "))
        .or_else(|| text.strip_prefix(" or "))?;
    let (number, _) = take_number(rest)?;
    if !number.contains('.') {
        return None;
    }
    take_range(rest)
}

/// Every reference in `text`: `§` or `§§`, optional spaces, then numbers, ranges and lists. A sign
/// with no number after it is the sign itself being talked about, not a reference.
fn references(text: &str) -> Vec<Reference> {
    let mut found = Vec::new();
    let mut consumed = 0;
    for (at, _) in text.match_indices(SECTION) {
        if at < consumed {
            continue;
        }
        let body = text[at..].trim_start_matches(SECTION).trim_start_matches([' ', '\u{a0}']);
        let Some((mut sections, mut rest)) = take_range(body) else {
            continue;
        };
        while let Some((more, tail)) = take_list_item(rest) {
            sections.extend(more);
            rest = tail;
        }
        let end = text.len() - rest.len();
        found.push(Reference {
            line: text[..at].matches('\n').count() + 1,
            written: text[at..end].split_whitespace().collect::<Vec<_>>().join(" "),
            sections,
        });
        consumed = end;
    }
    found
}

/// `line: reference (missing)` for every section number of `text` that no heading defines.
fn unresolved(text: &str, headings: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for reference in references(text) {
        for section in reference.sections.iter().filter(|section| !headings.contains(*section)) {
            problems.push(format!("{}: {} (no heading {section})", reference.line, reference.written));
        }
    }
    problems
}

/// `line: path` for every mention of the spec through a path that does not lead to the repository's
/// copy, read from the mentioning file's directory or from the repository root. A bare name
/// (`SPEC-ops.md §1.9`) is fine: it can only mean the contract.
fn foreign_spec_paths(file: &Path, text: &str, root: &Path, spec: &Path) -> Vec<String> {
    let path_byte = |b: u8| b.is_ascii_alphanumeric() || b"_.-/~\\".contains(&b);
    let spec = fs::canonicalize(spec).unwrap();
    let mut problems = Vec::new();
    for (at, _) in text.match_indices(SPEC_NAME) {
        let bytes = text.as_bytes();
        let mut start = at;
        while start > 0 && path_byte(bytes[start - 1]) {
            start -= 1;
        }
        let prefix = &text[start..at];
        if prefix.is_empty() || !prefix.ends_with('/') {
            continue;
        }
        let leads_home = !prefix.starts_with(['/', '~'])
            && [file.parent().unwrap_or(root), root]
                .iter()
                .any(|base| fs::canonicalize(base.join(prefix).join(SPEC_NAME)).is_ok_and(|found| found == spec));
        if !leads_home {
            let line = text[..at].matches('\n').count() + 1;
            problems.push(format!("{line}: {prefix}{SPEC_NAME}"));
        }
    }
    problems
}

/// The workspace's files of the kinds in [`EXTENSIONS`], sorted; symlinks are not followed so
/// that nothing outside the tree is read.
fn workspace_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            let name = entry.file_name();
            if kind.is_dir() && !SKIPPED_DIRS.iter().any(|skipped| name == *skipped) {
                pending.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|ext| EXTENSIONS.iter().any(|e| ext == *e)) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn root() -> PathBuf {
    fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).unwrap()
}

fn spec_path(root: &Path) -> PathBuf {
    root.join("docs").join(SPEC_NAME)
}

/// Reads a file as text; a stray invalid byte must not hide the rest of the file from the check.
fn read_text(path: &Path) -> String {
    String::from_utf8_lossy(&fs::read(path).unwrap()).into_owned()
}

#[test]
fn every_section_reference_names_a_spec_heading() {
    let root = root();
    let spec = spec_path(&root);
    let headings = section_numbers(&read_text(&spec));
    assert!(headings.contains("1.11") && headings.contains("3"), "no headings read from {}", spec.display());
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in workspace_files(&root).into_iter().filter(|file| *file != spec) {
        let text = read_text(&file);
        checked += references(&text).len();
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        problems.extend(unresolved(&text, &headings).into_iter().map(|problem| format!("{shown}:{problem}")));
    }
    assert!(checked > 0, "no section references found under {}", root.display());
    assert!(problems.is_empty(), "references to no heading of docs/{SPEC_NAME}:\n{}", problems.join("\n"));
}

#[test]
fn the_spec_is_named_by_its_path_in_the_repository() {
    let root = root();
    let spec = spec_path(&root);
    let mut problems = Vec::new();
    for file in workspace_files(&root) {
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        let found = foreign_spec_paths(&file, &read_text(&file), &root, &spec);
        problems.extend(found.into_iter().map(|problem| format!("{shown}:{problem}")));
    }
    assert!(problems.is_empty(), "paths to a spec outside the repository:\n{}", problems.join("\n"));
}

/// The checks above pass only if the extractor and resolver can fail: these feed them known
/// good and bad references.
mod extractor {
    use super::*;

    const SPEC: &str = "# Title\n## 1. Conventions\n### 1.11 Tolerance classes\n## 2. Operators\n\
        #### 2.5.2 ArgMax and 2.5.3 ArgMin\n#### 2.10.1 Rnn, 2.10.2 Gru, 2.10.3 Lstm (common definition)\n\
        ```\n# 9.9 not a heading\n```\n## 3. Summary of all operators\n";

    fn sections(text: &str) -> Vec<Vec<String>> {
        references(text).into_iter().map(|reference| reference.sections).collect()
    }

    #[test]
    fn headings_define_every_number_they_name() {
        let numbers: Vec<_> = section_numbers(SPEC).into_iter().collect();
        assert_eq!(numbers, ["1", "1.11", "2", "2.10.1", "2.10.2", "2.10.3", "2.5.2", "2.5.3", "3"]);
    }

    #[test]
    fn forms_of_reference() {
        let s = SECTION;
        let text = format!(
            "({s}3) {s}1.11. {s}{s}2.5.2 {s}2.5.2–2.5.3 {s}2.10.1-2.10.3 {s}2.5.2, 2.10.1–2.10.2 and 1.11, 2 ulp\n\
             /// {s}2.10.1–\n/// 2.10.3 wrapped {s} alone"
        );
        let expected: Vec<Vec<&str>> = vec![
            vec!["3"],
            vec!["1.11"],
            vec!["2.5.2"],
            vec!["2.5.2", "2.5.3"],
            vec!["2.10.1", "2.10.3"],
            vec!["2.5.2", "2.10.1", "2.10.2", "1.11"],
            vec!["2.10.1", "2.10.3"],
        ];
        assert_eq!(sections(&text), expected);
        assert_eq!(references(&text)[6].line, 2);
        assert!(unresolved(&text, &section_numbers(SPEC)).is_empty());
    }

    #[test]
    fn bad_references_are_reported_with_their_line() {
        let s = SECTION;
        let headings = section_numbers(SPEC);
        let text = format!("fine {s}1.11\nsee {s}2.7.8 and {s}2.5.2–2.5.9\n{s}9.9 is in a code fence only");
        assert_eq!(
            unresolved(&text, &headings),
            [
                format!("2: {s}2.7.8 (no heading 2.7.8)"),
                format!("2: {s}2.5.2–2.5.9 (no heading 2.5.9)"),
                format!("3: {s}9.9 (no heading 9.9)")
            ]
        );
    }

    #[test]
    fn paths_outside_the_repository_are_reported() {
        let root = root();
        let spec = spec_path(&root);
        let file = root.join("docs").join("DECISIONS.md");
        let text = format!(
            "{SPEC_NAME} §1.9\n[spec]({SPEC_NAME})\ndocs/{SPEC_NAME}\n../docs/{SPEC_NAME}\n\
             ../contract/{SPEC_NAME}\n/opt/contract/{SPEC_NAME}\nbackend-api/{SPEC_NAME}"
        );
        assert_eq!(
            foreign_spec_paths(&file, &text, &root, &spec),
            [
                format!("5: ../contract/{SPEC_NAME}"),
                format!("6: /opt/contract/{SPEC_NAME}"),
                format!("7: backend-api/{SPEC_NAME}")
            ]
        );
    }
}
