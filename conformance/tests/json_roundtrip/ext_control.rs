//! Random builders of control flow, fused regions and custom ops (§2.13–2.15).

use crate::ctx::{Build, Ctx};
use backend_api::op::{BinaryOp, CompareOp, RegionInstr, RegionProgram, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Result, Shape, Value};

/// Name and builder of every op family here.
pub const BUILDERS: &[(&str, Build)] = &[
    ("If", if_),
    ("While", while_),
    ("ElementwiseRegion", elementwise_region),
    ("BatchElementwiseRegion", batch_region),
    ("TransformRegion", transform_region),
    ("Custom", custom),
];

/// A branch `x: F32[n] → f(x)` with a random unary `f` (or the identity), sometimes with a
/// constant and a param of its own.
fn branch(c: &mut Ctx, n: usize) -> Result<Graph> {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [n])?;
    let mut y = match c.pick(&[None, Some(UnaryOp::Neg), Some(UnaryOp::Exp), Some(UnaryOp::Sqrt)]) {
        Some(op) => b.unary(op, x)?,
        None => x,
    };
    if c.flip() {
        let k = b.constant(&backend_api::Tensor::scalar(c.finite()))?;
        y = b.binary(BinaryOp::Mul, y, k)?;
    }
    b.output(y)?;
    b.build()
}

fn if_(c: &mut Ctx) -> Result<Vec<Value>> {
    let n = c.size(1, 5);
    let cond_dims: Vec<usize> = c.pick(&[vec![], vec![1], vec![1, 1]]);
    let cond = c.leaf(DType::Bool, &cond_dims)?;
    let x = c.leaf(DType::F32, &[n])?;
    let (then_graph, else_graph) = (branch(c, n)?, branch(c, n)?);
    c.b.if_(cond, &[x], then_graph, else_graph)
}

/// `while i < limit { i = i + step; x = f(x) }` over `(i: I32[], x: F32[n])`.
fn while_(c: &mut Ctx) -> Result<Vec<Value>> {
    let n = c.size(1, 5);
    let mut cb = GraphBuilder::new();
    let i = cb.input("i", DType::I32, Shape::of(&[]))?;
    cb.input("x", DType::F32, [n])?;
    let limit = cb.constant(&backend_api::Tensor::scalar(c.size(0, 100) as i32))?;
    let cmp = c.pick(&[CompareOp::Lt, CompareOp::Le, CompareOp::Ne]);
    let go = cb.compare(cmp, i, limit)?;
    cb.output(go)?;
    let cond = cb.build()?;
    let mut bb = GraphBuilder::new();
    let i = bb.input("i", DType::I32, Shape::of(&[]))?;
    let x = bb.input("x", DType::F32, [n])?;
    let step = bb.constant(&backend_api::Tensor::scalar(c.size(1, 3) as i32))?;
    let i2 = bb.binary(BinaryOp::Add, i, step)?;
    let f = c.pick(&[UnaryOp::Neg, UnaryOp::Tanh, UnaryOp::Abs]);
    let x2 = bb.unary(f, x)?;
    bb.output(i2)?;
    bb.output(x2)?;
    let body = bb.build()?;
    let i0 = c.leaf(DType::I32, &[])?;
    let x0 = c.leaf(DType::F32, &[n])?;
    let max_iterations = c.rng.next_u64() >> c.size(0, 63);
    c.b.while_(&[i0, x0], cond, body, max_iterations)
}

/// A constant of random bytes of one element of a random dtype (Bool: 0 or 1), and the dtype.
fn const_instr(c: &mut Ctx) -> (RegionInstr, DType) {
    let dtype = c.pick(&[DType::F32, DType::F16, DType::F64, DType::I32, DType::U8, DType::Bool]);
    let mut bytes: Vec<u8> = (0..dtype.size()).map(|_| c.rng.next_u64() as u8).collect();
    if dtype == DType::Bool {
        bytes[0] &= 1;
    }
    (RegionInstr::Const { dtype, bytes }, dtype)
}

