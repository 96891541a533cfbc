//! The serde pieces of the IR that derives cannot express: floats that may be non-finite, byte
//! blobs as hex, dims as plain numbers and strings, and graphs that validate when decoded.
//!
//! The field helpers are used as `#[serde(with = "crate::json::codec::float32")]` on attribute
//! fields; docs/GRAPH-FORMAT.md describes what they write.

use crate::graph::{Graph, Node, Value};
use crate::op::DimSpec;
use crate::shape::Dim;
use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// How a non-finite float is written: JSON numbers cannot be NaN or infinite, and serde_json
/// would silently write `null`, which reads back as an error (or, worse, as a default).
fn non_finite_name(v: f64) -> &'static str {
    if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// Reads a float written as a JSON number or as one of the names of the non-finite values.
/// Names are accepted case-insensitively in the spellings of the writer, Python's `str(float)`
/// and JavaScript (`NaN`, `inf`, `+inf`, `-inf`, `Infinity`, `-Infinity`).
struct FloatVisitor;

impl<'de> Visitor<'de> for FloatVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or one of \"NaN\", \"inf\", \"-inf\"")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        match v.to_ascii_lowercase().as_str() {
            "nan" => Ok(f64::NAN),
            "inf" | "+inf" | "infinity" | "+infinity" => Ok(f64::INFINITY),
            "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(E::invalid_value(Unexpected::Str(v), &self)),
        }
    }
}

/// An `f64` attribute: finite values as JSON numbers (shortest form that reads back bit-exact,
/// `-0.0` included), NaN and ±∞ as the strings `"NaN"`, `"inf"`, `"-inf"`.
pub(crate) mod float64 {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_str(non_finite_name(*v))
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(FloatVisitor)
    }
}

/// Whether the shortest decimal of `v` reads back as `v` through an `f64`, as readers do (serde_json
/// parses every number as an f64). Rarely it does not: the decimal lies so close to the midpoint
/// of two f32s that rounding it to an f64 first lands on the midpoint (`7.038531e-26`).
fn f32_survives_f64(v: f32) -> bool {
    let shortest = serde_json::to_string(&v).unwrap_or_default();
    shortest.parse::<f64>().is_ok_and(|d| (d as f32).to_bits() == v.to_bits())
}

/// An `f32` attribute, written as [`float64`] writes an `f64`: finite values in the shortest form
/// that reads back as the same `f32` (or, in the rare case of [`f32_survives_f64`], as the exact
/// `f64` of the value). A finite number outside the `f32` range is an error rather than a
/// silent ±∞.
pub(crate) mod float32 {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        if !v.is_finite() {
            s.serialize_str(non_finite_name(f64::from(*v)))
        } else if f32_survives_f64(*v) {
            s.serialize_f32(*v)
        } else {
            s.serialize_f64(f64::from(*v))
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        let v = d.deserialize_any(FloatVisitor)?;
        let narrow = v as f32;
        if v.is_finite() && !narrow.is_finite() {
            return Err(de::Error::invalid_value(Unexpected::Float(v), &"a number in the f32 range"));
        }
        Ok(narrow)
    }
}

/// An `Option<f32>` attribute: `null` for `None`, otherwise as [`float32`].
pub(crate) mod opt_float32 {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(transparent)]
    struct F32(#[serde(with = "float32")] f32);

    pub(crate) fn serialize<S: Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
        v.map(F32).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
        Ok(Option::<F32>::deserialize(d)?.map(|F32(v)| v))
    }
}

/// Lowercase hex of `bytes`, two digits per byte, in order.
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The bytes of a hex string (either case), or a message naming the problem.
fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("hex string has odd length {}; every byte is two digits", s.len()));
    }
    let digit = |i: usize, c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            // Report the character, not the byte: a multi-byte character starts here.
            _ => {
                let ch = s.get(i..).and_then(|rest| rest.chars().next()).unwrap_or(char::REPLACEMENT_CHARACTER);
                Err(format!("bad hex digit {ch:?} at position {i}"))
            }
        }
    };
    s.as_bytes()
        .chunks_exact(2)
        .enumerate()
        .map(|(k, p)| Ok((digit(2 * k, p[0])? << 4) | digit(2 * k + 1, p[1])?))
        .collect()
}

struct HexVisitor;

impl<'de> Visitor<'de> for HexVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string of hex digits, two per byte")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
        from_hex(v).map_err(E::custom)
    }
}

