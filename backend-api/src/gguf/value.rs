//! Metadata values: the thirteen GGUF value types and how each is read.

use super::reader::Reader;
use crate::{bail, Error, ErrorKind, Result};
use std::fmt;
use std::io::Read;

/// Arrays nested deeper than this are refused: each level costs only 12 bytes of file, so without a
/// bound a small file could exhaust the stack.
pub const MAX_ARRAY_DEPTH: usize = 8;

/// The type id of a metadata value, as stored in the file (u32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgufValueType {
    /// 0: u8.
    U8,
    /// 1: i8.
    I8,
    /// 2: u16.
    U16,
    /// 3: i16.
    I16,
    /// 4: u32.
    U32,
    /// 5: i32.
    I32,
    /// 6: f32.
    F32,
    /// 7: bool (one byte, 0 or 1).
    Bool,
    /// 8: string (u64 length, UTF-8 bytes).
    String,
    /// 9: array (element type, u64 count, elements).
    Array,
    /// 10: u64.
    U64,
    /// 11: i64.
    I64,
    /// 12: f64.
    F64,
}

impl GgufValueType {
    /// The type of id `id`, or `None` for an id GGUF does not define.
    pub fn from_id(id: u32) -> Option<GgufValueType> {
        use GgufValueType as T;
        const BY_ID: [GgufValueType; 13] = [
            T::U8,
            T::I8,
            T::U16,
            T::I16,
            T::U32,
            T::I32,
            T::F32,
            T::Bool,
            T::String,
            T::Array,
            T::U64,
            T::I64,
            T::F64,
        ];
        usize::try_from(id).ok().and_then(|i| BY_ID.get(i)).copied()
    }

    /// The id written in the file.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// The fewest bytes one value of this type takes (fixed-size types: their size), used to bound an
    /// array's count by the bytes left before allocating for it.
    fn min_size(self) -> u64 {
        use GgufValueType as T;
        match self {
            T::U8 | T::I8 | T::Bool => 1,
            T::U16 | T::I16 => 2,
            T::U32 | T::I32 | T::F32 => 4,
            T::U64 | T::I64 | T::F64 | T::String => 8,
            T::Array => 12,
        }
    }
}

impl fmt::Display for GgufValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufValue {
    /// u8.
    U8(u8),
    /// i8.
    I8(i8),
    /// u16.
    U16(u16),
    /// i16.
    I16(i16),
    /// u32.
    U32(u32),
    /// i32.
    I32(i32),
    /// f32.
    F32(f32),
    /// bool.
    Bool(bool),
    /// UTF-8 string.
    String(String),
    /// An array: the element type (kept so that an empty array still says what it holds) and the
    /// elements, each of that type.
    Array(GgufValueType, Vec<GgufValue>),
    /// u64.
    U64(u64),
    /// i64.
    I64(i64),
    /// f64.
    F64(f64),
}

impl GgufValue {
    /// The value's type.
    pub fn value_type(&self) -> GgufValueType {
        use GgufValueType as T;
        match self {
            GgufValue::U8(_) => T::U8,
            GgufValue::I8(_) => T::I8,
            GgufValue::U16(_) => T::U16,
            GgufValue::I16(_) => T::I16,
            GgufValue::U32(_) => T::U32,
            GgufValue::I32(_) => T::I32,
            GgufValue::F32(_) => T::F32,
            GgufValue::Bool(_) => T::Bool,
            GgufValue::String(_) => T::String,
            GgufValue::Array(..) => T::Array,
            GgufValue::U64(_) => T::U64,
            GgufValue::I64(_) => T::I64,
            GgufValue::F64(_) => T::F64,
        }
    }

    /// The string, if this is a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GgufValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a u64 if it is an integer of any width that is ≥ 0 (GGUF writers differ in
    /// the width they use for counts).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::U8(v) => Some(v.into()),
            GgufValue::U16(v) => Some(v.into()),
            GgufValue::U32(v) => Some(v.into()),
            GgufValue::U64(v) => Some(v),
            GgufValue::I8(v) => u64::try_from(v).ok(),
            GgufValue::I16(v) => u64::try_from(v).ok(),
            GgufValue::I32(v) => u64::try_from(v).ok(),
            GgufValue::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an f64 if it is a float of either width.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            GgufValue::F32(v) => Some(v.into()),
            GgufValue::F64(v) => Some(v),
            _ => None,
        }
    }

    /// The element type and elements, if this is an array.
    pub fn as_array(&self) -> Option<(GgufValueType, &[GgufValue])> {
        match self {
            GgufValue::Array(t, v) => Some((*t, v)),
            _ => None,
        }
    }
}

