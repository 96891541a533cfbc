//! Metadata arrays, each stored as a vector of its element type so that memory stays close to the
//! file's size (a tokenizer's 150 000 scores are 600 KB, not 150 000 enum values).

use super::reader::Reader;
use super::value::{bool_of, read_type, GgufValueType};
use crate::{bail, Error, ErrorKind, Result};
use std::fmt::Display;
use std::io::Read;

/// Arrays nested deeper than this are refused: each level costs only 12 bytes of file, so without a
/// bound a small file could exhaust the stack.
pub const MAX_ARRAY_DEPTH: usize = 8;

/// A metadata array: one vector of its element type.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufArray {
    /// u8 elements.
    U8(Vec<u8>),
    /// i8 elements.
    I8(Vec<i8>),
    /// u16 elements.
    U16(Vec<u16>),
    /// i16 elements.
    I16(Vec<i16>),
    /// u32 elements.
    U32(Vec<u32>),
    /// i32 elements.
    I32(Vec<i32>),
    /// f32 elements.
    F32(Vec<f32>),
    /// bool elements.
    Bool(Vec<bool>),
    /// String elements (a tokenizer's vocabulary).
    String(Vec<String>),
    /// Arrays (each with its own element type).
    Array(Vec<GgufArray>),
    /// u64 elements.
    U64(Vec<u64>),
    /// i64 elements.
    I64(Vec<i64>),
    /// f64 elements.
    F64(Vec<f64>),
}

impl GgufArray {
    /// The element type (known even when the array is empty).
    pub fn elem_type(&self) -> GgufValueType {
        use GgufValueType as T;
        match self {
            GgufArray::U8(_) => T::U8,
            GgufArray::I8(_) => T::I8,
            GgufArray::U16(_) => T::U16,
            GgufArray::I16(_) => T::I16,
            GgufArray::U32(_) => T::U32,
            GgufArray::I32(_) => T::I32,
            GgufArray::F32(_) => T::F32,
            GgufArray::Bool(_) => T::Bool,
            GgufArray::String(_) => T::String,
            GgufArray::Array(_) => T::Array,
            GgufArray::U64(_) => T::U64,
            GgufArray::I64(_) => T::I64,
            GgufArray::F64(_) => T::F64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            GgufArray::U8(v) => v.len(),
            GgufArray::I8(v) => v.len(),
            GgufArray::U16(v) => v.len(),
            GgufArray::I16(v) => v.len(),
            GgufArray::U32(v) => v.len(),
            GgufArray::I32(v) => v.len(),
            GgufArray::F32(v) => v.len(),
            GgufArray::Bool(v) => v.len(),
            GgufArray::String(v) => v.len(),
            GgufArray::Array(v) => v.len(),
            GgufArray::U64(v) => v.len(),
            GgufArray::I64(v) => v.len(),
            GgufArray::F64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The strings, if this is an array of strings.
    pub fn as_strings(&self) -> Option<&[String]> {
        match self {
            GgufArray::String(v) => Some(v),
            _ => None,
        }
    }
}

/// Reads an array (element type, u64 count, elements); `depth` counts the arrays around it. The
/// count is checked against the bytes left (at the element type's smallest size) before anything is
/// allocated, and every allocation is fallible.
pub(super) fn read_array<R: Read>(r: &mut Reader<R>, depth: usize, what: &dyn Display) -> Result<GgufArray> {
    if depth >= MAX_ARRAY_DEPTH {
        bail!(Input, "{what}: arrays nested more than {MAX_ARRAY_DEPTH} deep");
    }
    let elem = read_type(r, &format_args!("elements of {what}"))?;
    let count = r.u64(&format_args!("element count of {what}"))?;
    if count.checked_mul(elem.min_size()).is_none_or(|b| b > r.remaining()) {
        bail!(
            Input,
            "truncated {what}: an array of {count} {elem} values at offset {} needs more than the {} bytes left",
            r.pos(),
            r.remaining()
        );
    }
    use GgufValueType as T;
    Ok(match elem {
        T::U8 => GgufArray::U8(fixed(r, count, what, u8::from_le_bytes)?),
        T::I8 => GgufArray::I8(fixed(r, count, what, i8::from_le_bytes)?),
        T::U16 => GgufArray::U16(fixed(r, count, what, u16::from_le_bytes)?),
        T::I16 => GgufArray::I16(fixed(r, count, what, i16::from_le_bytes)?),
        T::U32 => GgufArray::U32(fixed(r, count, what, u32::from_le_bytes)?),
        T::I32 => GgufArray::I32(fixed(r, count, what, i32::from_le_bytes)?),
        T::F32 => GgufArray::F32(fixed(r, count, what, f32::from_le_bytes)?),
        T::U64 => GgufArray::U64(fixed(r, count, what, u64::from_le_bytes)?),
        T::I64 => GgufArray::I64(fixed(r, count, what, i64::from_le_bytes)?),
        T::F64 => GgufArray::F64(fixed(r, count, what, f64::from_le_bytes)?),
        T::Bool => GgufArray::Bool(bools(r, count, what)?),
        T::String => GgufArray::String(each(r, count, what, |r, i| r.string(&format_args!("{what}[{i}]")))?),
        T::Array => {
            GgufArray::Array(each(r, count, what, |r, i| read_array(r, depth + 1, &format_args!("{what}[{i}]")))?)
        }
    })
}

/// An empty vector with room for `count` elements, allocated fallibly.
fn with_capacity<T>(count: u64, what: &dyn Display) -> Result<Vec<T>> {
    let too_many = || Error::new(ErrorKind::Input, format!("{what}: {count} elements do not fit this host"));
    let n = usize::try_from(count).map_err(|_| too_many())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| Error::new(ErrorKind::Input, format!("{what}: {count} elements: {e}")))?;
    Ok(v)
}

/// `count` fixed-size elements, read in one piece and converted.
fn fixed<T, const N: usize, R: Read>(
    r: &mut Reader<R>,
    count: u64,
    what: &dyn Display,
    from: fn([u8; N]) -> T,
) -> Result<Vec<T>> {
    let nbytes =
        count.checked_mul(N as u64).ok_or_else(|| Error::new(ErrorKind::Input, format!("{what} overflows")))?;
    let bytes = r.bytes(nbytes, what)?;
    let mut v = with_capacity(count, what)?;
    v.extend(bytes.chunks_exact(N).filter_map(|c| <[u8; N]>::try_from(c).ok()).map(from));
    Ok(v)
}

/// `count` bools, each byte 0 or 1.
fn bools<R: Read>(r: &mut Reader<R>, count: u64, what: &dyn Display) -> Result<Vec<bool>> {
    let at = r.pos();
    let bytes = r.bytes(count, what)?;
    let mut v = with_capacity(count, what)?;
    for (i, &b) in bytes.iter().enumerate() {
        v.push(bool_of(b, at.saturating_add(i as u64), &format_args!("{what}[{i}]"))?);
    }
    Ok(v)
}

/// `count` variable-size elements, each read by `read`.
fn each<T, R: Read>(
    r: &mut Reader<R>,
    count: u64,
    what: &dyn Display,
    mut read: impl FnMut(&mut Reader<R>, u64) -> Result<T>,
) -> Result<Vec<T>> {
    let mut v = with_capacity(count, what)?;
    for i in 0..count {
        v.push(read(r, i)?);
    }
    Ok(v)
}
