//! Generators for `ElementwiseRegion`, `BatchElementwiseRegion` and `TransformRegion` (§2.14):
//! random valid programs over 1–4 inputs of mixed dtypes (the row's dtype first) with broadcast
//! shapes, scalar constants, every instruction kind, casts between any dtypes, outputs that repeat
//! a register, read an input directly or hold a constant.
//!
//! Programs are built so that the result is determined by the ops' exact rules: inputs are small
//! integers (and the IEEE specials), and every instruction that other instructions read is Exact
//! for its dtype (no float `Div`, `Pow`, transcendental or `Fma` in the middle of a program), so a
//! rounding difference that the tolerance of one op allows cannot flip a later comparison, floor
//! or cast. At most one float instruction outside that set (`Fma`, `Div`, `Exp`, `Tanh`, …, at most
//! Approx) ends the program as an output.

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{broadcast_partner, numel, MAX_NUMEL};
use crate::values::{FloatDomain, IntDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{BinaryOp, CompareOp, RegionInstr, RegionProgram, UnaryOp};
use backend_api::spec::Tolerance;
use backend_api::{DType, Tensor};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Elementwise,
    Batch,
    Transform,
}

/// Variants for the region rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "ElementwiseRegion" => Kind::Elementwise,
        "BatchElementwiseRegion" => Kind::Batch,
        "TransformRegion" => Kind::Transform,
        _ => return None,
    };
    let ranks = match kind {
        Kind::Elementwise => 0..=4,
        Kind::Batch => 1..=4,
        Kind::Transform => 3..=5,
    };
    per_dtype(row, move |dtype| {
        skeleton(ranks.clone(), MAX_NUMEL / 8, 4)
            .prop_map(move |sk| match kind {
                Kind::Elementwise => elementwise_case(dtype, &sk),
                Kind::Batch => batch_case(dtype, &sk),
                Kind::Transform => transform_case(dtype, &sk),
            })
            .boxed()
    })
}

/// Small integers in every dtype (floats with the IEEE specials): exact under every Exact op.
fn small() -> Values {
    Values { float: FloatDomain::new(&[Piece::Ints(3)], IEEE_SPECIALS), int: IntDomain::Only(-3, 3) }
}

/// The row's dtype for input 0; another dtype now and then for the others.
fn input_dtypes(rng: &mut Rng, dtype: DType, n: usize) -> Vec<DType> {
    (0..n).map(|i| if i == 0 || rng.chance(0.7) { dtype } else { any_dtype(rng) }).collect()
}

/// A dtype drawn from all of them.
fn any_dtype(rng: &mut Rng) -> DType {
    DType::ALL.get(rng.below(DType::ALL.len())).copied().unwrap_or(DType::F32)
}

/// One small value of `dtype` as a constant instruction.
fn constant(rng: &mut Rng, dtype: DType) -> RegionInstr {
    let v = rng.int_in(-3, 3);
    let bytes = match dtype {
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => (v as f64).to_le_bytes().to_vec(),
        DType::F16 => half::f16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::I64 => v.to_le_bytes().to_vec(),
        DType::I32 => (v as i32).to_le_bytes().to_vec(),
        DType::I8 => (v as i8).to_le_bytes().to_vec(),
        DType::U32 => (v.unsigned_abs() as u32).to_le_bytes().to_vec(),
        DType::U8 => vec![v.unsigned_abs() as u8],
        DType::Bool => vec![u8::from(v > 0)],
        DType::C64 => [(v as f32).to_le_bytes(), (-v as f32).to_le_bytes()].concat(),
    };
    RegionInstr::Const { dtype, bytes }
}

/// A program under construction: the instructions and the dtype of every register.
struct Program {
    instrs: Vec<RegionInstr>,
    regs: Vec<DType>,
}

impl Program {
    fn push(&mut self, instr: RegionInstr, dtype: DType) -> u32 {
        self.instrs.push(instr);
        self.regs.push(dtype);
        (self.regs.len() - 1) as u32
    }

