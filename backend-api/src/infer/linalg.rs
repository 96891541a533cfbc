//! Linear algebra (§2.6): `MatMul`, `DotGeneral`, `FusedMatMulBiasAct`, the grouped and the quantised
//! matmuls.

use super::util::{dtype_is, index_input, out, rank_is, shape_is, st};
use super::{arity, dtype_in, same_dtype};
use crate::op::{DotGeneralAttrs, GroupedMatMulAttrs, QuantFormat, QuantMatMulAttrs, UnaryOp};
use crate::shape::broadcast_shapes;
use crate::{bail, DType, DTypeSet, Dim, Result, Shape, TensorType};

pub(crate) fn matmul(ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "MatMul")?;
    matmul_type(&ins[0], &ins[1]).map(|t| vec![t])
}

fn matmul_type(a: &TensorType, b: &TensorType) -> Result<TensorType> {
    same_dtype(&[a.clone(), b.clone()], "MatMul")?;
    dtype_in(a, DTypeSet::FLOAT, "MatMul input a")?;
    if a.rank() < 2 || b.rank() < 2 {
        bail!(Shape, "MatMul needs rank >= 2 operands (reshape vectors to matrices), got a {a} and b {b}");
    }
    let (ra, rb) = (a.rank(), b.rank());
    let (m, ka) = (&a.shape.0[ra - 2], &a.shape.0[ra - 1]);
    let (kb, n) = (&b.shape.0[rb - 2], &b.shape.0[rb - 1]);
    if ka != kb {
        bail!(Shape, "MatMul contraction mismatch: a {a} has K = {ka}, b {b} has K = {kb}");
    }
    let batch = broadcast_shapes(&Shape(a.shape.0[..ra - 2].to_vec()), &Shape(b.shape.0[..rb - 2].to_vec()))
        .map_err(|e| e.context(format!("MatMul batch dims of a {a} and b {b}")))?;
    let mut dims = batch.0;
    dims.push(m.clone());
    dims.push(n.clone());
    Ok(TensorType { dtype: a.dtype, shape: Shape(dims) })
}

pub(crate) fn dot_general(at: &DotGeneralAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 2, "DotGeneral")?;
    same_dtype(ins, "DotGeneral")?;
    dtype_in(&ins[0], DTypeSet::FLOAT, "DotGeneral input lhs")?;
    let (l, r) = (&ins[0], &ins[1]);
    if at.lhs_batch.len() != at.rhs_batch.len() || at.lhs_contract.len() != at.rhs_contract.len() {
        bail!(Shape, "DotGeneral paired axis lists differ in length: {at:?}");
    }
    check_axes(&at.lhs_batch, &at.lhs_contract, l.rank(), "lhs")?;
    check_axes(&at.rhs_batch, &at.rhs_contract, r.rank(), "rhs")?;
    let pairs = at.lhs_batch.iter().zip(&at.rhs_batch).chain(at.lhs_contract.iter().zip(&at.rhs_contract));
    for (&la, &ra) in pairs {
        if l.shape.0[la] != r.shape.0[ra] {
            bail!(Shape, "DotGeneral pairs lhs {l} axis {la} with rhs {r} axis {ra}, whose dims differ");
        }
    }
    let mut dims: Vec<Dim> = at.lhs_batch.iter().map(|&a| l.shape.0[a].clone()).collect();
    dims.extend(free_axes(l.rank(), &at.lhs_batch, &at.lhs_contract).map(|a| l.shape.0[a].clone()));
    dims.extend(free_axes(r.rank(), &at.rhs_batch, &at.rhs_contract).map(|a| r.shape.0[a].clone()));
    let t = TensorType { dtype: l.dtype, shape: Shape(dims) };
    super::rank_ok(&t)?;
    Ok(vec![t])
}

/// Axes of a DotGeneral operand that are neither batch nor contracting, ascending.
pub fn free_axes<'a>(rank: usize, batch: &'a [usize], contract: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    (0..rank).filter(move |a| !batch.contains(a) && !contract.contains(a))
}

fn check_axes(batch: &[usize], contract: &[usize], rank: usize, side: &str) -> Result<()> {
    let all: Vec<usize> = batch.iter().chain(contract).copied().collect();
    for (i, &a) in all.iter().enumerate() {
        if a >= rank {
            bail!(Axis, "DotGeneral {side} axis {a} out of range for rank {rank}");
        }
        if all[..i].contains(&a) {
            bail!(Axis, "DotGeneral {side} axis {a} is repeated or both batch and contracting");
        }
    }
    Ok(())
}

