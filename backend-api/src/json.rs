//! A versioned JSON encoding of [`Graph`] (feature `serde`; format: docs/GRAPH-FORMAT.md).
//!
//! A file is `{"format": "wgml-graph", "version": 1, "graph": {...}}`. Reading checks the tag and
//! the version before the body, then decodes and validates the graph, so that a file from a
//! newer build says so instead of failing somewhere in its body, and a decoded graph is always
//! valid.
//!
//! Errors: malformed JSON, wrong types, unknown ops or fields, a missing or wrong `format` →
//! `Input`, naming the JSON path, line and column; a version this build does not read →
//! `Unsupported`; a body that decodes but is not a valid graph → the validation error itself.

pub(crate) mod codec;
mod layout;

use crate::{Error, ErrorKind, Graph, Result};
use codec::GraphParts;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_path_to_error::{Path, Segment};

/// The version this build writes; it reads versions 1..=FORMAT_VERSION.
pub const FORMAT_VERSION: u32 = 1;

/// The `format` tag in every file.
pub const FORMAT_NAME: &str = "wgml-graph";

/// The deepest nesting of JSON arrays and objects a graph file may have, for the writer and the
/// reader alike: serde_json's recursion limit (128 levels, the file's own object included), below
/// which decoding is stack-safe. Each nested `If` costs five levels under the file's seven, so 24
/// `If`s can nest; [`to_json`] refuses a deeper graph and [`from_json`] a deeper
/// text, both with an error naming this limit (docs/GRAPH-FORMAT.md, "Nesting").
pub const MAX_NESTING: usize = 127;

/// The deepest nesting of arrays and objects in JSON `text` (strings skipped; for text that is
/// not JSON, a lower bound that the parser then refuses on its own).
fn nesting(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text.as_bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth = depth.saturating_add(1);
                max = max.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            (false, _, _) => {}
        }
    }
    max
}

/// The error of a graph or a text nested deeper than [`MAX_NESTING`].
fn too_deep(what: &str, depth: usize) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "{what} nests JSON {depth} levels deep, more than the graph format's limit of {MAX_NESTING} (24 nested \
             If bodies); flatten the control flow"
        ),
    )
}

/// Pretty JSON: {"format": "wgml-graph", "version": 1, "graph": {...}}. Validates first: an invalid
/// graph is the validation error, never a file that would not read back.
///
/// Two-space indentation; arrays and objects that fit in 100 columns stay on one line. The text
/// ends with a newline. Equal graphs give identical text.
pub fn to_json(graph: &Graph) -> Result<String> {
    // Only valid graphs are written, so that every file this writes reads back (an empty
    // `Graph::default()` has no outputs, for one).
    graph.validate()?;
    let file = FileRef { format: FORMAT_NAME, version: FORMAT_VERSION, graph };
    let compact = match serde_json::to_string(&file) {
        Ok(text) => text,
        // The IR's Serialize impls never fail and the writer is a String; kept as a value anyway.
        Err(e) => return Err(Error::new(ErrorKind::Input, format!("graph file: cannot encode the graph: {e}"))),
    };
    // Refused here, so that every file this writes reads back (the reader's limit is the same).
    let depth = nesting(&compact);
    if depth > MAX_NESTING {
        return Err(too_deep("the graph", depth));
    }
    let mut text = layout::layout(&compact).unwrap_or(compact);
    text.push('\n');
    Ok(text)
}

/// Parses and validates; errors name the JSON path (e.g. `graph.nodes[3].op.Reshape.new_shape[1]`) and line/column.
pub fn from_json(text: &str) -> Result<Graph> {
    let depth = nesting(text);
    if depth > MAX_NESTING {
        return Err(too_deep("graph file", depth));
    }
    let header = match parse::<Header>(text) {
        Ok(h) => h,
        Err(f) => return Err(header_failure(text, f)),
    };
    check_header(&header)?;
    let file = match parse::<File>(text) {
        Ok(file) => file,
        Err(f) => return Err(body_failure(text, f)),
    };
    Graph::from_parts(file.graph.nodes, file.graph.outputs)
}

/// What [`to_json`] writes.
#[derive(Serialize)]
struct FileRef<'a> {
    format: &'static str,
    version: u32,
    graph: &'a Graph,
}

const EXPECTING: &str = "a graph file: a JSON object with `format`, `version` and `graph`";

/// The first pass of [`from_json`]: the tag and version of a file of any version. Other fields
/// (the body) are skipped, checked only for JSON syntax.
struct Header {
    format: Option<String>,
    version: Option<u64>,
}

/// Reads only a JSON object (a derived impl would also take an array of the fields in order).
impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Header, D::Error> {
        d.deserialize_map(HeaderVisitor)
    }
}

struct HeaderVisitor;

impl<'de> serde::de::Visitor<'de> for HeaderVisitor {
    type Value = Header;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(EXPECTING)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Header, A::Error> {
        let mut h = Header { format: None, version: None };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" if h.format.is_none() => h.format = Some(map.next_value()?),
                "version" if h.version.is_none() => h.version = Some(map.next_value()?),
                "format" | "version" => return Err(serde::de::Error::custom(format!("duplicate field `{key}`"))),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(h)
    }
}

/// The second pass of [`from_json`]: a file of a version this build reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a graph file: a JSON object with `format`, `version` and `graph`")]
struct File {
    #[serde(rename = "format")]
    _format: IgnoredAny,
    #[serde(rename = "version")]
    _version: IgnoredAny,
    graph: GraphParts,
}

