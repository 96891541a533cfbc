//! §2.17 Gaussian splatting (feature `splat`).

use crate::{dims, dt, fails, finish, inp};
use backend_api::op::SplatAttrs;
use backend_api::{DType, ErrorKind, GraphBuilder, Value};

/// `[positions, log_scales, rotations, opacity_logits, sh, meta]` for `n` Gaussians, `c` SH coefficients.
fn scene(b: &mut GraphBuilder, n: usize, c: usize, tag: &str) -> Vec<Value> {
    let shapes: [(&str, Vec<usize>); 6] = [
        ("positions", vec![n, 3]),
        ("log_scales", vec![n, 3]),
        ("rotations", vec![n, 4]),
        ("opacity_logits", vec![n]),
        ("sh", vec![n, c, 3]),
        ("meta", vec![20]),
    ];
    shapes.iter().map(|(name, s)| inp(b, &format!("{tag}{name}"), DType::F32, s)).collect()
}

#[test]
fn prepare_rasterize_render() {
    let mut b = GraphBuilder::new();
    let s = scene(&mut b, 100, 16, "");
    let a = SplatAttrs::new(64, 48, 1 << 20);
    let prep = b.gaussian_splat_prepare(&s, a).unwrap();
    let got: Vec<(Vec<usize>, DType)> = prep.iter().map(|&v| (dims(&b, v), dt(&b, v))).collect();
    let f = DType::F32;
    assert_eq!(
        got,
        [
            (vec![100, 2], f),
            (vec![100, 3], f),
            (vec![100], f),
            (vec![100], DType::I32),
            (vec![100, 3], f),
            (vec![100], f)
        ]
    );
    let img = b.gaussian_splat_rasterize(&prep, s[5], a).unwrap();
    assert_eq!(dims(&b, img), [48, 64, 4]);
    let img2 = b.gaussian_splat_render(&s, a).unwrap();
    assert_eq!(dims(&b, img2), [48, 64, 4]);
    let d_image = inp(&mut b, "d_image", DType::F32, &[48, 64, 4]);
    let grads = b.gaussian_splat_render_backward(&s, d_image, a).unwrap();
    let got: Vec<Vec<usize>> = grads.iter().map(|&v| dims(&b, v)).collect();
    assert_eq!(got, [vec![100, 3], vec![100, 3], vec![100, 4], vec![100], vec![100, 16, 3]]);
    let mut outs = prep.clone();
    outs.extend([img, img2]);
    outs.extend(&grads);
    finish(b, &outs);
}

#[test]
fn splat_errors() {
    let mut b = GraphBuilder::new();
    let s = scene(&mut b, 100, 16, "");
    let a = SplatAttrs::new(64, 48, 1 << 20);
    // N inconsistent, too few SH coefficients for degree 3, meta not [20]
    let mut bad_n = s.clone();
    bad_n[3] = inp(&mut b, "o99", DType::F32, &[99]);
    fails(b.gaussian_splat_prepare(&bad_n, a), ErrorKind::Shape);
    let few = scene(&mut b, 100, 9, "few");
    fails(b.gaussian_splat_render(&few, a), ErrorKind::Shape);
    b.gaussian_splat_render(&few, SplatAttrs { sh_degree: 2, ..a }).unwrap();
    let mut bad_meta = s.clone();
    bad_meta[5] = inp(&mut b, "m19", DType::F32, &[19]);
    fails(b.gaussian_splat_prepare(&bad_meta, a), ErrorKind::Shape);
    let d_bad = inp(&mut b, "d_bad", DType::F32, &[64, 48, 4]);
    fails(b.gaussian_splat_render_backward(&s, d_bad, a), ErrorKind::Shape);
    // attributes
    fails(b.gaussian_splat_prepare(&s, SplatAttrs { width: 0, ..a }), ErrorKind::Attribute);
    fails(b.gaussian_splat_prepare(&s, SplatAttrs { sh_degree: 4, ..a }), ErrorKind::Attribute);
    fails(b.gaussian_splat_prepare(&s, SplatAttrs { radius_scale: 0.0, ..a }), ErrorKind::Attribute);
    fails(b.gaussian_splat_render(&s, SplatAttrs { alpha_max: 1.5, ..a }), ErrorKind::Attribute);
    fails(b.gaussian_splat_render(&s, SplatAttrs { tile_size: 0, ..a }), ErrorKind::Attribute);
    fails(b.gaussian_splat_render(&s, SplatAttrs { max_list_entries: 0, ..a }), ErrorKind::Attribute);
    // dtypes and arity
    let mut f16 = s.clone();
    f16[0] = inp(&mut b, "p16", DType::F16, &[100, 3]);
    fails(b.gaussian_splat_prepare(&f16, a), ErrorKind::DType);
    let prep = b.gaussian_splat_prepare(&s, a).unwrap();
    let mut bad_radius = prep.clone();
    bad_radius[3] = prep[2];
    fails(b.gaussian_splat_rasterize(&bad_radius, s[5], a), ErrorKind::DType);
    let mut short_rgb = prep.clone();
    short_rgb[4] = inp(&mut b, "rgb2", DType::F32, &[100, 2]);
    fails(b.gaussian_splat_rasterize(&short_rgb, s[5], a), ErrorKind::Shape);
    fails(b.gaussian_splat_render(&s[..5], a), ErrorKind::Arity);
}