pub(crate) fn fused_matmul(act: Option<UnaryOp>, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "FusedMatMulBiasAct")?;
    let out = matmul_type(&ins[0], &ins[1])?;
    if ins[2].dtype != out.dtype {
        bail!(DType, "FusedMatMulBiasAct bias {} must have the dtype of a ({})", ins[2], out.dtype);
    }
    let b = broadcast_shapes(&out.shape, &ins[2].shape)?;
    if b != out.shape {
        bail!(Shape, "FusedMatMulBiasAct bias {} would enlarge the matmul output {}", ins[2], out);
    }
    if let Some(u) = act {
        if !u.dtypes().contains(out.dtype) {
            bail!(DType, "FusedMatMulBiasAct activation {} does not accept {}", u.name(), out.dtype);
        }
    }
    Ok(vec![out])
}

pub(crate) fn grouped_matmul(_a: &GroupedMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 3, "GroupedMatMul")?;
    let (x, w, e) = (&ins[0], &ins[1], &ins[2]);
    dtype_in(x, DTypeSet::FLOAT, "GroupedMatMul input x")?;
    if w.dtype != x.dtype {
        bail!(DType, "GroupedMatMul w {w} must have the dtype of x {x}");
    }
    index_input(e, "GroupedMatMul input expert")?;
    rank_is(x, 2, "GroupedMatMul x ([M, K])")?;
    rank_is(w, 3, "GroupedMatMul w ([E, K, N])")?;
    if w.shape.0[1] != x.shape.0[1] {
        bail!(Shape, "GroupedMatMul K mismatch: x {x} has K = {}, w {w} has K = {}", x.shape.0[1], w.shape.0[1]);
    }
    shape_is(e, &x.shape.0[..1], "GroupedMatMul expert ([M])")?;
    Ok(vec![out(x.dtype, vec![x.shape.0[0].clone(), w.shape.0[2].clone()])?])
}

pub(crate) fn quant_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let nw = a.format.num_weight_inputs();
    arity(ins, 1 + nw, &format!("QuantMatMul ({}: x and {nw} weight input(s))", a.format.name()))?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, "QuantMatMul input x")?;
    if x.rank() == 0 {
        bail!(Shape, "QuantMatMul x {x} must have rank >= 1 ([..., K])");
    }
    let k = super::util::static_at(x, x.rank() - 1, "QuantMatMul x (K)")?;
    let n = check_weights(a.format, k, &ins[1..])?;
    let mut dims = x.shape.0[..x.rank() - 1].to_vec();
    dims.push(st(n));
    Ok(vec![out(x.dtype, dims)?])
}

pub(crate) fn quant_grouped_matmul(a: &QuantMatMulAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let nw = a.format.num_weight_inputs();
    arity(ins, 2 + nw, &format!("QuantGroupedMatMul ({}: x, {nw} weight input(s), expert)", a.format.name()))?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, "QuantGroupedMatMul input x")?;
    rank_is(x, 2, "QuantGroupedMatMul x ([M, K])")?;
    let k = super::util::static_at(x, 1, "QuantGroupedMatMul x (K)")?;
    let weights = &ins[1..1 + nw];
    let expert = &ins[1 + nw];
    index_input(expert, "QuantGroupedMatMul input expert")?;
    shape_is(expert, &x.shape.0[..1], "QuantGroupedMatMul expert ([M])")?;
    let mut lead: Option<&Dim> = None;
    let mut per_expert = Vec::with_capacity(nw);
    for (i, w) in weights.iter().enumerate() {
        let Some(e) = w.shape.0.first() else {
            bail!(Shape, "QuantGroupedMatMul weight input {i} {w} needs a leading expert dim E");
        };
        if let Some(prev) = lead {
            if prev != e {
                bail!(Shape, "QuantGroupedMatMul weight inputs disagree on E: {prev} and {e} (input {i} {w})");
            }
        }
        lead = Some(e);
        per_expert.push(TensorType { dtype: w.dtype, shape: crate::Shape(w.shape.0[1..].to_vec()) });
    }
    let n = check_weights(a.format, k, &per_expert).map_err(|e| e.context("per-expert weight slice"))?;
    Ok(vec![out(x.dtype, vec![x.shape.0[0].clone(), st(n)])?])
}

