//! Rope and RopeBackward (§2.8.3–2.8.4): the rotary position embedding of every head of `x` and
//! its transpose, computed in f64 from the spec's formulas and rounded once into `x`'s dtype.
//!
//! `x` is viewed as `[pre, S, mid, heads, D]` around the position axis (`pre` the dims before
//! it, `mid` those between it and the last); a table row is `pos` (the `[S, R/2]` form) or
//! `p[0]·S + pos` (the `[x.shape[0], S, R/2]` form). Indexing is in range by construction: every
//! offset is built from the shapes checked in [`operands`].

use crate::layout::count;
use crate::mem::try_filled;
use crate::value::{floats, from_floats};
use backend_api::op::{RopeAttrs, RopeStyle};
use backend_api::{bail, DType, Result, Tensor};

/// `Rope` of `x` with tables `cos`, `sin` (§2.8.3).
pub fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor, a: &RopeAttrs) -> Result<Tensor> {
    rotate(x, cos, sin, a, false)
}

/// `RopeBackward` of `dy` with tables `cos`, `sin` (§2.8.4): the transpose rotation.
pub fn rope_backward(dy: &Tensor, cos: &Tensor, sin: &Tensor, a: &RopeAttrs) -> Result<Tensor> {
    rotate(dy, cos, sin, a, true)
}

/// The sizes of one problem: `x` as `[pre, s, mid, heads·d]`, the table rows and `r = R/2`.
struct Sizes {
    pre: usize,
    s: usize,
    mid: usize,
    last: usize,
    d: usize,
    r: usize,
    /// The per-batch table form: `pre` splits into `x.shape[0]` blocks of `per_b` each.
    per_batch: bool,
    per_b: usize,
}

/// Checks the attributes and shapes (as the spec's errors say) and returns the sizes.
fn operands(x: &Tensor, cos: &Tensor, sin: &Tensor, a: &RopeAttrs, op: &str) -> Result<Sizes> {
    let dims = x.shape();
    let rank = dims.len();
    if !matches!(x.dtype(), DType::F32 | DType::F16 | DType::BF16) {
        bail!(DType, "{op} x must be F32, F16 or BF16, got {}{dims:?}", x.dtype());
    }
    if a.head_dim < 2 || !a.rotary_dim.is_multiple_of(2) || a.rotary_dim > a.head_dim {
        bail!(Attribute, "{op} head_dim {} must be >= 2 and rotary_dim {} even and <= it", a.head_dim, a.rotary_dim);
    }
    if rank < 2 || a.seq_axis + 1 >= rank {
        bail!(Axis, "{op} seq_axis {} must be an axis of {dims:?} other than the last", a.seq_axis);
    }
    let (d, r) = (a.head_dim as usize, a.rotary_dim as usize / 2);
    let (Some(&s), Some(&last)) = (dims.get(a.seq_axis), dims.last()) else {
        bail!(Axis, "{op} seq_axis {} out of range for {dims:?}", a.seq_axis)
    };
    if last % d != 0 {
        bail!(Shape, "{op} x {dims:?}: last dim {last} is not a multiple of head_dim {d}");
    }
    for t in [cos, sin] {
        if t.dtype() != x.dtype() && t.dtype() != DType::F32 || t.dtype() != cos.dtype() {
            bail!(DType, "{op} cos {} and sin {} must both be {} or F32", cos.dtype(), sin.dtype(), x.dtype());
        }
    }
    let two = [s, r];
    let three = [dims[0], s, r];
    let per_batch = match cos.shape() {
        t if t == two && sin.shape() == two => false,
        t if t == three && sin.shape() == three && a.seq_axis >= 1 => true,
        _ => bail!(
            Shape,
            "{op} cos {:?} and sin {:?} must both be {two:?} or {three:?} (seq_axis >= 1) for x {dims:?}",
            cos.shape(),
            sin.shape()
        ),
    };
    Ok(Sizes {
        pre: count(&dims[..a.seq_axis])?,
        s,
        mid: count(&dims[a.seq_axis + 1..rank - 1])?,
        last,
        d,
        r,
        per_batch,
        per_b: count(&dims[1..a.seq_axis.max(1)])?,
    })
}

/// The rotation (`transpose` false, Rope) or its transpose (true, RopeBackward) of every head.
fn rotate(x: &Tensor, cos: &Tensor, sin: &Tensor, a: &RopeAttrs, transpose: bool) -> Result<Tensor> {
    let op = if transpose { "RopeBackward" } else { "Rope" };
    let z = operands(x, cos, sin, a, op)?;
    let v = floats(x, &format!("{op} x"))?;
    if v.is_empty() {
        return from_floats(x.dtype(), x.shape(), &v);
    }
    let (c, s) = (floats(cos, &format!("{op} cos"))?, floats(sin, &format!("{op} sin"))?);
    let mut y = try_filled(v.len(), 0.0)?;
    for p in 0..z.pre {
        let batch = if z.per_batch { p / z.per_b.max(1) } else { 0 };
        for pos in 0..z.s {
            let t = (batch * z.s + pos) * z.r;
            let (c, s) = (&c[t..t + z.r], &s[t..t + z.r]);
            for m in 0..z.mid {
                let row = ((p * z.s + pos) * z.mid + m) * z.last;
                let heads = v[row..row + z.last].chunks_exact(z.d).zip(y[row..row + z.last].chunks_exact_mut(z.d));
                for (xh, yh) in heads {
                    head(xh, yh, c, s, a.style, transpose);
                }
            }
        }
    }
    from_floats(x.dtype(), x.shape(), &y)
}