/// A random valid program over `num_inputs` F32 inputs: the inputs, then random instructions
/// whose operands are earlier registers of a dtype the instruction accepts; `outputs` random
/// registers.
fn random_program(c: &mut Ctx, num_inputs: u32, outputs: usize) -> RegionProgram {
    let mut instrs: Vec<RegionInstr> = (0..num_inputs).map(RegionInstr::Input).collect();
    let mut regs: Vec<DType> = vec![DType::F32; num_inputs as usize];
    for _ in 0..c.size(1, 12) {
        let of = |regs: &[DType], d: DType| -> Vec<u32> {
            (0..regs.len() as u32).filter(|&r| regs[r as usize] == d).collect()
        };
        let floats = of(&regs, DType::F32);
        let bools = of(&regs, DType::Bool);
        let (instr, dtype) = match c.size(0, 6) {
            0 => const_instr(c),
            1 => {
                let ops: Vec<UnaryOp> =
                    UnaryOp::ALL.iter().copied().filter(|u| u.dtypes().contains(DType::F32)).collect();
                (RegionInstr::Unary(c.pick(&ops), c.pick(&floats)), DType::F32)
            }
            2 => {
                let ops: Vec<BinaryOp> =
                    BinaryOp::ALL.iter().copied().filter(|o| o.dtypes().contains(DType::F32)).collect();
                (RegionInstr::Binary(c.pick(&ops), c.pick(&floats), c.pick(&floats)), DType::F32)
            }
            3 => (RegionInstr::Compare(c.pick(CompareOp::ALL), c.pick(&floats), c.pick(&floats)), DType::Bool),
            4 if !bools.is_empty() => {
                (RegionInstr::Where(c.pick(&bools), c.pick(&floats), c.pick(&floats)), DType::F32)
            }
            5 => {
                let to = c.pick(&DType::ALL);
                (RegionInstr::Cast(to, c.pick(&floats)), to)
            }
            _ => (RegionInstr::Fma(c.pick(&floats), c.pick(&floats), c.pick(&floats)), DType::F32),
        };
        instrs.push(instr);
        regs.push(dtype);
    }
    let outputs = (0..outputs).map(|_| c.size(0, instrs.len() - 1) as u32).collect();
    RegionProgram { num_inputs, instrs, outputs }
}

fn elementwise_region(c: &mut Ctx) -> Result<Vec<Value>> {
    let n = c.size(1, 4);
    let inputs: Vec<Value> = (0..n).map(|_| c.leaf(DType::F32, &[2, 3])).collect::<Result<_>>()?;
    let outputs = c.size(1, 3);
    let program = random_program(c, n as u32, outputs);
    c.b.elementwise_region(&inputs, program)
}

fn batch_region(c: &mut Ctx) -> Result<Vec<Value>> {
    let dims = [c.size(1, 3), c.size(1, 3)];
    let inputs: Vec<Value> = (0..c.size(1, 3)).map(|_| c.leaf(DType::F32, &dims)).collect::<Result<_>>()?;
    let program = random_program(c, 1, 1);
    Ok(vec![c.b.batch_elementwise_region(&inputs, program)?])
}

fn transform_region(c: &mut Ctx) -> Result<Vec<Value>> {
    let spatial: Vec<usize> = (0..c.size(1, 3)).map(|_| c.size(1, 3)).collect();
    let scales: Vec<u32> = spatial.iter().map(|_| c.size(1, 3) as u32).collect();
    let ch = c.size(1, 3);
    let small_dims: Vec<usize> = [1, ch].into_iter().chain(spatial.iter().copied()).collect();
    let big_dims: Vec<usize> =
        [1, ch].into_iter().chain(spatial.iter().zip(&scales).map(|(d, s)| d * *s as usize)).collect();
    let big = c.leaf(DType::F32, &big_dims)?;
    let small = c.leaf(DType::F32, &small_dims)?;
    let outputs = c.size(1, 2);
    let program = random_program(c, 2, outputs);
    c.b.transform_region(&[big, small], program, 1, &scales)
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One of the built-in custom ops with random attributes.
fn custom(c: &mut Ctx) -> Result<Vec<Value>> {
    if c.flip() {
        let n = c.size(2, 8);
        let exclude_self = c.size(0, 1);
        let k = c.size(1, n - exclude_self) as u32;
        let d = c.leaf(DType::F32, &[n, n])?;
        c.b.custom("umap.knn", &u32s(&[k, exclude_self as u32]), &[d])
    } else {
        let n_group = c.pick(&[1u32, 2, 4, 8]);
        let topk_group = c.size(1, n_group as usize) as u32;
        let top_k = c.size(1, (topk_group * 16 / n_group) as usize) as u32;
        let mut attrs = u32s(&[n_group, topk_group, top_k]);
        attrs.extend(c.finite().to_le_bytes());
        let rows = c.size(1, 3);
        let scores = c.leaf(DType::F32, &[rows, 16])?;
        let route = c.leaf(DType::F32, &[rows, 16])?;
        c.b.custom("llada2.group_limited_gate", &attrs, &[scores, route])
    }
}