/// Checks the weight inputs of `format` for `K = k` and returns `N`.
fn check_weights(format: QuantFormat, k: usize, ws: &[TensorType]) -> Result<usize> {
    let w = &ws[0];
    rank_is(w, 2, &format!("{} weight w", format.name()))?;
    let n = super::util::static_at(w, 0, &format!("{} weight w (N)", format.name()))?;
    match format {
        QuantFormat::Int8Block { block_size } => {
            dtype_is(w, DType::I8, "Int8Block w")?;
            shape_is(w, &[st(n), st(k)], "Int8Block w ([N, K])")?;
            check_scale(&ws[1], n, k, block_size, "Int8Block scale")?;
        }
        QuantFormat::Int8BlockAsym { block_size } => {
            dtype_in(w, DTypeSet::of(&[DType::U8, DType::I8]), "Int8BlockAsym w")?;
            shape_is(w, &[st(n), st(k)], "Int8BlockAsym w ([N, K])")?;
            check_scale(&ws[1], n, k, block_size, "Int8BlockAsym scale")?;
            dtype_is(&ws[2], ws[1].dtype, "Int8BlockAsym zero (dtype of scale)")?;
            shape_is(&ws[2], &ws[1].shape.0, "Int8BlockAsym zero (shape of scale)")?;
        }
        QuantFormat::Int4Block { block_size } => {
            dtype_is(w, DType::U8, "Int4Block w")?;
            shape_is(w, &[st(n), st(k.div_ceil(2))], "Int4Block w ([N, ceil(K/2)])")?;
            check_scale(&ws[1], n, k, block_size, "Int4Block scale")?;
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            dtype_is(w, DType::U8, "Fp8 w")?;
            shape_is(w, &[st(n), st(k)], "Fp8 w ([N, K])")?;
            let s = &ws[1];
            dtype_is(s, DType::F32, "Fp8 scale")?;
            if !(s.shape.0.is_empty() || s.shape.0 == [st(n)]) {
                bail!(Shape, "Fp8 scale {s} must have shape [] (per tensor) or [{n}] (per row)");
            }
        }
        QuantFormat::Nvfp4 => check_nvfp4(ws, n, k)?,
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => check_ggml(format, w, n, k)?,
    }
    Ok(n)
}

fn block_ok(block_size: u32, what: &str) -> Result<usize> {
    if block_size == 0 {
        bail!(Attribute, "{what}: block_size must be >= 1");
    }
    Ok(block_size as usize)
}

/// A per-block scale: F32 or F16, `[N, ⌈K/B⌉]`.
fn check_scale(s: &TensorType, n: usize, k: usize, block_size: u32, what: &str) -> Result<()> {
    let bs = block_ok(block_size, what)?;
    dtype_in(s, DTypeSet::of(&[DType::F32, DType::F16]), what)?;
    shape_is(s, &[st(n), st(k.div_ceil(bs))], &format!("{what} ([N, ceil(K/{bs})])"))
}

fn check_nvfp4(ws: &[TensorType], n: usize, k: usize) -> Result<()> {
    if !k.is_multiple_of(16) {
        bail!(Shape, "Nvfp4 needs K a multiple of 16, got K = {k}");
    }
    dtype_is(&ws[0], DType::U8, "Nvfp4 w")?;
    shape_is(&ws[0], &[st(n), st(k / 2)], "Nvfp4 w ([N, K/2])")?;
    dtype_is(&ws[1], DType::U8, "Nvfp4 block_scale")?;
    shape_is(&ws[1], &[st(n), st(k / 16)], "Nvfp4 block_scale ([N, K/16])")?;
    dtype_is(&ws[2], DType::F32, "Nvfp4 global_scale")?;
    shape_is(&ws[2], &[], "Nvfp4 global_scale ([])")
}

fn check_ggml(format: QuantFormat, w: &TensorType, n: usize, k: usize) -> Result<()> {
    let Some((qk, bb)) = format.ggml_block() else {
        bail!(Attribute, "{} is not a GGML block format", format.name());
    };
    if !k.is_multiple_of(qk) {
        bail!(Shape, "{} needs K a multiple of {qk}, got K = {k}", format.name());
    }
    dtype_is(w, DType::U8, &format!("{} w", format.name()))?;
    let row_bytes = super::util::mul(k / qk, bb, &format!("{} row bytes", format.name()))?;
    shape_is(w, &[st(n), st(row_bytes)], &format!("{} w ([N, K/{qk}·{bb}])", format.name()))
}