    /// A register of `dtype` other than `not` if there is one, else a new constant.
    fn partner(&mut self, rng: &mut Rng, dtype: DType, not: u32) -> u32 {
        let same: Vec<u32> =
            (0..self.regs.len() as u32).filter(|&r| r != not && self.regs[r as usize] == dtype).collect();
        match same.get(rng.below(same.len())) {
            Some(&r) if rng.chance(0.7) => r,
            _ => {
                let c = constant(rng, dtype);
                self.push(c, dtype)
            }
        }
    }

    /// One instruction whose result is exact for its dtype, reading register `a` (and partners).
    fn exact_step(&mut self, rng: &mut Rng, muls: &mut usize) {
        let a = rng.below(self.regs.len()) as u32;
        let d = self.regs[a as usize];
        match rng.below(6) {
            0 => {
                let ops: Vec<UnaryOp> = UnaryOp::ALL
                    .iter()
                    .copied()
                    .filter(|u| u.dtypes().contains(d) && u.tolerance(d) == Tolerance::Exact)
                    .collect();
                if let Some(&op) = ops.get(rng.below(ops.len())) {
                    self.push(RegionInstr::Unary(op, a), d);
                }
            }
            1 | 2 => {
                // Products grow fastest: a few keep float values small integers.
                let ops: Vec<BinaryOp> = BinaryOp::ALL
                    .iter()
                    .copied()
                    .filter(|b| b.dtypes().contains(d) && b.tolerance(d) == Tolerance::Exact)
                    .filter(|b| *muls < 2 || !d.is_float() || !matches!(b, BinaryOp::Mul))
                    .collect();
                if let Some(&op) = ops.get(rng.below(ops.len())) {
                    *muls += usize::from(op == BinaryOp::Mul);
                    let b = self.partner(rng, d, a);
                    let (x, y) = if rng.chance(0.5) { (a, b) } else { (b, a) };
                    self.push(RegionInstr::Binary(op, x, y), d);
                }
            }
            3 => {
                let ops: Vec<CompareOp> = CompareOp::ALL.iter().copied().filter(|c| c.dtypes().contains(d)).collect();
                if let Some(&op) = ops.get(rng.below(ops.len())) {
                    let b = self.partner(rng, d, a);
                    self.push(RegionInstr::Compare(op, a, b), DType::Bool);
                }
            }
            4 => {
                let conds: Vec<u32> =
                    (0..self.regs.len() as u32).filter(|&r| self.regs[r as usize] == DType::Bool).collect();
                if let Some(&c) = conds.get(rng.below(conds.len())) {
                    let b = self.partner(rng, d, a);
                    self.push(RegionInstr::Where(c, a, b), d);
                }
            }
            _ => {
                let to = any_dtype(rng);
                self.push(RegionInstr::Cast(to, a), to);
            }
        }
    }

    /// A last float instruction that is not Exact (at most Approx), if a float register exists.
    fn finish(&mut self, rng: &mut Rng) -> Option<u32> {
        let floats: Vec<u32> = (0..self.regs.len() as u32).filter(|&r| self.regs[r as usize].is_float()).collect();
        let &a = floats.get(rng.below(floats.len()))?;
        let d = self.regs[a as usize];
        let ops: Vec<UnaryOp> = UnaryOp::ALL
            .iter()
            .copied()
            .filter(|u| u.dtypes().contains(d) && !matches!(u.tolerance(d), Tolerance::Exact | Tolerance::Loose))
            .collect();
        let instr = match rng.below(4) {
            0 => RegionInstr::Fma(a, self.partner(rng, d, a), self.partner(rng, d, a)),
            1 => RegionInstr::Binary(BinaryOp::Div, a, self.partner(rng, d, a)),
            _ => RegionInstr::Unary(*ops.get(rng.below(ops.len()))?, a),
        };
        Some(self.push(instr, d))
    }
}

