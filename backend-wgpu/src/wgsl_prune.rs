//! Leaving out the functions of a WGSL module that no entry point calls.
//!
//! Every kernel is rendered with the shared helper libraries (`common.wgsl`, the maths files),
//! of which a kernel calls a handful of functions: parsing, validating and translating the rest is
//! most of what building a pipeline costs outside the driver. Functions are the only items left
//! out: constants, structs, variables and directives stay, so the module means the same.
//!
//! The scan is conservative: a function is kept when any identifier in kept code (everything
//! outside functions, and the bodies of kept functions) has its name, so a local variable that
//! shares a helper's name keeps the helper. A function with attributes (an entry point) is
//! always kept. WGSL has no strings and no overloading, so names and braces outside comments are
//! all that matter.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// One top-level function: its name, byte range (from `fn` to its closing brace) and whether
/// attributes precede it.
struct FnItem<'a> {
    name: &'a str,
    start: usize,
    end: usize,
    attributed: bool,
}

/// `source` without the functions that no entry point reaches; the source itself when every
/// function is used or the text does not scan as expected (unbalanced braces).
pub(crate) fn used_functions(source: &str) -> Cow<'_, str> {
    let code = blank_comments(source);
    let Some(fns) = functions(&code) else { return Cow::Borrowed(source) };
    let keep = reachable(&code, &fns);
    if keep.len() == fns.len() {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for (k, f) in fns.iter().enumerate() {
        if !keep.contains(&k) {
            out.push_str(source.get(at..f.start).unwrap_or_default());
            at = f.end;
        }
    }
    out.push_str(source.get(at..).unwrap_or_default());
    Cow::Owned(out)
}

/// `source` with every comment's bytes (line and nested block comments) replaced by spaces, so
/// byte positions stay those of `source`. Newlines inside block comments are kept.
fn blank_comments(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut depth, mut line) = (0, 0usize, false);
    while let Some(&c) = b.get(i) {
        let next = b.get(i + 1).copied();
        let pair = |x: u8, y: u8| c == x && next == Some(y);
        if line {
            line = c != b'\n';
        } else if pair(b'/', b'*') {
            depth += 1;
            out.extend_from_slice(b"  ");
            i += 2;
            continue;
        } else if depth > 0 && pair(b'*', b'/') {
            depth -= 1;
            out.extend_from_slice(b"  ");
            i += 2;
            continue;
        } else if depth == 0 && pair(b'/', b'/') {
            line = true;
        }
        let blank = (line || depth > 0) && c != b'\n';
        out.push(if blank || !c.is_ascii() { b' ' } else { c });
        i += 1;
    }
    // Only ASCII bytes were kept, so this cannot fail; an empty scan keeps the whole source.
    String::from_utf8(out).unwrap_or_default()
}