/// Reads a value type id.
pub(super) fn read_type<R: Read>(r: &mut Reader<R>, what: &dyn fmt::Display) -> Result<GgufValueType> {
    let at = r.pos();
    let id = r.u32(&format_args!("value type of {what}"))?;
    match GgufValueType::from_id(id) {
        Some(t) => Ok(t),
        None => bail!(Input, "unknown GGUF value type {id} for {what} at offset {at} (known: 0..=12)"),
    }
}

/// Reads one value of type `t`; `depth` counts the arrays around it.
pub(super) fn read_value<R: Read>(
    r: &mut Reader<R>,
    t: GgufValueType,
    depth: usize,
    what: &dyn fmt::Display,
) -> Result<GgufValue> {
    use GgufValueType as T;
    Ok(match t {
        T::U8 => GgufValue::U8(u8::from_le_bytes(r.array(what)?)),
        T::I8 => GgufValue::I8(i8::from_le_bytes(r.array(what)?)),
        T::U16 => GgufValue::U16(u16::from_le_bytes(r.array(what)?)),
        T::I16 => GgufValue::I16(i16::from_le_bytes(r.array(what)?)),
        T::U32 => GgufValue::U32(u32::from_le_bytes(r.array(what)?)),
        T::I32 => GgufValue::I32(i32::from_le_bytes(r.array(what)?)),
        T::F32 => GgufValue::F32(f32::from_le_bytes(r.array(what)?)),
        T::U64 => GgufValue::U64(u64::from_le_bytes(r.array(what)?)),
        T::I64 => GgufValue::I64(i64::from_le_bytes(r.array(what)?)),
        T::F64 => GgufValue::F64(f64::from_le_bytes(r.array(what)?)),
        T::Bool => read_bool(r, what)?,
        T::String => GgufValue::String(r.string(what)?),
        T::Array => read_array(r, depth, what)?,
    })
}

/// A bool is one byte that must be 0 or 1.
fn read_bool<R: Read>(r: &mut Reader<R>, what: &dyn fmt::Display) -> Result<GgufValue> {
    let at = r.pos();
    match r.array::<1>(what)? {
        [0] => Ok(GgufValue::Bool(false)),
        [1] => Ok(GgufValue::Bool(true)),
        [b] => bail!(Input, "{what} at offset {at}: a bool must be 0 or 1, found {b}"),
    }
}

/// An array: element type, count, elements. The count is checked against the bytes left (at the
/// element type's smallest size) before the element vector is allocated, and that allocation is
/// fallible.
fn read_array<R: Read>(r: &mut Reader<R>, depth: usize, what: &dyn fmt::Display) -> Result<GgufValue> {
    if depth >= MAX_ARRAY_DEPTH {
        bail!(Input, "{what}: arrays nested more than {MAX_ARRAY_DEPTH} deep");
    }
    let elem = read_type(r, &format_args!("elements of {what}"))?;
    let count = r.u64(&format_args!("element count of {what}"))?;
    let fits = count.checked_mul(elem.min_size()).is_some_and(|b| b <= r.remaining());
    if !fits {
        bail!(
            Input,
            "truncated {what}: an array of {count} {elem} values at offset {} needs more than the {} bytes left",
            r.pos(),
            r.remaining()
        );
    }
    let mut values = Vec::new();
    let n = usize::try_from(count).map_err(|_| Error::new(ErrorKind::Input, format!("{what}: {count} elements")))?;
    values.try_reserve_exact(n).map_err(|e| Error::new(ErrorKind::Input, format!("{what}: {count} elements: {e}")))?;
    for i in 0..count {
        values.push(read_value(r, elem, depth + 1, &format_args!("{what}[{i}]"))?);
    }
    Ok(GgufValue::Array(elem, values))
}