/// A random program over inputs of `dtypes` with `outputs` outputs (`None`: 1 to 3).
fn program(rng: &mut Rng, dtypes: &[DType], outputs: Option<usize>) -> RegionProgram {
    let mut p = Program { instrs: Vec::new(), regs: Vec::new() };
    for (i, &d) in dtypes.iter().enumerate() {
        p.push(RegionInstr::Input(i as u32), d);
    }
    let mut muls = 0;
    for _ in 0..1 + rng.below(6) {
        p.exact_step(rng, &mut muls);
    }
    let last = match rng.chance(0.5) {
        true => p.finish(rng).unwrap_or((p.regs.len() - 1) as u32),
        false => (p.regs.len() - 1) as u32,
    };
    let n = outputs.unwrap_or(1 + rng.below(3));
    let mut outs = vec![last];
    while outs.len() < n {
        outs.push(rng.below(p.regs.len()) as u32);
    }
    if rng.chance(0.5) {
        outs.reverse();
    }
    RegionProgram { num_inputs: dtypes.len() as u32, instrs: p.instrs, outputs: outs }
}

/// Adds the tensors as leaves, in order.
fn leaves(pb: &mut ProblemBuilder, sk: &Skeleton, ts: Vec<Tensor>) -> backend_api::Result<Vec<backend_api::Value>> {
    ts.into_iter().enumerate().map(|(i, t)| pb.leaf(sk.kind(i), t)).collect()
}

fn elementwise_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let n = 1 + rng.below(4);
    let dtypes = input_dtypes(&mut rng, dtype, n);
    let mut ts = Vec::with_capacity(n);
    for (i, &d) in dtypes.iter().enumerate() {
        let shape = if i == 0 && rng.chance(0.5) { sk.shape.clone() } else { broadcast_partner(&mut rng, &sk.shape) };
        ts.push(small().tensor(&mut rng, d, &shape, sk.rate)?);
    }
    let prog = program(&mut rng, &dtypes, None);
    let mut pb = ProblemBuilder::new();
    let ins = leaves(&mut pb, sk, ts)?;
    let outs = pb.g().elementwise_region(&ins, prog)?;
    pb.finish(&outs)
}

fn batch_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let n = 1 + rng.below(4);
    let mut shape = sk.shape.clone();
    while n * numel(&shape) > MAX_NUMEL / 4 && shape.iter().any(|&d| d > 1) {
        if let Some(d) = shape.iter_mut().max() {
            *d /= 2;
        }
    }
    let ts = (0..n).map(|_| small().tensor(&mut rng, dtype, &shape, sk.rate)).collect::<backend_api::Result<_>>()?;
    let prog = program(&mut rng, &[dtype], Some(1));
    let mut pb = ProblemBuilder::new();
    let ins = leaves(&mut pb, sk, ts)?;
    let y = pb.g().batch_elementwise_region(&ins, prog)?;
    pb.finish(&[y])
}

fn transform_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let n = 1 + rng.below(3);
    let r = rng.below(n);
    let scales: Vec<u32> = (2..sk.shape.len()).map(|_| 1 + rng.below(3) as u32).collect();
    let mut x = sk.shape.clone();
    // Keep the upsampled input within the size budget.
    while numel(&x) * scales.iter().map(|&s| s as usize).product::<usize>() > MAX_NUMEL / 4 {
        if let Some(d) = x.iter_mut().max() {
            *d /= 2;
        }
    }
    let resized: Vec<usize> =
        x.iter().enumerate().map(|(i, &d)| if i < 2 { d } else { d * scales[i - 2] as usize }).collect();
    let dtypes = input_dtypes(&mut rng, dtype, n);
    let mut ts = Vec::with_capacity(n);
    for (i, &d) in dtypes.iter().enumerate() {
        let shape = if i == r { x.clone() } else { broadcast_partner(&mut rng, &resized) };
        ts.push(small().tensor(&mut rng, d, &shape, sk.rate)?);
    }
    let prog = program(&mut rng, &dtypes, None);
    let mut pb = ProblemBuilder::new();
    let ins = leaves(&mut pb, sk, ts)?;
    let outs = pb.g().transform_region(&ins, prog, r as u32, &scales)?;
    pb.finish(&outs)
}
