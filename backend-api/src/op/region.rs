//! Fused region programs (§2.14): a small SSA program of scalar elementwise instructions.

use crate::op::{BinaryOp, CompareOp, UnaryOp};
use crate::{bail, ensure, DType, Result};

/// The most tensor inputs a region program may read (§2.14.0).
pub const MAX_REGION_INPUTS: u32 = 16;
/// The most instructions a region program may hold (§2.14.0).
pub const MAX_REGION_INSTRS: usize = 256;

/// One instruction of a [`RegionProgram`]. Instruction `k` defines register `k`; every operand is
/// a register number `< k`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub enum RegionInstr {
    /// The element of input `i` at the current (broadcast) output index; dtype of input `i`.
    Input(u32),
    /// A scalar constant: one element of `dtype`, little-endian, as `Constant` stores it.
    Const {
        /// The constant's dtype.
        dtype: DType,
        /// Exactly `dtype.size()` bytes.
        #[cfg_attr(feature = "serde", serde(with = "crate::json::codec::hex_vec"))]
        bytes: Vec<u8>,
    },
    /// `Unary` (§2.2.1) of register `a`.
    Unary(UnaryOp, u32),
    /// `Binary` (§2.2.2) of registers `a`, `b` (same dtype).
    Binary(BinaryOp, u32, u32),
    /// `Compare` (§2.2.3) of registers `a`, `b`; defines a Bool.
    Compare(CompareOp, u32, u32),
    /// `Where` (§2.2.4): Bool register `c` selects `a` or `b` (same dtype).
    Where(u32, u32, u32),
    /// `Cast` (§2.2.6) of register `a` to the dtype.
    Cast(DType, u32),
    /// `Fma` (§2.2.5) of float registers `a·b + c` (same dtype).
    Fma(u32, u32, u32),
}

/// A region program (§2.14.0): `1 ≤ num_inputs ≤ 16`, 1 to 256 instructions in SSA order, and at
/// least one output register.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RegionProgram {
    /// Number of tensor inputs the region reads.
    pub num_inputs: u32,
    /// The instructions; instruction `k` defines register `k`.
    pub instrs: Vec<RegionInstr>,
    /// Registers returned as the region's outputs, in order (repeats allowed).
    pub outputs: Vec<u32>,
}

impl RegionProgram {
    /// Validates the program for inputs of `input_dtypes` (§2.14.0) and returns the dtype of every
    /// register. Errors: `Attribute` (limits, register order, input index, constant bytes, outputs),
    /// `DType` (an instruction's operand rules), `Arity` (input count ≠ `num_inputs`).
    pub fn register_dtypes(&self, input_dtypes: &[DType]) -> Result<Vec<DType>> {
        register_dtypes_of(self, input_dtypes)
    }
}

/// `ElementwiseRegion` and `BatchElementwiseRegion` (§2.14.1–2.14.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct RegionAttrs {
    /// The fused program.
    pub program: RegionProgram,
}

/// `TransformRegion` (§2.14.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct TransformRegionAttrs {
    /// The fused program.
    pub program: RegionProgram,
    /// The input read through `ResizeNearest(scales)`; `< num_inputs`.
    pub resized_input: u32,
    /// Upsampling factors of that input's spatial dims (1 to 3 entries, each ≥ 1).
    pub scales: Vec<u32>,
}

impl RegionProgram {
    /// The checks of §2.14.0 that do not depend on the inputs: limits, register order, outputs.
    fn check_structure(&self) -> Result<()> {
        if self.num_inputs == 0 || self.num_inputs > MAX_REGION_INPUTS {
            bail!(Attribute, "region num_inputs {} is outside 1..={MAX_REGION_INPUTS}", self.num_inputs);
        }
        if self.instrs.is_empty() || self.instrs.len() > MAX_REGION_INSTRS {
            bail!(Attribute, "region has {} instructions; allowed 1..={MAX_REGION_INSTRS}", self.instrs.len());
        }
        if self.outputs.is_empty() {
            bail!(Attribute, "region program has no outputs");
        }
        for (k, instr) in self.instrs.iter().enumerate() {
            for r in instr.operands() {
                if r as usize >= k {
                    bail!(
                        Attribute,
                        "region instruction {k} ({instr:?}) reads register {r}, which is not defined before it"
                    );
                }
            }
        }
        for &o in &self.outputs {
            if o as usize >= self.instrs.len() {
                bail!(Attribute, "region output register {o} does not exist ({} instructions)", self.instrs.len());
            }
        }
        Ok(())
    }
}