/// The identifier at byte `i` of `code` (ASCII letters, digits, `_`) and the byte after it.
fn ident_at(code: &str, i: usize) -> (&str, usize) {
    let end = code
        .get(i..)
        .and_then(|rest| rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .map_or(code.len(), |n| i + n);
    (code.get(i..end).unwrap_or_default(), end)
}

/// The top-level functions of comment-free `code`, or `None` when its braces do not balance.
fn functions(code: &str) -> Option<Vec<FnItem<'_>>> {
    let b = code.as_bytes();
    let mut fns = Vec::new();
    let (mut i, mut item_start) = (0, 0);
    while let Some(&c) = b.get(i) {
        match c {
            b';' => item_start = i + 1,
            b'{' => {
                // A top-level brace outside a function: a struct body.
                i = matching_brace(b, i)?;
                item_start = i + 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let (word, end) = ident_at(code, i);
                if word == "fn" {
                    let f = function(code, i, end, item_start)?;
                    i = f.end;
                    item_start = f.end;
                    fns.push(f);
                    continue;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Some(fns)
}

/// The function whose `fn` keyword spans `start..after_kw`; `item_start` is where the text since
/// the previous item begins (attributes belong to the function).
fn function(code: &str, start: usize, after_kw: usize, item_start: usize) -> Option<FnItem<'_>> {
    let name_at = after_kw + code.get(after_kw..)?.find(|c: char| !c.is_ascii_whitespace())?;
    let (name, _) = ident_at(code, name_at);
    let open = name_at + code.get(name_at..)?.find('{')?;
    let end = matching_brace(code.as_bytes(), open)? + 1;
    let attributed = code.get(item_start..start)?.contains('@');
    Some(FnItem { name, start, end, attributed })
}

/// The index of the brace closing the one at `open`.
fn matching_brace(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The identifiers of `text`.
fn idents(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|t| !t.is_empty())
}

/// Indices of the functions reachable from the code outside functions and from attributed ones.
fn reachable(code: &str, fns: &[FnItem<'_>]) -> HashSet<usize> {
    let by_name: HashMap<&str, usize> = fns.iter().enumerate().map(|(k, f)| (f.name, k)).collect();
    let mut keep = HashSet::new();
    let mut todo: Vec<usize> = fns.iter().enumerate().filter(|(_, f)| f.attributed).map(|(k, _)| k).collect();
    let mut at = 0;
    for f in fns {
        todo.extend(idents(code.get(at..f.start).unwrap_or_default()).filter_map(|w| by_name.get(w).copied()));
        at = f.end;
    }
    todo.extend(idents(code.get(at..).unwrap_or_default()).filter_map(|w| by_name.get(w).copied()));
    while let Some(k) = todo.pop() {
        if !keep.insert(k) {
            continue;
        }
        let Some(f) = fns.get(k) else { continue };
        let body = code.get(f.start..f.end).unwrap_or_default();
        todo.extend(idents(body).filter_map(|w| by_name.get(w).copied()).filter(|j| !keep.contains(j)));
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::used_functions;

    const SRC: &str = "// header { not code }\nconst K: f32 = 2.0;\nstruct P { n: u32, }\n\
        @group(0) @binding(0) var<uniform> p: P;\n\
        fn unused(x: f32) -> f32 { return helper(x) * K; }\n\
        fn helper(x: f32) -> f32 { /* { nested /* } */ */ return x + 1.0; }\n\
        fn leaf(x: f32) -> f32 { if (x > 0.0) { return x; } return -x; }\n\
        fn mid(x: f32) -> f32 { return leaf(x); } // calls leaf\n\
        @compute @workgroup_size(1)\nfn main() { let y = mid(f32(p.n)); }\n";

    #[test]
    fn functions_no_entry_point_reaches_are_left_out() {
        let out = used_functions(SRC);
        assert!(!out.contains("fn unused") && !out.contains("fn helper"), "{out}");
        for kept in ["const K", "struct P", "var<uniform> p", "fn leaf", "fn mid", "@compute", "fn main()"] {
            assert!(out.contains(kept), "{kept} missing from {out}");
        }
        assert!(out.starts_with("// header"));
    }

    #[test]
    fn a_fully_used_or_unscannable_module_is_returned_as_is() {
        let used = "fn f() -> u32 { return 1u; }\n@compute @workgroup_size(1) fn main() { let x = f(); }";
        assert!(matches!(used_functions(used), std::borrow::Cow::Borrowed(_)));
        let unbalanced = "fn f() { \n@compute @workgroup_size(1) fn main() { }";
        assert_eq!(used_functions(unbalanced), unbalanced);
    }

    #[test]
    fn a_global_initialiser_or_a_shadowing_name_keeps_a_function() {
        let src = "fn g() -> u32 { return 1u; }\nfn h() -> u32 { return 2u; }\n\
            @compute @workgroup_size(1) fn main() { let h = 3u; }";
        let out = used_functions(src);
        assert!(out.contains("fn h()") && !out.contains("fn g()"), "{out}");
    }
}