/// A `Vec<u8>` blob as a lowercase hex string.
pub(crate) mod hex_vec {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_hex(v))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_str(HexVisitor)
    }
}

/// An `Arc<[u8]>` blob (constant data) as a lowercase hex string.
pub(crate) mod hex_arc {
    use super::*;
    use std::sync::Arc;

    pub(crate) fn serialize<S: Serializer>(v: &Arc<[u8]>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_hex(v))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<[u8]>, D::Error> {
        Ok(Arc::from(d.deserialize_str(HexVisitor)?))
    }
}

/// A dim is written as a plain number (static) or string (symbol): `[2, "batch", 3]`.
impl Serialize for Dim {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Dim::Static(n) => s.serialize_u64(*n as u64),
            Dim::Sym(name) => s.serialize_str(name),
        }
    }
}

/// A size as `usize`, or an error saying what `what` accepts.
fn size<E: de::Error>(v: u64, what: &dyn de::Expected) -> Result<usize, E> {
    usize::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), what))
}

struct DimVisitor;

impl<'de> Visitor<'de> for DimVisitor {
    type Value = Dim;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a dim: a size (integer ≥ 0) or a symbol name (string)")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dim, E> {
        Ok(Dim::Static(size(v, &self)?))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dim, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Dim, E> {
        Ok(Dim::Sym(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Dim {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dim, D::Error> {
        d.deserialize_any(DimVisitor)
    }
}

/// A `Reshape` entry is written as the spec and ONNX write it: a size, `-1` for `Infer`, or a
/// symbol name.
impl Serialize for DimSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DimSpec::Static(n) => s.serialize_u64(*n as u64),
            DimSpec::Sym(name) => s.serialize_str(name),
            DimSpec::Infer => s.serialize_i64(-1),
        }
    }
}

struct DimSpecVisitor;

impl<'de> Visitor<'de> for DimSpecVisitor {
    type Value = DimSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Reshape entry: a size (integer ≥ 0), -1 (inferred) or a symbol name (string)")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<DimSpec, E> {
        Ok(DimSpec::Static(size(v, &self)?))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<DimSpec, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) if v == -1 => Ok(DimSpec::Infer),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<DimSpec, E> {
        Ok(DimSpec::Sym(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for DimSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DimSpec, D::Error> {
        d.deserialize_any(DimSpecVisitor)
    }
}

/// A graph is written as `{"nodes": [...], "outputs": [...]}`.
#[derive(Serialize)]
#[serde(rename = "Graph")]
struct GraphRef<'a> {
    nodes: &'a [Node],
    outputs: &'a [Value],
}

impl Serialize for Graph {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GraphRef { nodes: &self.nodes, outputs: &self.outputs }.serialize(s)
    }
}

/// The fields of a graph as read, before validation. `Graph` deserializes through this type and
/// [`Graph::from_parts`], so that a decoded graph (a subgraph too) is always valid.
#[derive(Deserialize)]
#[serde(rename = "Graph", deny_unknown_fields)]
pub(crate) struct GraphParts {
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<Value>,
}

impl TryFrom<GraphParts> for Graph {
    type Error = crate::Error;

    fn try_from(p: GraphParts) -> crate::Result<Graph> {
        Graph::from_parts(p.nodes, p.outputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, Debug)]
    struct Floats {
        #[serde(with = "float64")]
        d: f64,
        #[serde(with = "float32")]
        s: f32,
        #[serde(default, with = "opt_float32")]
        o: Option<f32>,
    }

