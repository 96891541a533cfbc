//! The ggml tensor types this reader supports, their ids and what each becomes as an op input.

use crate::op::QuantFormat;
use crate::DType;
use std::fmt;

/// A ggml tensor type that maps onto this IR: a float dtype or a GGML block format of SPEC-ops
/// §2.6.7. Other ggml types (`Q8_1`, the `IQ*` family, integer tensors) are refused when read.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlType {
    /// 0: f32.
    F32,
    /// 1: f16.
    F16,
    /// 30: bf16.
    BF16,
    /// 2: `block_q4_0`.
    Q4_0,
    /// 3: `block_q4_1`.
    Q4_1,
    /// 6: `block_q5_0`.
    Q5_0,
    /// 7: `block_q5_1`.
    Q5_1,
    /// 8: `block_q8_0`.
    Q8_0,
    /// 10: `block_q2_K`.
    Q2_K,
    /// 11: `block_q3_K`.
    Q3_K,
    /// 12: `block_q4_K`.
    Q4_K,
    /// 13: `block_q5_K`.
    Q5_K,
    /// 14: `block_q6_K`.
    Q6_K,
    /// 15: `block_q8_K`.
    Q8_K,
}

/// Every supported type with its id, the one table both directions are read from.
const IDS: [(GgmlType, u32); 14] = [
    (GgmlType::F32, 0),
    (GgmlType::F16, 1),
    (GgmlType::Q4_0, 2),
    (GgmlType::Q4_1, 3),
    (GgmlType::Q5_0, 6),
    (GgmlType::Q5_1, 7),
    (GgmlType::Q8_0, 8),
    (GgmlType::Q2_K, 10),
    (GgmlType::Q3_K, 11),
    (GgmlType::Q4_K, 12),
    (GgmlType::Q5_K, 13),
    (GgmlType::Q6_K, 14),
    (GgmlType::Q8_K, 15),
    (GgmlType::BF16, 30),
];

/// How a tensor of a ggml type is passed to an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlKind {
    /// A plain tensor of this dtype.
    Float(DType),
    /// The raw blocks of this format, as one U8 input.
    Quant(QuantFormat),
}

impl GgmlType {
    /// Every supported type, in id order of the table above.
    pub const ALL: [GgmlType; 14] = {
        let mut all = [GgmlType::F32; 14];
        let mut i = 0;
        while i < IDS.len() {
            all[i] = IDS[i].0;
            i += 1;
        }
        all
    };

    /// The type of ggml id `id`, or `None` for an id this reader does not support.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        IDS.iter().find(|(_, i)| *i == id).map(|(t, _)| *t)
    }

    /// The ggml id written in the file.
    pub fn id(self) -> u32 {
        IDS.iter().find(|(t, _)| *t == self).map_or(u32::MAX, |(_, i)| *i)
    }

    /// The ggml name (`Q4_K`, `BF16`).
    pub fn name(self) -> &'static str {
        match self {
            GgmlType::F32 => "F32",
            GgmlType::F16 => "F16",
            GgmlType::BF16 => "BF16",
            GgmlType::Q4_0 => "Q4_0",
            GgmlType::Q4_1 => "Q4_1",
            GgmlType::Q5_0 => "Q5_0",
            GgmlType::Q5_1 => "Q5_1",
            GgmlType::Q8_0 => "Q8_0",
            GgmlType::Q2_K => "Q2_K",
            GgmlType::Q3_K => "Q3_K",
            GgmlType::Q4_K => "Q4_K",
            GgmlType::Q5_K => "Q5_K",
            GgmlType::Q6_K => "Q6_K",
            GgmlType::Q8_K => "Q8_K",
        }
    }

    /// What the type becomes as an op input.
    pub fn kind(self) -> GgmlKind {
        use GgmlKind::{Float, Quant};
        match self {
            GgmlType::F32 => Float(DType::F32),
            GgmlType::F16 => Float(DType::F16),
            GgmlType::BF16 => Float(DType::BF16),
            GgmlType::Q4_0 => Quant(QuantFormat::Q4_0),
            GgmlType::Q4_1 => Quant(QuantFormat::Q4_1),
            GgmlType::Q5_0 => Quant(QuantFormat::Q5_0),
            GgmlType::Q5_1 => Quant(QuantFormat::Q5_1),
            GgmlType::Q8_0 => Quant(QuantFormat::Q8_0),
            GgmlType::Q2_K => Quant(QuantFormat::Q2_K),
            GgmlType::Q3_K => Quant(QuantFormat::Q3_K),
            GgmlType::Q4_K => Quant(QuantFormat::Q4_K),
            GgmlType::Q5_K => Quant(QuantFormat::Q5_K),
            GgmlType::Q6_K => Quant(QuantFormat::Q6_K),
            GgmlType::Q8_K => Quant(QuantFormat::Q8_K),
        }
    }

    /// The quantisation format, for the block types.
    pub fn format(self) -> Option<QuantFormat> {
        match self.kind() {
            GgmlKind::Quant(f) => Some(f),
            GgmlKind::Float(_) => None,
        }
    }

    /// `(elements, bytes)` per block: `(1, dtype size)` for the float types, the format's
    /// `(QK, BB)` for the block types.
    pub fn block(self) -> (usize, usize) {
        match self.kind() {
            GgmlKind::Float(d) => (1, d.size()),
            // Every format `kind` gives is a GGML block format, which has a block; the fallback is
            // never taken.
            GgmlKind::Quant(f) => f.ggml_block().unwrap_or((1, 1)),
        }
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The ggml name of a type id this reader does not support, for the error message.
pub(super) fn unsupported_name(id: u32) -> Option<&'static str> {
    match id {
        4 | 5 => Some("Q4_2/Q4_3 (removed from ggml)"),
        9 => Some("Q8_1"),
        _ => None,
    }
}
