//! The custom op definitions of the spec (§2.15.2–2.15.4): attribute blobs and shapes.

use crate::infer::{arity, dtype_in};
use crate::{bail, DType, DTypeSet, Dim, Result, Shape, TensorType};

fn blob_len(attrs: &[u8], n: usize, layout: &str) -> Result<()> {
    if attrs.len() != n {
        bail!(Attribute, "attrs must be exactly {n} bytes ({layout}), got {}", attrs.len());
    }
    Ok(())
}

/// The little-endian u32 at byte `i` (the length was checked by [`blob_len`]).
fn u32_at(attrs: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([attrs[i], attrs[i + 1], attrs[i + 2], attrs[i + 3]])
}

fn f32_rank(t: &TensorType, r: usize, what: &str) -> Result<()> {
    dtype_in(t, DTypeSet::F32, what)?;
    if t.rank() != r {
        bail!(Shape, "{what} {t} must have rank {r}");
    }
    Ok(())
}

fn static_dim(t: &TensorType, axis: usize, what: &str) -> Result<usize> {
    match t.shape.0[axis].as_static() {
        Some(d) => Ok(d),
        None => bail!(Shape, "{what} {t}: axis {axis} must be static for this rule"),
    }
}

fn ty(dtype: DType, dims: Vec<Dim>) -> TensorType {
    TensorType { dtype, shape: Shape(dims) }
}

/// `umap.knn` (§2.15.2): attrs `k: u32`, `exclude_self: u32`; `dist` F32 `[n, m]`.
pub(super) fn umap_knn(attrs: &[u8], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    blob_len(attrs, 8, "k: u32, exclude_self: u32")?;
    let (k, ex) = (u32_at(attrs, 0), u32_at(attrs, 4));
    if ex > 1 {
        bail!(Attribute, "exclude_self must be 0 or 1, got {ex}");
    }
    arity(ins, 1, "umap.knn (dist)")?;
    let dist = &ins[0];
    f32_rank(dist, 2, "umap.knn dist ([n, m])")?;
    let (n, m) = (&dist.shape.0[0], &dist.shape.0[1]);
    if ex == 1 && n != m {
        bail!(Shape, "umap.knn with exclude_self = 1 needs a square dist, got {dist}");
    }
    let m = static_dim(dist, 1, "umap.knn dist")?;
    if k as usize + ex as usize > m {
        bail!(Attribute, "umap.knn k = {k} exceeds the {} candidates per row of {dist}", m - ex as usize);
    }
    let dims = vec![n.clone(), Dim::Static(k as usize)];
    Ok(vec![ty(DType::I32, dims.clone()), ty(DType::F32, dims)])
}

/// `llada2.group_limited_gate` (§2.15.3): attrs `n_group`, `topk_group`, `top_k`: u32,
/// `routed_scaling`: f32; `scores`, `route` F32 `[R, E]`.
pub(super) fn group_limited_gate(attrs: &[u8], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    blob_len(attrs, 16, "n_group, topk_group, top_k: u32, routed_scaling: f32")?;
    let (n_group, topk_group, top_k) =
        (u32_at(attrs, 0) as usize, u32_at(attrs, 4) as usize, u32_at(attrs, 8) as usize);
    let scaling = f32::from_bits(u32_at(attrs, 12));
    arity(ins, 2, "llada2.group_limited_gate (scores, route)")?;
    let (scores, route) = (&ins[0], &ins[1]);
    f32_rank(scores, 2, "llada2.group_limited_gate scores ([R, E])")?;
    f32_rank(route, 2, "llada2.group_limited_gate route ([R, E])")?;
    if scores.shape != route.shape {
        bail!(Shape, "llada2.group_limited_gate scores {scores} and route {route} must have the same shape");
    }
    let e = static_dim(scores, 1, "llada2.group_limited_gate scores (E)")?;
    if n_group == 0 || e % n_group != 0 {
        bail!(Attribute, "n_group {n_group} must be >= 1 and divide E = {e}");
    }
    let gs = e / n_group;
    if topk_group == 0 || topk_group > n_group {
        bail!(Attribute, "topk_group {topk_group} must be in [1, n_group = {n_group}]");
    }
    if top_k == 0 || top_k > topk_group * gs {
        bail!(Attribute, "top_k {top_k} must be in [1, topk_group·E/n_group = {}]", topk_group * gs);
    }
    if !scaling.is_finite() {
        bail!(Attribute, "routed_scaling {scaling} must be finite");
    }
    let dims = vec![scores.shape.0[0].clone(), Dim::Static(top_k)];
    Ok(vec![ty(DType::I32, dims.clone()), ty(DType::F32, dims)])
}

/// `gdino.ms_deform_attn` (§2.15.4): empty attrs; `value [B, Sv, M, Dh]`, `spatial_shapes [L, 2]`,
/// `level_start [L]`, `sampling_locations [B, Q, M, L, P, 2]`, `attention_weights [B, Q, M, L, P]`.
pub(super) fn ms_deform_attn(attrs: &[u8], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    blob_len(attrs, 0, "no attributes")?;
    arity(ins, 5, "gdino.ms_deform_attn (value, spatial_shapes, level_start, sampling_locations, attention_weights)")?;
    let (value, shapes, starts, locs, weights) = (&ins[0], &ins[1], &ins[2], &ins[3], &ins[4]);
    f32_rank(value, 4, "gdino.ms_deform_attn value ([B, Sv, M, Dh])")?;
    dtype_in(shapes, DTypeSet::INDEX, "gdino.ms_deform_attn spatial_shapes")?;
    dtype_in(starts, DTypeSet::INDEX, "gdino.ms_deform_attn level_start")?;
    f32_rank(locs, 6, "gdino.ms_deform_attn sampling_locations ([B, Q, M, L, P, 2])")?;
    f32_rank(weights, 5, "gdino.ms_deform_attn attention_weights ([B, Q, M, L, P])")?;
    let v = &value.shape.0;
    let w = &weights.shape.0;
    let l = w[3].clone();
    let check = |t: &TensorType, want: Vec<Dim>, what: &str| -> Result<()> {
        if t.shape.0 != want {
            bail!(
                Shape,
                "gdino.ms_deform_attn {what} {t} must have shape {} (value {value}, attention_weights {weights})",
                Shape(want)
            );
        }
        Ok(())
    };
    if w[0] != v[0] || w[2] != v[2] {
        bail!(Shape, "gdino.ms_deform_attn attention_weights {weights} must share B and M with value {value}");
    }
    let mut loc = w.clone();
    loc.push(Dim::Static(2));
    check(locs, loc, "sampling_locations ([B, Q, M, L, P, 2])")?;
    check(shapes, vec![l.clone(), Dim::Static(2)], "spatial_shapes ([L, 2])")?;
    check(starts, vec![l], "level_start ([L])")?;
    let m = static_dim(value, 2, "gdino.ms_deform_attn value (M)")?;
    let dh = static_dim(value, 3, "gdino.ms_deform_attn value (Dh)")?;
    let Some(width) = m.checked_mul(dh) else {
        bail!(Shape, "gdino.ms_deform_attn value {value}: M·Dh overflows the index range");
    };
    Ok(vec![ty(DType::F32, vec![w[0].clone(), w[1].clone(), Dim::Static(width)])])
}
