//! Element types (§1.1 of the spec) and the dtype groups op sections refer to.

use std::fmt;

/// The element type of a tensor. Every tensor is little-endian, row-major and contiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16, the upper 16 bits of a binary32.
    BF16,
    /// IEEE binary64.
    F64,
    /// Two's-complement 64-bit integer.
    I64,
    /// Two's-complement 32-bit integer.
    I32,
    /// Two's-complement 8-bit integer.
    I8,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 8-bit integer.
    U8,
    /// One byte, 0 = false, 1 = true.
    Bool,
    /// Two F32 values, real part first.
    C64,
}

impl DType {
    /// Every dtype, in the order of the spec's table.
    pub const ALL: [DType; 11] = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::F64,
        DType::I64,
        DType::I32,
        DType::I8,
        DType::U32,
        DType::U8,
        DType::Bool,
        DType::C64,
    ];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::F64 | DType::I64 | DType::C64 => 8,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// The spec's name of the dtype (`F32`, `BF16`, …).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "F32",
            DType::F16 => "F16",
            DType::BF16 => "BF16",
            DType::F64 => "F64",
            DType::I64 => "I64",
            DType::I32 => "I32",
            DType::I8 => "I8",
            DType::U32 => "U32",
            DType::U8 => "U8",
            DType::Bool => "Bool",
            DType::C64 => "C64",
        }
    }

    /// Parses the spec's name (case-insensitive).
    pub fn from_name(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name().eq_ignore_ascii_case(s))
    }

    /// F32, F16, BF16 or F64.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }
    /// F16 or BF16.
    pub const fn is_half(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }
    /// Any integer dtype (signed or unsigned).
    pub const fn is_int(self) -> bool {
        matches!(self, DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8)
    }
    /// I64, I32 or I8.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, DType::I64 | DType::I32 | DType::I8)
    }
    /// U32 or U8.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U32 | DType::U8)
    }
    /// float ∪ int.
    pub const fn is_numeric(self) -> bool {
        self.is_float() || self.is_int()
    }
    /// I32, I64 or U32: the dtypes accepted by index inputs.
    pub const fn is_index(self) -> bool {
        matches!(self, DType::I32 | DType::I64 | DType::U32)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of dtypes, used by the op table to say what an op accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DTypeSet(u16);

impl DTypeSet {
    /// The empty set.
    pub const EMPTY: DTypeSet = DTypeSet(0);
    /// {F32, F16, BF16, F64}.
    pub const FLOAT: DTypeSet = DTypeSet::of(&[DType::F32, DType::F16, DType::BF16, DType::F64]);
    /// {F32, F16, BF16}.
    pub const FLOAT32_FAMILY: DTypeSet = DTypeSet::of(&[DType::F32, DType::F16, DType::BF16]);
    /// {F16, BF16}.
    pub const HALF: DTypeSet = DTypeSet::of(&[DType::F16, DType::BF16]);
    /// {I64, I32, I8, U32, U8}.
    pub const INT: DTypeSet = DTypeSet::of(&[DType::I64, DType::I32, DType::I8, DType::U32, DType::U8]);
    /// {I64, I32, I8}.
    pub const SIGNED: DTypeSet = DTypeSet::of(&[DType::I64, DType::I32, DType::I8]);
    /// float ∪ int.
    pub const NUMERIC: DTypeSet = DTypeSet::FLOAT.union(DTypeSet::INT);
    /// {I32, I64, U32}.
    pub const INDEX: DTypeSet = DTypeSet::of(&[DType::I32, DType::I64, DType::U32]);
    /// Every dtype.
    pub const ALL: DTypeSet = DTypeSet::of(&DType::ALL);
    /// {Bool}.
    pub const BOOL: DTypeSet = DTypeSet::of(&[DType::Bool]);
    /// {C64}.
    pub const C64: DTypeSet = DTypeSet::of(&[DType::C64]);
    /// {F32}.
    pub const F32: DTypeSet = DTypeSet::of(&[DType::F32]);
    /// {U32}.
    pub const U32: DTypeSet = DTypeSet::of(&[DType::U32]);

    const fn bit(d: DType) -> u16 {
        1 << (d as u16)
    }

    /// The set holding exactly `ds`.
    pub const fn of(ds: &[DType]) -> DTypeSet {
        let mut bits = 0u16;
        let mut i = 0;
        while i < ds.len() {
            bits |= Self::bit(ds[i]);
            i += 1;
        }
        DTypeSet(bits)
    }

    /// Set union.
    pub const fn union(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 | other.0)
    }

    /// Whether `d` is in the set.
    pub const fn contains(self, d: DType) -> bool {
        self.0 & Self::bit(d) != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in the order of [`DType::ALL`].
    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

impl fmt::Display for DTypeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(DType::name).collect();
        write!(f, "{{{}}}", names.join(", "))
    }
}
