//! GroupNorm and LayerNorm2d (§2.7.6–2.7.7): norms of `x [N, C, *spatial]` whose statistics run
//! over channel groups (GroupNorm) or across the channels of one spatial position (LayerNorm2d),
//! with a per-channel `gamma` and optional `beta`. Computed in f64 with two-pass variance and
//! rounded once, like the other norms.
//!
//! `x` is viewed as `[N, C, S]` with `S = numel(spatial)` (1 for rank 2); element `(n, c, s)` is
//! at `(n·C + c)·S + s`, in range by construction of the checked shape.

use super::NormData;
use crate::layout::count;
use crate::mem::try_filled;
use crate::value::{floats, from_floats};
use backend_api::op::{GroupNormAttrs, LayerNorm2dAttrs};
use backend_api::{bail, Result, Tensor};

/// `(x − μ)/√(σ² + eps)·γ[c] + β[c]` with μ, σ² over each of the `num_groups` consecutive
/// channel groups of each batch item (§2.7.6).
pub fn group_norm(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, a: &GroupNormAttrs) -> Result<Tensor> {
    let (_, c, s, d) = channel_operands(x, gamma, beta, "GroupNorm")?;
    let g = a.num_groups as usize;
    if g == 0 || c % g != 0 {
        bail!(Attribute, "GroupNorm num_groups {g} must be >= 1 and divide C = {c} of x {:?}", x.shape());
    }
    let eps = a.eps as f64;
    let mut y = try_filled(d.x.len(), 0.0)?;
    if d.x.is_empty() {
        return from_floats(x.dtype(), x.shape(), &y);
    }
    // A group's channels are consecutive, so its elements are one contiguous run of cg·S.
    let cg = c / g;
    let len = cg * s;
    for (k, (grp, out)) in d.x.chunks_exact(len).zip(y.chunks_exact_mut(len)).enumerate() {
        let (mu, inv) = moments(grp.iter().copied(), eps);
        let first = (k % g) * cg;
        for (i, o) in out.iter_mut().enumerate() {
            let ch = first + i / s;
            *o = (grp[i] - mu) * inv * d.gamma[ch] + d.beta[ch];
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

/// `(x − μ)/√(σ² + eps)·γ[c] + β[c]` with μ, σ² over the channels at each `(n, s)` (§2.7.7).
pub fn layer_norm_2d(x: &Tensor, gamma: &Tensor, beta: Option<&Tensor>, a: &LayerNorm2dAttrs) -> Result<Tensor> {
    let (n, c, s, d) = channel_operands(x, gamma, beta, "LayerNorm2d")?;
    let eps = a.eps as f64;
    let mut y = try_filled(d.x.len(), 0.0)?;
    if d.x.is_empty() {
        return from_floats(x.dtype(), x.shape(), &y);
    }
    for b in 0..n {
        for p in 0..s {
            let at = |ch: usize| (b * c + ch) * s + p;
            let (mu, inv) = moments((0..c).map(|ch| d.x[at(ch)]), eps);
            for ch in 0..c {
                y[at(ch)] = (d.x[at(ch)] - mu) * inv * d.gamma[ch] + d.beta[ch];
            }
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

/// μ and `1/√(σ² + eps)` of a non-empty run of values, σ² in two passes. `1/0 = +∞`, so eps = 0
/// on a constant run gives `0·∞ = NaN` downstream, as the spec's 0/0.
fn moments(v: impl Iterator<Item = f64> + Clone, eps: f64) -> (f64, f64) {
    let (sum, len) = v.clone().fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    let h = len as f64;
    let mu = sum / h;
    let var = v.map(|x| (x - mu) * (x - mu)).sum::<f64>() / h;
    (mu, 1.0 / (var + eps).sqrt())
}

/// `(N, C, S)` of `x [N, C, *spatial]` and the operands as f64 (beta zeros when absent), after
/// checking ranks, dtypes and the `[C]` shapes of gamma and beta.
fn channel_operands(
    x: &Tensor,
    gamma: &Tensor,
    beta: Option<&Tensor>,
    op: &str,
) -> Result<(usize, usize, usize, NormData)> {
    let dims = x.shape();
    let (Some(&n), Some(&c)) = (dims.first(), dims.get(1)) else {
        bail!(Shape, "{op} x {dims:?} must be [N, C, *spatial] (rank >= 2)")
    };
    let s = count(&dims[2..])?;
    for (name, t) in [("gamma", Some(gamma)), ("beta", beta)] {
        if let Some(t) = t {
            if t.dtype() != x.dtype() || t.shape() != [c] {
                bail!(
                    Shape,
                    "{op} {name} {}{:?} must be {}[{c}] (the C of x {dims:?})",
                    t.dtype(),
                    t.shape(),
                    x.dtype()
                );
            }
        }
    }
    let data = NormData {
        x: floats(x, "norm input x")?,
        gamma: floats(gamma, "gamma")?,
        beta: match beta {
            Some(b) => floats(b, "beta")?,
            None => try_filled(c, 0.0)?,
        },
        h: c,
    };
    Ok((n, c, s, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn gn(num_groups: u32, eps: f32) -> GroupNormAttrs {
        GroupNormAttrs { num_groups, eps }
    }
    fn close(got: &[f32], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((*g as f64 - w).abs() < 1e-6, "element {i}: {g} vs {w}");
        }
    }

    #[test]
    fn group_norm_two_groups_by_hand() {
        // x [1, 4, 2], 2 groups of 2 channels: group 0 = channels 0-1 = [1, 3, 5, 7] (μ 4, σ² 5),
        // group 1 = channels 2-3 = [0, 0, 2, 2] (μ 1, σ² 1).
        let x = t(&[1, 4, 2], &[1., 3., 5., 7., 0., 0., 2., 2.]);
        let g = t(&[4], &[1., 2., 1., -1.]);
        let b = t(&[4], &[0., 0., 0.5, 0.5]);
        let y = group_norm(&x, &g, Some(&b), &gn(2, 0.0)).unwrap().to_vec::<f32>().unwrap();
        let r5 = 5f64.sqrt();
        let want = [-3.0 / r5, -1.0 / r5, 2.0 / r5, 6.0 / r5, -0.5, -0.5, -0.5, -0.5];
        close(&y, &want);
        // eps enters under the root: σ² + eps
        let y = group_norm(&x, &g, None, &gn(2, 1.0)).unwrap().to_vec::<f32>().unwrap();
        let r = 6f64.sqrt();
        close(&y[..2], &[-3.0 / r, -1.0 / r]);
        close(&y[4..], &[-1.0 / 2f64.sqrt(), -1.0 / 2f64.sqrt(), -1.0 / 2f64.sqrt(), -1.0 / 2f64.sqrt()]);
    }

    #[test]
    fn group_norm_one_group_is_layer_norm_over_c_and_space() {
        // rank 2: spatial is empty (S = 1); one group of 3 channels per item
        let x = t(&[2, 3], &[1., 2., 3., 10., 10., 10.]);
        let g = t(&[3], &[1., 1., 1.]);
        let b = t(&[3], &[0.25, 0.5, 0.75]);
        let y = group_norm(&x, &g, Some(&b), &gn(1, 1e-5)).unwrap().to_vec::<f32>().unwrap();
        let s = (2.0f64 / 3.0 + 1e-5f32 as f64).sqrt();
        close(&y[..3], &[-1.0 / s + 0.25, 0.5, 1.0 / s + 0.75]);
        // the constant item gives beta
        assert_eq!(&y[3..], [0.25, 0.5, 0.75]);
    }

    #[test]
    fn group_norm_edge_cases() {
        // G = C with no spatial extent: every group is one element; eps = 0 gives NaN
        let x = t(&[1, 2], &[3., 4.]);
        let g = t(&[2], &[1., 1.]);
        let y = group_norm(&x, &g, None, &gn(2, 0.0)).unwrap().to_vec::<f32>().unwrap();
        assert!(y.iter().all(|v| v.is_nan()));
        let y = group_norm(&x, &g, None, &gn(2, 1e-5)).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(y, [0.0, 0.0]);
        // empty N and empty spatial extents
        assert_eq!(group_norm(&t(&[0, 2, 3], &[]), &g, None, &gn(1, 1e-5)).unwrap().shape(), &[0, 2, 3]);
        assert_eq!(group_norm(&t(&[2, 2, 0], &[]), &g, None, &gn(2, 1e-5)).unwrap().shape(), &[2, 2, 0]);
        // C not divisible by G, G = 0, gamma of the wrong size, rank 1
        assert!(group_norm(&x, &g, None, &gn(3, 1e-5)).is_err());
        assert!(group_norm(&x, &g, None, &gn(0, 1e-5)).is_err());
        assert!(group_norm(&x, &t(&[3], &[1., 1., 1.]), None, &gn(1, 1e-5)).is_err());
        assert!(group_norm(&t(&[2], &[1., 2.]), &g, None, &gn(1, 1e-5)).is_err());
    }

    #[test]
    fn layer_norm_2d_by_hand() {
        // x [1, 2, 3]: positions s = 0, 1, 2 see channel pairs (1, 3), (2, 2), (0, 4)
        let x = t(&[1, 2, 3], &[1., 2., 0., 3., 2., 4.]);
        let g = t(&[2], &[1., 2.]);
        let b = t(&[2], &[0.5, -0.5]);
        let y = layer_norm_2d(&x, &g, Some(&b), &LayerNorm2dAttrs { eps: 0.0 }).unwrap().to_vec::<f32>().unwrap();
        // (1, 3): μ 2, σ 1 → (-1, 1); (2, 2): NaN (eps 0, constant); (0, 4): μ 2, σ 2 → (-1, 1)
        close(&[y[0], y[3], y[2], y[5]], &[-1.0 + 0.5, 2.0 - 0.5, -1.0 + 0.5, 2.0 - 0.5]);
        assert!(y[1].is_nan() && y[4].is_nan());
    }

    #[test]
    fn layer_norm_2d_edge_cases() {
        // C = 1 gives beta when eps > 0
        let x = t(&[2, 1, 2], &[5., -7., 1e6, 0.]);
        let (g, b) = (t(&[1], &[3.]), t(&[1], &[0.25]));
        let y = layer_norm_2d(&x, &g, Some(&b), &LayerNorm2dAttrs { eps: 1e-6 }).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(y, [0.25; 4]);
        let e = layer_norm_2d(&t(&[0, 1, 4], &[]), &g, None, &LayerNorm2dAttrs::default()).unwrap();
        assert_eq!(e.shape(), &[0, 1, 4]);
        assert!(layer_norm_2d(&x, &t(&[2], &[1., 1.]), None, &LayerNorm2dAttrs::default()).is_err());
    }

    #[test]
    fn half_dtypes_round_once() {
        let h = |v: f32| f16::from_f32(v);
        let x = Tensor::from_slice(&[1, 2, 1], &[h(1.0), h(3.0)]).unwrap();
        let g = Tensor::from_slice(&[2], &[h(1.0), h(1.0)]).unwrap();
        let y = layer_norm_2d(&x, &g, None, &LayerNorm2dAttrs { eps: 0.0 }).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(y, [h(-1.0), h(1.0)]);
        let xb = Tensor::from_slice(&[1, 2], &[bf16::from_f32(2.0), bf16::from_f32(4.0)]).unwrap();
        let gb = Tensor::from_slice(&[2], &[bf16::ONE, bf16::ONE]).unwrap();
        let y = group_norm(&xb, &gb, None, &gn(1, 0.0)).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!(y, [bf16::from_f32(-1.0), bf16::from_f32(1.0)]);
    }
}
