//! QuantMatMul and QuantGroupedMatMul (§2.6.5–2.6.6): `x` times the transpose of a weight `W[N, K]`
//! stored in one of the formats of §2.6.7. The weight is decoded to f32 exactly as the spec writes
//! it (`quant/weights.rs` dispatches to one decoder file per format family), then every dot product
//! accumulates in f64 and each output is rounded once into the dtype of `x`.

mod fp8;
mod ggml;
mod int;
mod kquants;
mod nvfp4;
mod weights;

use crate::layout::count;
use crate::mem::{try_filled, try_vec};
use crate::ops::indexing::{index_values, resolve};
use crate::value::{floats, from_floats};
use backend_api::op::QuantFormat;
use backend_api::{bail, DType, Result, Tensor, TensorView};

/// `x` must be F32, F16 or BF16 (the float32 family).
fn check_x(x: &Tensor, op: &str) -> Result<()> {
    if !matches!(x.dtype(), DType::F32 | DType::F16 | DType::BF16) {
        bail!(DType, "{op} x must be F32, F16 or BF16, got {}{:?}", x.dtype(), x.shape());
    }
    Ok(())
}

/// `Σ_k x[k] · w[k]` in f64 (each product is exact: both factors have at most 24 significant bits).
fn dot(x: &[f64], w: &[f32]) -> f64 {
    x.iter().zip(w).map(|(a, &b)| a * f64::from(b)).sum()
}

/// `out[…, n] = Σ_k x[…, k] · W[n, k]` (§2.6.5); `ins` is `x` then the format's weight inputs.
pub fn quant_matmul(ins: &[&Tensor], format: QuantFormat) -> Result<Tensor> {
    const OP: &str = "QuantMatMul";
    let nw = format.num_weight_inputs();
    let (Some(x), true) = (ins.first(), ins.len() == 1 + nw) else {
        bail!(Arity, "{OP} {} takes x and {nw} weight input(s), got {} inputs", format.name(), ins.len());
    };
    check_x(x, OP)?;
    let xd = x.shape();
    let Some((&k, lead)) = xd.split_last() else {
        bail!(Shape, "{OP} x must have rank >= 1 ([..., K]), got {}{xd:?}", x.dtype());
    };
    let views: Vec<TensorView<'_>> = ins.iter().skip(1).map(|t| t.view()).collect();
    let types: Vec<_> = views.iter().map(|v| (v.dtype(), v.shape())).collect();
    let n = weights::check(format, &types, k, OP)?;
    let mut shape = lead.to_vec();
    shape.push(n);
    let len = count(&shape)?;
    if len == 0 || k == 0 {
        // Nothing to decode: an empty output, or zeros from sums over no element.
        return from_floats(x.dtype(), &shape, &try_filled(len, 0.0)?);
    }
    let (_, w) = weights::decode(format, &views, k, OP)?;
    let vx = floats(x, "QuantMatMul x")?;
    let mut out = try_vec(len)?;
    for xr in vx.chunks_exact(k) {
        out.extend(w.chunks_exact(k).map(|wr| dot(xr, wr)));
    }
    from_floats(x.dtype(), &shape, &out)
}

/// `out[m, n] = Σ_k x[m, k] · W_e[n, k]` with `e = resolve(expert[m])`, a zero row where it is
/// out of range (§2.6.6); `ins` is `x`, the format's weight inputs (each with a leading `E`), then
/// `expert`.
pub fn quant_grouped_matmul(ins: &[&Tensor], format: QuantFormat) -> Result<Tensor> {
    const OP: &str = "QuantGroupedMatMul";
    let nw = format.num_weight_inputs();
    let (Some(x), Some(expert), true) = (ins.first(), ins.last(), ins.len() == 2 + nw) else {
        bail!(Arity, "{OP} {} takes x, {nw} weight input(s) and expert, got {} inputs", format.name(), ins.len());
    };
    check_x(x, OP)?;
    let (xd, ed) = (x.shape(), expert.shape());
    let (&[m, k], &[em]) = (xd, ed) else {
        bail!(Shape, "{OP} needs x [M, K] and expert [M], got {xd:?} and {ed:?}");
    };
    if em != m {
        bail!(Shape, "{OP} expert {ed:?} must have one id per row of x {xd:?}");
    }
    let ws = ins.get(1..1 + nw).unwrap_or(&[]);
    let e = experts(ws, OP)?;
    let types: Vec<_> = ws.iter().map(|t| (t.dtype(), t.shape().get(1..).unwrap_or(&[]))).collect();
    let n = weights::check(format, &types, k, OP).map_err(|err| err.context("per-expert weight slice"))?;
    let ids = index_values(expert, "QuantGroupedMatMul expert")?;
    let rows: Vec<Option<usize>> = ids.iter().map(|&id| resolve(id, e)).collect();
    let Some(len) = m.checked_mul(n) else {
        bail!(Shape, "{OP} output [{m}, {n}] has more than usize::MAX elements");
    };
    let mut out = try_filled(len, 0.0)?;
    if len > 0 && k > 0 {
        let vx = floats(x, "QuantGroupedMatMul x")?;
        // Each expert that some row uses is decoded once (never a loop over all `E`, which can be
        // huge when the slices are empty).
        let mut used: Vec<usize> = rows.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        for ex in used {
            let views = ws.iter().map(|t| expert_slice(t, ex, e)).collect::<Result<Vec<_>>>()?;
            let (_, w) = weights::decode(format, &views, k, OP)?;
            let mine = out.chunks_exact_mut(n).zip(vx.chunks_exact(k)).zip(&rows);
            for ((o, xr), _) in mine.filter(|(_, r)| **r == Some(ex)) {
                for (y, wr) in o.iter_mut().zip(w.chunks_exact(k)) {
                    *y = dot(xr, wr);
                }
            }
        }
    }
    from_floats(x.dtype(), &[m, n], &out)
}

/// The common leading dim `E` of the weight inputs (each must have one).
fn experts(ws: &[&Tensor], op: &str) -> Result<usize> {
    let mut e = None;
    for (i, t) in ws.iter().enumerate() {
        let Some(&ei) = t.shape().first() else {
            bail!(Shape, "{op} weight input {i} {}{:?} needs a leading expert dim E", t.dtype(), t.shape());
        };
        if e.is_some_and(|e| e != ei) {
            let shapes: Vec<&[usize]> = ws.iter().map(|t| t.shape()).collect();
            bail!(Shape, "{op} weight inputs differ in their leading (expert) dim: {shapes:?}");
        }
        e = Some(ei);
    }
    match e {
        Some(e) => Ok(e),
        None => bail!(Arity, "{op} has no weight input"),
    }
}

/// Expert `ex`'s slice (`t[ex]`, `0 ≤ ex < e`) of a weight input with leading dim `e`.
fn expert_slice(t: &Tensor, ex: usize, e: usize) -> Result<TensorView<'_>> {
    let bytes = t.bytes();
    let per = bytes.len() / e.max(1);
    let range = ex.checked_mul(per).and_then(|a| Some(a..a.checked_add(per)?));
    match range.and_then(|r| bytes.get(r)) {
        Some(data) => TensorView::new(t.dtype(), t.shape().get(1..).unwrap_or(&[]), data),
        None => bail!(Shape, "expert {ex} is outside weight input {}{:?}", t.dtype(), t.shape()),
    }
}

#[cfg(test)]
mod loops;
#[cfg(test)]
mod tests;