    fn round_trip(d: f64, s: f32, o: Option<f32>) -> Floats {
        let text = serde_json::to_string(&Floats { d, s, o }).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn floats_round_trip_bit_exact() {
        let doubles =
            [0.0, -0.0, 1.0, 0.1, -1e-310, f64::MAX, f64::MIN_POSITIVE, 5e-324, f64::INFINITY, f64::NEG_INFINITY];
        let singles =
            [0.0, -0.0, 0.1, 1e-45, f32::MAX, -f32::MIN_POSITIVE, 3.4028235e38, f32::INFINITY, f32::NEG_INFINITY];
        for (&d, &s) in doubles.iter().zip(singles.iter().cycle()) {
            let back = round_trip(d, s, Some(s));
            assert_eq!(back.d.to_bits(), d.to_bits(), "{d:e}");
            assert_eq!(back.s.to_bits(), s.to_bits(), "{s:e}");
            assert_eq!(back.o.map(f32::to_bits), Some(s.to_bits()));
        }
        let nan = round_trip(f64::NAN, f32::NAN, None);
        assert!(nan.d.is_nan() && nan.s.is_nan() && nan.o.is_none());
        let text =
            serde_json::to_string(&Floats { d: f64::NEG_INFINITY, s: f32::NAN, o: Some(f32::INFINITY) }).unwrap();
        assert_eq!(text, r#"{"d":"-inf","s":"NaN","o":"inf"}"#);
        assert_eq!(
            serde_json::to_string(&Floats { d: -0.0, s: 0.1, o: None }).unwrap(),
            r#"{"d":-0.0,"s":0.1,"o":null}"#
        );
    }

    #[test]
    fn floats_read_every_spelling() {
        let f: Floats = serde_json::from_str(r#"{"d": "Infinity", "s": "nan", "o": 3}"#).unwrap();
        assert!(f.d == f64::INFINITY && f.s.is_nan() && f.o == Some(3.0));
        let f: Floats = serde_json::from_str(r#"{"d": -2, "s": "-INF"}"#).unwrap();
        assert!(f.d == -2.0 && f.s == f32::NEG_INFINITY && f.o.is_none());
        let err = serde_json::from_str::<Floats>(r#"{"d": 1, "s": 1e39}"#).unwrap_err().to_string();
        assert!(err.contains("f32 range"), "{err}");
        let err = serde_json::from_str::<Floats>(r#"{"d": "infinite", "s": 1}"#).unwrap_err().to_string();
        assert!(err.contains("\"NaN\""), "{err}");
        assert!(serde_json::from_str::<Floats>(r#"{"d": null, "s": 1}"#).is_err());
    }

    /// Every f32 reads back as the same f32, although the reader parses the decimal as an f64
    /// first (a double rounding): a value whose shortest decimal does not survive that, and a
    /// sample of bit patterns of every exponent.
    #[test]
    fn f32_double_rounding_is_harmless() {
        let tricky = f32::from_bits(0x15ae_43fd);
        assert!(!f32_survives_f64(tricky));
        assert_eq!(round_trip(0.0, tricky, None).s.to_bits(), 0x15ae_43fd);
        assert_eq!(
            serde_json::to_string(&Floats { d: 0.0, s: tricky, o: None }).unwrap(),
            r#"{"d":0.0,"s":7.038530691851209e-26,"o":null}"#
        );
        let mut x = 0x9e37_79b9_u32;
        for i in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let bits = if i % 4 == 0 { (i << 23) | (x & 0x7f_ffff) } else { x };
            let s = f32::from_bits(bits);
            if !s.is_finite() {
                continue;
            }
            assert_eq!(round_trip(0.0, s, None).s.to_bits(), bits, "{s:e}");
        }
    }

    #[test]
    fn hex_codec() {
        assert_eq!(to_hex(&[0, 1, 0xab, 0xff]), "0001abff");
        assert_eq!(from_hex("0001ABff"), Ok(vec![0, 1, 0xab, 0xff]));
        assert_eq!(from_hex(""), Ok(vec![]));
        assert_eq!(from_hex("abc"), Err("hex string has odd length 3; every byte is two digits".to_string()));
        assert_eq!(from_hex("0g"), Err("bad hex digit 'g' at position 1".to_string()));
        assert_eq!(from_hex("00é"), Err("bad hex digit 'é' at position 2".to_string()));
    }

    #[test]
    fn dims_and_reshape_entries() {
        let dims: Vec<Dim> = serde_json::from_str(r#"[0, 3, "batch", ""]"#).unwrap();
        assert_eq!(dims, [Dim::Static(0), Dim::Static(3), Dim::Sym("batch".into()), Dim::Sym(String::new())]);
        assert_eq!(serde_json::to_string(&dims).unwrap(), r#"[0,3,"batch",""]"#);
        assert!(serde_json::from_str::<Dim>("-1").is_err());
        assert!(serde_json::from_str::<Dim>("2.0").is_err());
        let specs: Vec<DimSpec> = serde_json::from_str(r#"[2, -1, "s"]"#).unwrap();
        assert_eq!(specs, [DimSpec::Static(2), DimSpec::Infer, DimSpec::Sym("s".into())]);
        assert_eq!(serde_json::to_string(&specs).unwrap(), r#"[2,-1,"s"]"#);
        let err = serde_json::from_str::<DimSpec>("-2").unwrap_err().to_string();
        assert!(err.contains("-1 (inferred)"), "{err}");
    }
}
