//! The region ops (§2.14) → their instructions as standalone ops. §2.14.1 defines a region as
//! "the graph that has one standalone node per instruction", so this decomposition is the
//! definition (a fused implementation may keep F16/BF16 registers in f32; the standalone ops round
//! each one, which is the reference behaviour):
//!
//! - `Input(i)` is the region's input `i` itself: the standalone ops broadcast it exactly as the
//!   region's broadcast read does;
//! - `Const` is a rank-0 `Constant`, which broadcasts against anything;
//! - `Unary`, `Binary`, `Compare`, `Where`, `Cast`, `Fma` are the ops of the same name;
//! - an output register whose shape is smaller than the region's output (a constant, or a value
//!   computed from some inputs only) is `Expand`ed to it, since every output has the broadcast
//!   shape of all inputs, read or not.
//!
//! Instructions that no output depends on are left out: they cannot change an output.
//! `BatchElementwiseRegion` is that program per input, then `Concat` on axis 0 (§2.14.2);
//! `TransformRegion` reads its resized input through `ResizeNearest` (§2.14.3).

use super::arg;
use crate::op::{RegionInstr, RegionProgram, TransformRegionAttrs};
use crate::{bail, GraphBuilder, OpKind, Result, Shape, Tensor, TensorType, Value};

/// Kinds an `ElementwiseRegion` decomposes into.
pub(crate) const USES: &[OpKind] = &[
    OpKind::Constant,
    OpKind::Unary,
    OpKind::Binary,
    OpKind::Compare,
    OpKind::Where,
    OpKind::Cast,
    OpKind::Fma,
    OpKind::Expand,
];

/// Kinds a `BatchElementwiseRegion` decomposes into.
pub(crate) const BATCH_USES: &[OpKind] = &[
    OpKind::Constant,
    OpKind::Unary,
    OpKind::Binary,
    OpKind::Compare,
    OpKind::Where,
    OpKind::Cast,
    OpKind::Fma,
    OpKind::Expand,
    OpKind::Concat,
];

/// Kinds a `TransformRegion` decomposes into.
pub(crate) const TRANSFORM_USES: &[OpKind] = &[
    OpKind::Constant,
    OpKind::Unary,
    OpKind::Binary,
    OpKind::Compare,
    OpKind::Where,
    OpKind::Cast,
    OpKind::Fma,
    OpKind::Expand,
    OpKind::ResizeNearest,
];

/// `ElementwiseRegion(program)(ins)`; `outs` are the node's output types (the broadcast shape).
pub(crate) fn elementwise(
    g: &mut GraphBuilder,
    p: &RegionProgram,
    ins: &[Value],
    outs: &[TensorType],
) -> Result<Vec<Value>> {
    let Some(shape) = outs.first().map(|t| t.shape.clone()) else { bail!(Arity, "a region node has no outputs") };
    program(g, p, ins, &shape)
}

/// `Concat(axis 0)` of the one-input program applied to every input.
pub(crate) fn batch(g: &mut GraphBuilder, p: &RegionProgram, ins: &[Value]) -> Result<Vec<Value>> {
    let mut parts = Vec::with_capacity(ins.len());
    for &x in ins {
        let shape = g.value_type(x)?.shape.clone();
        parts.push(arg(&program(g, p, &[x], &shape)?, 0)?);
    }
    if parts.len() == 1 {
        return Ok(parts);
    }
    Ok(vec![g.concat(&parts, 0)?])
}

/// The region program on the inputs with `resized_input` replaced by its `ResizeNearest`.
pub(crate) fn transform(
    g: &mut GraphBuilder,
    a: &TransformRegionAttrs,
    ins: &[Value],
    outs: &[TensorType],
) -> Result<Vec<Value>> {
    let r = a.resized_input as usize;
    let resized = g.resize_nearest(arg(ins, r)?, &a.scales)?;
    let mut inputs = ins.to_vec();
    if let Some(slot) = inputs.get_mut(r) {
        *slot = resized;
    }
    elementwise(g, &a.program, &inputs, outs)
}

/// Which registers some output depends on.
fn live_registers(p: &RegionProgram) -> Vec<bool> {
    let mut live = vec![false; p.instrs.len()];
    for &o in &p.outputs {
        if let Some(l) = live.get_mut(o as usize) {
            *l = true;
        }
    }
    // Operands name earlier registers only, so one backward sweep finds every dependency.
    for k in (0..p.instrs.len()).rev() {
        if live[k] {
            for r in p.instrs[k].operands() {
                if let Some(l) = live.get_mut(r as usize) {
                    *l = true;
                }
            }
        }
    }
    live
}

/// Register `r` as read by instruction `k` (validation has ordered them; no panic anyway).
fn reg(regs: &[Option<Value>], r: u32, k: usize) -> Result<Value> {
    match regs.get(r as usize) {
        Some(Some(v)) => Ok(*v),
        _ => bail!(Attribute, "region instruction {k} reads register {r}, which is not computed before it"),
    }
}

/// One node per live instruction; the outputs broadcast to `shape`.
fn program(g: &mut GraphBuilder, p: &RegionProgram, inputs: &[Value], shape: &Shape) -> Result<Vec<Value>> {
    let live = live_registers(p);
    let mut regs: Vec<Option<Value>> = Vec::with_capacity(p.instrs.len());
    for (k, instr) in p.instrs.iter().enumerate() {
        if !live[k] {
            regs.push(None);
            continue;
        }
        let r = |i: &u32| reg(&regs, *i, k);
        let v = match instr {
            RegionInstr::Input(i) => match inputs.get(*i as usize) {
                Some(v) => *v,
                None => bail!(Attribute, "region instruction {k} reads input {i} of {}", inputs.len()),
            },
            RegionInstr::Const { dtype, bytes } => g.constant(&Tensor::from_bytes(*dtype, &[], bytes.clone())?)?,
            RegionInstr::Unary(op, a) => g.unary(*op, r(a)?)?,
            RegionInstr::Binary(op, a, b) => g.binary(*op, r(a)?, r(b)?)?,
            RegionInstr::Compare(op, a, b) => g.compare(*op, r(a)?, r(b)?)?,
            RegionInstr::Where(c, a, b) => g.where_(r(c)?, r(a)?, r(b)?)?,
            RegionInstr::Cast(to, a) => g.cast(r(a)?, *to)?,
            RegionInstr::Fma(a, b, c) => g.fma(r(a)?, r(b)?, r(c)?)?,
        };
        regs.push(Some(v));
    }
    let mut outs = Vec::with_capacity(p.outputs.len());
    for &o in &p.outputs {
        let v = reg(&regs, o, p.instrs.len())?;
        outs.push(if g.value_type(v)?.shape == *shape { v } else { g.expand(v, shape.clone())? });
    }
    Ok(outs)
}