fn check_header(h: &Header) -> Result<()> {
    match h.format.as_deref() {
        Some(FORMAT_NAME) => {}
        Some(other) => {
            return Err(Error::new(
                ErrorKind::Input,
                format!("graph file: `format` is {other:?}, expected {FORMAT_NAME:?}; this is not a graph file"),
            ))
        }
        None => {
            return Err(Error::new(
                ErrorKind::Input,
                format!("graph file: no `format` field; a graph file starts with {{\"format\": {FORMAT_NAME:?}, ...}}"),
            ))
        }
    }
    match h.version {
        Some(v) if v >= 1 && v <= u64::from(FORMAT_VERSION) => Ok(()),
        Some(v) => Err(Error::new(
            ErrorKind::Unsupported,
            format!("graph file version {v}; this build reads versions 1..={FORMAT_VERSION}"),
        )),
        None => Err(Error::new(ErrorKind::Input, "graph file: no `version` field")),
    }
}

/// A failed parse: where (path, when the failure was inside a value) and serde_json's error.
struct Failure {
    path: Option<Path>,
    error: serde_json::Error,
}

impl Failure {
    fn path_text(&self) -> String {
        match &self.path {
            Some(p) if p.iter().next().is_some() => p.to_string(),
            _ => "the top level".to_string(),
        }
    }

    /// `at <path> (line L, column C)`.
    fn location(&self) -> String {
        let (line, column) = (self.error.line(), self.error.column());
        if line == 0 {
            format!("at {}", self.path_text())
        } else {
            format!("at {} (line {line}, column {column})", self.path_text())
        }
    }

    /// serde's message without serde_json's own ` at line L column C` suffix, and with a long
    /// list of the names it expected replaced by the nearest one.
    fn message(&self) -> String {
        let full = self.error.to_string();
        let suffix = format!(" at line {} column {}", self.error.line(), self.error.column());
        let msg = full.strip_suffix(&suffix).unwrap_or(&full);
        shorten_unknown_name(msg).unwrap_or_else(|| msg.to_string())
    }

    fn is_syntax(&self) -> bool {
        matches!(self.error.classify(), serde_json::error::Category::Syntax | serde_json::error::Category::Eof)
    }

    fn same_place(&self, other: &Failure) -> bool {
        (self.error.line(), self.error.column()) == (other.error.line(), other.error.column())
    }

    fn into_error(self) -> Error {
        Error::new(ErrorKind::Input, format!("graph file: {}: {}", self.location(), self.message()))
    }
}

/// Parses the whole of `text` as a `T`, tracking the path of a failure.
fn parse<T: DeserializeOwned>(text: &str) -> std::result::Result<T, Failure> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| Failure { path: Some(e.path().clone()), error: e.into_inner() })?;
    de.end().map_err(|error| Failure { path: None, error })?;
    Ok(value)
}

/// A failure of the header pass. The header pass skips the body, so for a syntax error inside
/// it the path stops at `graph`; the strict pass, which fails at the same place, knows the full
/// path.
fn header_failure(text: &str, f: Failure) -> Error {
    if f.is_syntax() {
        if let Err(strict) = parse::<File>(text) {
            if strict.is_syntax() && strict.same_place(&f) {
                return strict.into_error();
            }
        }
    }
    f.into_error()
}

/// A failure of the body pass. When it is a subgraph that decoded but failed validation, the
/// validation error is recovered with its kind (the serde error only carries its text).
fn body_failure(text: &str, f: Failure) -> Error {
    match invalid_subgraph(text, &f) {
        Some(e) => {
            let node = match e.node_id() {
                Some(id) => format!("node {id}: "),
                None => String::new(),
            };
            Error::new(e.kind(), format!("graph file: subgraph {}: {node}{}", f.location(), e.message()))
        }
        None => f.into_error(),
    }
}

/// The validation error of the subgraph at the failure's path, if the value there decodes as a
/// graph but is not a valid one.
fn invalid_subgraph(text: &str, f: &Failure) -> Option<Error> {
    let path = f.path.as_ref()?;
    path.iter().next()?;
    let root: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut at = &root;
    for segment in path {
        at = match segment {
            Segment::Seq { index } => at.get(*index)?,
            Segment::Map { key } => at.get(key)?,
            Segment::Enum { variant } => at.get(variant)?,
            Segment::Unknown => return None,
        };
    }
    let parts = GraphParts::deserialize(at).ok()?;
    Graph::from_parts(parts.nodes, parts.outputs).err()
}

/// The most names an "unknown variant" message lists in full (the op list has about 75).
const MAX_LISTED: usize = 12;

/// serde's "unknown variant `Matmul`, expected one of `Input`, …" with a long list, rewritten as
/// "unknown variant `Matmul`; did you mean `MatMul`? (one of N names)". `None` when the message
/// is of another kind or the list is short.
fn shorten_unknown_name(msg: &str) -> Option<String> {
    let (head, list) = msg.split_once(", expected one of ")?;
    let given = head.strip_prefix("unknown variant `")?.strip_suffix('`')?;
    let names: Vec<&str> = list.split(", ").map(|n| n.trim_matches('`')).collect();
    if names.len() <= MAX_LISTED {
        return None;
    }
    let nearest = names.iter().min_by_key(|n| edit_distance(&given.to_ascii_lowercase(), &n.to_ascii_lowercase()))?;
    Some(format!("{head}; did you mean `{nearest}`? (one of {} names, listed in docs/GRAPH-FORMAT.md)", names.len()))
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j] + 1).min(diag + 1);
        }
    }
    row[b.len()]
}