impl RegionInstr {
    /// The registers the instruction reads, in operand order.
    pub fn operands(&self) -> Vec<u32> {
        match self {
            RegionInstr::Input(_) | RegionInstr::Const { .. } => vec![],
            RegionInstr::Unary(_, a) | RegionInstr::Cast(_, a) => vec![*a],
            RegionInstr::Binary(_, a, b) | RegionInstr::Compare(_, a, b) => vec![*a, *b],
            RegionInstr::Where(c, a, b) => vec![*c, *a, *b],
            RegionInstr::Fma(a, b, c) => vec![*a, *b, *c],
        }
    }

    /// The dtype of the register this instruction defines, given the dtypes of earlier registers
    /// (operands already checked to be earlier) and of the region inputs.
    fn dtype(&self, k: usize, regs: &[DType], inputs: &[DType]) -> Result<DType> {
        let r = |i: &u32| regs[*i as usize];
        let same = |a: &u32, b: &u32, what: &str| -> Result<DType> {
            ensure!(r(a) == r(b), DType, "region instruction {k} ({what}): operands are {} and {}", r(a), r(b));
            Ok(r(a))
        };
        match self {
            RegionInstr::Input(i) => match inputs.get(*i as usize) {
                Some(&d) => Ok(d),
                None => {
                    bail!(Attribute, "region instruction {k} reads input {i}, but there are {} inputs", inputs.len())
                }
            },
            RegionInstr::Const { dtype, bytes } => {
                ensure!(
                    bytes.len() == dtype.size(),
                    Attribute,
                    "region constant {k} of {dtype} has {} bytes, expected {}",
                    bytes.len(),
                    dtype.size()
                );
                ensure!(
                    *dtype != DType::Bool || bytes[0] <= 1,
                    Attribute,
                    "region Bool constant {k} holds byte {}; only 0 and 1 are allowed",
                    bytes[0]
                );
                Ok(*dtype)
            }
            RegionInstr::Unary(op, a) => {
                ensure!(
                    op.dtypes().contains(r(a)),
                    DType,
                    "region instruction {k}: Unary.{} does not accept {}",
                    op.name(),
                    r(a)
                );
                Ok(r(a))
            }
            RegionInstr::Binary(op, a, b) => {
                let d = same(a, b, &format!("Binary.{}", op.name()))?;
                ensure!(
                    op.dtypes().contains(d),
                    DType,
                    "region instruction {k}: Binary.{} does not accept {d}",
                    op.name()
                );
                Ok(d)
            }
            RegionInstr::Compare(op, a, b) => {
                let d = same(a, b, &format!("Compare.{}", op.name()))?;
                ensure!(
                    op.dtypes().contains(d),
                    DType,
                    "region instruction {k}: Compare.{} does not accept {d}",
                    op.name()
                );
                Ok(DType::Bool)
            }
            RegionInstr::Where(c, a, b) => {
                ensure!(r(c) == DType::Bool, DType, "region instruction {k}: Where condition is {}, not Bool", r(c));
                same(a, b, "Where")
            }
            RegionInstr::Cast(to, _) => Ok(*to),
            RegionInstr::Fma(a, b, c) => {
                let d = same(a, b, "Fma")?;
                same(a, c, "Fma")?;
                ensure!(d.is_float(), DType, "region instruction {k}: Fma needs float operands, got {d}");
                Ok(d)
            }
        }
    }
}

/// Validates `program` for inputs of `input_dtypes` and returns every register's dtype.
fn register_dtypes_of(program: &RegionProgram, input_dtypes: &[DType]) -> Result<Vec<DType>> {
    program.check_structure()?;
    if input_dtypes.len() != program.num_inputs as usize {
        bail!(Arity, "region program reads {} inputs, got {}", program.num_inputs, input_dtypes.len());
    }
    let mut regs = Vec::with_capacity(program.instrs.len());
    for (k, instr) in program.instrs.iter().enumerate() {
        let d = instr.dtype(k, &regs, input_dtypes)?;
        regs.push(d);
    }
    Ok(regs)
}
