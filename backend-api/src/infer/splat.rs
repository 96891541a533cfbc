//! Gaussian splatting (§2.17), compiled with the `splat` feature. Every tensor is F32 except the
//! I32 `radius`.

use super::arity;
use super::util::{dtype_is, out, rank_is, shape_is, st, static_at};
use crate::op::SplatAttrs;
use crate::{bail, DType, Dim, Result, TensorType};

fn prepare_attrs(a: &SplatAttrs, op: &str) -> Result<()> {
    if a.width == 0 || a.height == 0 {
        bail!(Attribute, "{op} width {} and height {} must be >= 1", a.width, a.height);
    }
    if a.sh_degree > 3 {
        bail!(Attribute, "{op} sh_degree {} must be 0..=3", a.sh_degree);
    }
    if !a.radius_scale.is_finite() || a.radius_scale <= 0.0 {
        bail!(Attribute, "{op} radius_scale {} must be finite and > 0", a.radius_scale);
    }
    Ok(())
}

fn rasterize_attrs(a: &SplatAttrs, op: &str) -> Result<()> {
    if a.width == 0 || a.height == 0 || a.tile_size == 0 || a.max_list_entries == 0 {
        bail!(
            Attribute,
            "{op} width {}, height {}, tile_size {} and max_list_entries {} must be >= 1",
            a.width,
            a.height,
            a.tile_size,
            a.max_list_entries
        );
    }
    for (name, v) in
        [("alpha_cutoff", a.alpha_cutoff), ("alpha_max", a.alpha_max), ("transmittance_min", a.transmittance_min)]
    {
        if !(0.0..=1.0).contains(&v) {
            bail!(Attribute, "{op} {name} {v} must be in [0, 1]");
        }
    }
    Ok(())
}

fn meta_ok(meta: &TensorType, op: &str) -> Result<()> {
    dtype_is(meta, DType::F32, &format!("{op} meta"))?;
    shape_is(meta, &[st(20)], &format!("{op} meta (the camera, [20])"))
}

/// Checks the six scene inputs (`positions … sh`, `meta`) and returns `N` and the `sh` type.
fn scene(a: &SplatAttrs, ins: &[TensorType], op: &str) -> Result<(Dim, TensorType)> {
    let names = ["positions", "log_scales", "rotations", "opacity_logits", "sh", "meta"];
    for (t, n) in ins.iter().zip(names) {
        dtype_is(t, DType::F32, &format!("{op} {n}"))?;
    }
    rank_is(&ins[0], 2, &format!("{op} positions ([N, 3])"))?;
    let n = ins[0].shape.0[0].clone();
    shape_is(&ins[0], &[n.clone(), st(3)], &format!("{op} positions ([N, 3])"))?;
    shape_is(&ins[1], &[n.clone(), st(3)], &format!("{op} log_scales ([N, 3])"))?;
    shape_is(&ins[2], &[n.clone(), st(4)], &format!("{op} rotations ([N, 4])"))?;
    shape_is(&ins[3], std::slice::from_ref(&n), &format!("{op} opacity_logits ([N])"))?;
    let sh = &ins[4];
    rank_is(sh, 3, &format!("{op} sh ([N, C, 3])"))?;
    shape_is(sh, &[n.clone(), sh.shape.0[1].clone(), st(3)], &format!("{op} sh ([N, C, 3])"))?;
    let c = static_at(sh, 1, &format!("{op} sh (C)"))?;
    let need = (a.sh_degree as usize + 1).pow(2);
    if c < need {
        bail!(Shape, "{op} sh {sh} has C = {c} coefficients; sh_degree {} needs {need}", a.sh_degree);
    }
    meta_ok(&ins[5], op)?;
    Ok((n, sh.clone()))
}

fn image(a: &SplatAttrs) -> Result<TensorType> {
    out(DType::F32, vec![st(a.height as usize), st(a.width as usize), st(4)])
}

pub(crate) fn splat_prepare(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 6, "GaussianSplatPrepare (positions, log_scales, rotations, opacity_logits, sh, meta)")?;
    prepare_attrs(a, "GaussianSplatPrepare")?;
    let (n, _) = scene(a, ins, "GaussianSplatPrepare")?;
    let f = |dims: Vec<Dim>| out(DType::F32, dims);
    Ok(vec![
        f(vec![n.clone(), st(2)])?,
        f(vec![n.clone(), st(3)])?,
        f(vec![n.clone()])?,
        out(DType::I32, vec![n.clone()])?,
        f(vec![n.clone(), st(3)])?,
        f(vec![n])?,
    ])
}

pub(crate) fn splat_rasterize(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 7, "GaussianSplatRasterize (means2d, conic, depth, radius, rgb, alpha, meta)")?;
    let op = "GaussianSplatRasterize";
    rasterize_attrs(a, op)?;
    let names = ["means2d", "conic", "depth", "radius", "rgb", "alpha"];
    for (t, name) in ins.iter().zip(names) {
        let want = if name == "radius" { DType::I32 } else { DType::F32 };
        dtype_is(t, want, &format!("{op} {name}"))?;
    }
    rank_is(&ins[0], 2, &format!("{op} means2d ([N, 2])"))?;
    let n = ins[0].shape.0[0].clone();
    let widths = [Some(2), Some(3), None, None, Some(3), None];
    for ((t, name), w) in ins.iter().zip(names).zip(widths) {
        let mut want = vec![n.clone()];
        want.extend(w.map(st));
        shape_is(t, &want, &format!("{op} {name} (N of means2d)"))?;
    }
    meta_ok(&ins[6], op)?;
    Ok(vec![image(a)?])
}

pub(crate) fn splat_render(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    arity(ins, 6, "GaussianSplatRender (positions, log_scales, rotations, opacity_logits, sh, meta)")?;
    prepare_attrs(a, "GaussianSplatRender")?;
    rasterize_attrs(a, "GaussianSplatRender")?;
    scene(a, ins, "GaussianSplatRender")?;
    Ok(vec![image(a)?])
}

pub(crate) fn splat_render_backward(a: &SplatAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let op = "GaussianSplatRenderBackward";
    arity(ins, 7, "GaussianSplatRenderBackward (scene inputs, meta, d_image)")?;
    prepare_attrs(a, op)?;
    rasterize_attrs(a, op)?;
    scene(a, &ins[..6], op)?;
    let img = image(a)?;
    dtype_is(&ins[6], DType::F32, &format!("{op} d_image"))?;
    shape_is(&ins[6], &img.shape.0, &format!("{op} d_image ([H, W, 4])"))?;
    Ok(ins[..5].to_vec())
}
