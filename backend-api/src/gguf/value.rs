//! Metadata values: the thirteen GGUF value types and how each is read.

use super::array::{read_array, GgufArray};
use super::reader::Reader;
use crate::{bail, Result};
use std::fmt;
use std::io::Read;

/// The type id of a metadata value, as stored in the file (u32; the discriminants are the ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgufValueType {
    /// 0: u8.
    U8 = 0,
    /// 1: i8.
    I8 = 1,
    /// 2: u16.
    U16 = 2,
    /// 3: i16.
    I16 = 3,
    /// 4: u32.
    U32 = 4,
    /// 5: i32.
    I32 = 5,
    /// 6: f32.
    F32 = 6,
    /// 7: bool (one byte, 0 or 1).
    Bool = 7,
    /// 8: string (u64 length, UTF-8 bytes).
    String = 8,
    /// 9: array (element type, u64 count, elements).
    Array = 9,
    /// 10: u64.
    U64 = 10,
    /// 11: i64.
    I64 = 11,
    /// 12: f64.
    F64 = 12,
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
    pub(super) fn min_size(self) -> u64 {
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
    /// An array: its elements, stored at their own width.
    Array(GgufArray),
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
            GgufValue::Array(_) => T::Array,
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

    /// The array, if this is an array.
    pub fn as_array(&self) -> Option<&GgufArray> {
        match self {
            GgufValue::Array(a) => Some(a),
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

/// Reads one (top-level) value of type `t`.
pub(super) fn read_value<R: Read>(r: &mut Reader<R>, t: GgufValueType, what: &dyn fmt::Display) -> Result<GgufValue> {
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
        T::Array => GgufValue::Array(read_array(r, 0, what)?),
    })
}

/// A bool is one byte that must be 0 or 1.
fn read_bool<R: Read>(r: &mut Reader<R>, what: &dyn fmt::Display) -> Result<GgufValue> {
    let at = r.pos();
    let [b] = r.array::<1>(what)?;
    bool_of(b, at, what).map(GgufValue::Bool)
}

/// The bool of byte `b` (read at offset `at`): 0 or 1, anything else an error.
pub(super) fn bool_of(b: u8, at: u64, what: &dyn fmt::Display) -> Result<bool> {
    match b {
        0 => Ok(false),
        1 => Ok(true),
        _ => bail!(Input, "{what} at offset {at}: a bool must be 0 or 1, found {b}"),
    }
}