/// One head: `y` from `x` (both `D` long) with the table row `c`, `s` (`R/2` long each).
fn head(x: &[f64], y: &mut [f64], c: &[f64], s: &[f64], style: RopeStyle, transpose: bool) {
    let r = c.len();
    // The transpose flips the sign of every sine term (§2.8.4).
    let sg = if transpose { -1.0 } else { 1.0 };
    for (u, out) in y.iter_mut().enumerate() {
        *out = if u >= 2 * r {
            x[u]
        } else {
            match style {
                RopeStyle::NeoX if u < r => x[u] * c[u] - sg * x[u + r] * s[u],
                RopeStyle::NeoX => x[u] * c[u - r] + sg * x[u - r] * s[u - r],
                RopeStyle::GptJ if u % 2 == 0 => x[u] * c[u / 2] - sg * x[u + 1] * s[u / 2],
                RopeStyle::GptJ => x[u] * c[u / 2] + sg * x[u - 1] * s[u / 2],
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn attrs(d: u32, r: u32, style: RopeStyle, seq_axis: usize) -> RopeAttrs {
        RopeAttrs { head_dim: d, rotary_dim: r, style, seq_axis }
    }
    fn vals(x: Tensor) -> Vec<f32> {
        x.to_vec::<f32>().unwrap()
    }
    /// A deterministic pseudo-random sequence in [-1, 1).
    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut z = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                z ^= z << 13;
                z ^= z >> 7;
                z ^= z << 17;
                (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    #[test]
    fn quarter_turn_by_hand_both_styles() {
        // One position, D = 4, R = 4: cos = 0, sin = 1 turns each pair (a, b) into (−b, a).
        let x = t(&[1, 4], &[1., 2., 3., 4.]);
        let (c, s) = (t(&[1, 2], &[0., 0.]), t(&[1, 2], &[1., 1.]));
        // NeoX pairs (0, 2) and (1, 3).
        assert_eq!(vals(rope(&x, &c, &s, &attrs(4, 4, RopeStyle::NeoX, 0)).unwrap()), [-3., -4., 1., 2.]);
        // GptJ pairs (0, 1) and (2, 3).
        assert_eq!(vals(rope(&x, &c, &s, &attrs(4, 4, RopeStyle::GptJ, 0)).unwrap()), [-2., 1., -4., 3.]);
        // The transpose turns the other way.
        assert_eq!(vals(rope_backward(&x, &c, &s, &attrs(4, 4, RopeStyle::NeoX, 0)).unwrap()), [3., 4., -1., -2.]);
        assert_eq!(vals(rope_backward(&x, &c, &s, &attrs(4, 4, RopeStyle::GptJ, 0)).unwrap()), [2., -1., 4., -3.]);
    }

    #[test]
    fn partial_rotation_and_positions_by_hand() {
        // x [S = 2, 2 heads of D = 3], R = 2: pair (0, 1) rotates, offset 2 passes through.
        let x = t(&[2, 6], &[1., 2., 3., 4., 5., 6., 1., 2., 3., 4., 5., 6.]);
        let (c, s) = (t(&[2, 1], &[1., 0.5]), t(&[2, 1], &[0., 2.]));
        let y = vals(rope(&x, &c, &s, &attrs(3, 2, RopeStyle::NeoX, 0)).unwrap());
        // position 0: identity; position 1: (a c − b s, b c + a s) with c = 0.5, s = 2
        assert_eq!(&y[..6], [1., 2., 3., 4., 5., 6.]);
        assert_eq!(&y[6..], [0.5 - 4., 1. + 2., 3., 2. - 10., 2.5 + 8., 6.]);
        // R = 0: identity whatever the (empty) tables.
        let (c0, s0) = (t(&[2, 0], &[]), t(&[2, 0], &[]));
        assert_eq!(vals(rope(&x, &c0, &s0, &attrs(3, 0, RopeStyle::GptJ, 0)).unwrap()), vals(x));
    }

    #[test]
    fn seq_axis_inner_and_per_batch_tables() {
        // x [B = 2, S = 2, H = 2, D = 2] with seq_axis 1: the head axis lies between S and D.
        let x = t(&[2, 2, 2, 2], &[1.; 16]);
        // per batch b and position p: cos = 0, sin = (b + 1)·(p + 1)
        let c = t(&[2, 2, 1], &[0.; 4]);
        let s = t(&[2, 2, 1], &[1., 2., 3., 4.]);
        let y = vals(rope(&x, &c, &s, &attrs(2, 2, RopeStyle::NeoX, 1)).unwrap());
        let want: Vec<f32> = [1f32, 2., 3., 4.].iter().flat_map(|&k| [-k, k, -k, k]).collect();
        assert_eq!(y, want);
        // The same x with a shared [S, 1] table and seq_axis 2 (positions along the head axis).
        let s2 = t(&[2, 1], &[1., 2.]);
        let c2 = t(&[2, 1], &[0., 0.]);
        let y = vals(rope(&x, &c2, &s2, &attrs(2, 2, RopeStyle::NeoX, 2)).unwrap());
        let want: Vec<f32> = (0..4).flat_map(|_| [-1f32, 1., -2., 2.]).collect();
        assert_eq!(y, want);
    }

    #[test]
    fn backward_is_the_transpose_for_any_table() {
        // <Rope(x), g> = <x, RopeBackward(g)> for arbitrary (not unit) tables, both styles,
        // partial rotation, several heads and an inner axis.
        for (k, style) in [RopeStyle::NeoX, RopeStyle::GptJ].into_iter().enumerate() {
            let (dims, d, r) = ([2usize, 3, 2, 10], 5u32, 4u32);
            let n: usize = dims.iter().product();
            let x = t(&dims, &noise(n, 1 + k as u64));
            let g = t(&dims, &noise(n, 7 + k as u64));
            let c = t(&[2, 3, 2], &noise(12, 3));
            let s = t(&[2, 3, 2], &noise(12, 4));
            let a = attrs(d, r, style, 1);
            let dot = |p: &Tensor, q: &Tensor| -> f64 {
                vals(p.clone()).iter().zip(vals(q.clone())).map(|(a, b)| *a as f64 * b as f64).sum()
            };
            let lhs = dot(&rope(&x, &c, &s, &a).unwrap(), &g);
            let rhs = dot(&x, &rope_backward(&g, &c, &s, &a).unwrap());
            assert!((lhs - rhs).abs() < 1e-5, "{style:?}: {lhs} vs {rhs}");
        }
    }

    #[test]
    fn unit_tables_preserve_norms_and_invert() {
        let dims = [3usize, 8];
        let x = t(&dims, &noise(24, 11));
        let ang: Vec<f32> = (0..12).map(|i| 0.37 * i as f32).collect();
        let c = t(&[3, 4], &ang.iter().map(|a| a.cos()).collect::<Vec<_>>());
        let s = t(&[3, 4], &ang.iter().map(|a| a.sin()).collect::<Vec<_>>());
        for style in [RopeStyle::NeoX, RopeStyle::GptJ] {
            let a = attrs(8, 8, style, 0);
            let y = rope(&x, &c, &s, &a).unwrap();
            let back = vals(rope_backward(&y, &c, &s, &a).unwrap());
            for (p, q) in back.iter().zip(vals(x.clone())) {
                assert!((p - q).abs() < 1e-6, "{style:?}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn half_dtypes_tables_and_empty() {
        let x = Tensor::from_slice(&[1, 2], &[f16::from_f32(1.0), f16::from_f32(3.0)]).unwrap();
        let (c, s) = (t(&[1, 1], &[0.5]), t(&[1, 1], &[0.25]));
        let y = rope(&x, &c, &s, &attrs(2, 2, RopeStyle::NeoX, 0)).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(y, [f16::from_f64(0.5 - 0.75), f16::from_f64(1.5 + 0.25)]);
        let xb = Tensor::from_slice(&[1, 2], &[bf16::ONE, bf16::ONE]).unwrap();
        let cb = Tensor::from_slice(&[1, 1], &[bf16::ONE]).unwrap();
        let y = rope(&xb, &cb, &cb, &attrs(2, 2, RopeStyle::GptJ, 0)).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!(y, [bf16::ZERO, bf16::from_f32(2.0)]);
        let e = rope(&t(&[0, 4], &[]), &t(&[0, 2], &[]), &t(&[0, 2], &[]), &attrs(4, 4, RopeStyle::NeoX, 0)).unwrap();
        assert_eq!(e.shape(), &[0, 4]);
    }

    #[test]
    fn bad_operands_are_errors() {
        let x = t(&[2, 4], &[0.; 8]);
        let (c, s) = (t(&[2, 2], &[0.; 4]), t(&[2, 2], &[0.; 4]));
        let kind = |r: Result<Tensor>| r.unwrap_err().kind();
        use backend_api::ErrorKind;
        assert_eq!(kind(rope(&x, &c, &s, &attrs(4, 3, RopeStyle::NeoX, 0))), ErrorKind::Attribute);
        assert_eq!(kind(rope(&x, &c, &s, &attrs(3, 2, RopeStyle::NeoX, 0))), ErrorKind::Shape);
        assert_eq!(kind(rope(&x, &c, &s, &attrs(4, 4, RopeStyle::NeoX, 1))), ErrorKind::Axis);
        assert_eq!(kind(rope(&x, &c, &t(&[2, 1], &[0.; 2]), &attrs(4, 4, RopeStyle::NeoX, 0))), ErrorKind::Shape);
        let ch = Tensor::from_slice(&[2, 2], &[f16::ZERO; 4]).unwrap();
        assert_eq!(kind(rope(&x, &ch, &ch, &attrs(4, 4, RopeStyle::NeoX, 0))), ErrorKind::DType);
    }
}
