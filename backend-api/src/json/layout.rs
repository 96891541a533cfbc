//! The layout of a graph file: two-space indentation, with every array and object that fits in
//! [`WIDTH`] columns kept on one line. serde_json's own pretty printer puts every dim and every
//! field on a line of its own, which makes an eight-node graph two hundred lines long.

/// The widest line an inline array or object may make (a longer scalar, such as the hex data of
/// a large constant, still gets a line of its own).
const WIDTH: usize = 100;

/// One token of compact JSON: a structural byte (`{ } [ ] : ,`) or a whole scalar.
#[derive(Clone, Copy)]
struct Tok {
    kind: u8,
    start: usize,
    end: usize,
}

const SCALAR: u8 = b's';

/// The tokens of compact JSON (no whitespace outside strings, as serde_json writes it), or
/// `None` for text that is not.
fn tokens(text: &str) -> Option<Vec<Tok>> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let kind = match b[i] {
            c @ (b'{' | b'}' | b'[' | b']' | b':' | b',') => {
                i += 1;
                c
            }
            b'"' => {
                i += 1;
                while *b.get(i)? != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                SCALAR
            }
            c if c.is_ascii_whitespace() => return None,
            _ => {
                while i < b.len() && !matches!(b[i], b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"') {
                    i += 1;
                }
                SCALAR
            }
        };
        toks.push(Tok { kind, start, end: i });
    }
    Some(toks)
}

struct Layout<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    /// For an opening token, the index of its closing token.
    close: Vec<usize>,
    /// `seps[k]`: the number of `:` and `,` tokens before token `k` (each widens by a space).
    seps: Vec<usize>,
}

impl<'a> Layout<'a> {
    fn new(text: &'a str) -> Option<Layout<'a>> {
        let toks = tokens(text)?;
        let mut close = vec![0; toks.len()];
        let mut seps = Vec::with_capacity(toks.len() + 1);
        let mut open = Vec::new();
        let mut n = 0;
        for (k, t) in toks.iter().enumerate() {
            seps.push(n);
            match t.kind {
                b'{' | b'[' => open.push(k),
                b'}' | b']' => close[open.pop()?] = k,
                b':' | b',' => n += 1,
                _ => {}
            }
        }
        seps.push(n);
        open.is_empty().then_some(Layout { text, toks, close, seps })
    }

    fn tok(&self, k: usize) -> Option<(u8, &'a str)> {
        let t = self.toks.get(k)?;
        Some((t.kind, self.text.get(t.start..t.end)?))
    }

    /// The width of tokens `i..=j` written inline.
    fn inline_width(&self, i: usize, j: usize) -> Option<usize> {
        Some(self.toks.get(j)?.end - self.toks.get(i)?.start + self.seps.get(j)? - self.seps.get(i)?)
    }

    fn write_inline(&self, i: usize, j: usize, out: &mut String) -> Option<()> {
        for k in i..=j {
            let (kind, s) = self.tok(k)?;
            out.push_str(s);
            if kind == b':' || kind == b',' {
                out.push(' ');
            }
        }
        Some(())
    }

    /// Writes the value starting at token `i`, which starts at column `col` of a line indented
    /// by `indent`; returns the index of the token after it.
    fn write_value(&self, i: usize, col: usize, indent: usize, out: &mut String) -> Option<usize> {
        let (kind, s) = self.tok(i)?;
        if kind == SCALAR {
            out.push_str(s);
            return Some(i + 1);
        }
        let j = *self.close.get(i)?;
        // `<`, not `<=`: keep a column for the comma that may follow.
        if j == i + 1 || col + self.inline_width(i, j)? < WIDTH {
            self.write_inline(i, j, out)?;
            return Some(j + 1);
        }
        out.push_str(s);
        let inner = indent + 2;
        let mut k = i + 1;
        loop {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', inner));
            let mut c = inner;
            if kind == b'{' {
                let (_, key) = self.tok(k)?;
                out.push_str(key);
                out.push_str(": ");
                c += key.len() + 2;
                k += 2;
            }
            k = self.write_value(k, c, inner, out)?;
            match self.tok(k)? {
                (b',', _) => {
                    out.push(',');
                    k += 1;
                }
                (_, end) => {
                    out.push('\n');
                    out.extend(std::iter::repeat_n(' ', indent));
                    out.push_str(end);
                    return Some(k + 1);
                }
            }
        }
    }
}

/// `compact` (serde_json's compact output) laid out for reading; `None` if it is not compact JSON.
pub(crate) fn layout(compact: &str) -> Option<String> {
    let l = Layout::new(compact)?;
    let mut out = String::with_capacity(compact.len() * 2);
    let end = l.write_value(0, 0, 0, &mut out)?;
    (end == l.toks.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn short_containers_stay_on_one_line() {
        let compact = r#"{"a":[1,2,"x,y:[]\"z"],"b":{},"c":[],"d":{"e":null}}"#;
        assert_eq!(layout(compact).unwrap(), r#"{"a": [1, 2, "x,y:[]\"z"], "b": {}, "c": [], "d": {"e": null}}"#);
        let long = format!(r#"{{"k":["{}",[1,2]],"m":3}}"#, "h".repeat(120));
        let want = format!("{{\n  \"k\": [\n    \"{}\",\n    [1, 2]\n  ],\n  \"m\": 3\n}}", "h".repeat(120));
        assert_eq!(layout(&long).unwrap(), want);
        assert_eq!(layout("7").unwrap(), "7");
        assert!(layout("[1, 2]").is_none());
        assert!(layout("[1,2").is_none());
        assert!(layout("\"abc").is_none());
    }
}
