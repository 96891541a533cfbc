//! Generators for `Pool.Max` and `Pool.Avg` (§2.9.3): 1 to 3 spatial dims, kernels 1 to 4 (now and
//! then 7), strides 1 to 3, dilations 1 to 3, asymmetric pads up to `ke − 1`, `ceil_mode` and
//! `count_include_pad` both ways, windows hanging over the edge or (with dilation and padding)
//! holding no inside point, spatial dims as short as the padding allows (even 0), empty `N` or `C`.
//! Max takes any value of every numeric dtype (NaN, ±∞, integer extremes); Avg takes moderate
//! floats with the IEEE specials, so the f64 reference and an f32 sum agree to Approx.

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::numel;
use crate::values::{any_tensor, FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{PoolAttrs, PoolKind};
use proptest::prelude::*;

/// Elements of a generated input at most: every output reads up to Πk of them, and the slow
/// software-Vulkan CI runs each case.
pub(crate) const MAX_INPUT: usize = 6_000;

/// Variants for `Pool.Max` and `Pool.Avg`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let kind = match row {
        "Pool.Max" => PoolKind::Max,
        "Pool.Avg" => PoolKind::Avg,
        _ => return None,
    };
    per_dtype(row, move |dtype| skeleton(3..=5, MAX_INPUT, 1).prop_map(move |sk| pool_case(kind, dtype, &sk)).boxed())
}

/// The per-dim attributes of one windowed case and the input shape they fit.
pub(crate) struct WindowCase {
    /// `[N, C, *in]`.
    pub x: Vec<usize>,
    /// Kernel size per spatial dim.
    pub kernel: Vec<usize>,
    /// Stride.
    pub stride: Vec<usize>,
    /// Dilation.
    pub dilation: Vec<usize>,
    /// Padding before (`< ke`).
    pub pads_begin: Vec<usize>,
    /// Padding after (`< ke`).
    pub pads_end: Vec<usize>,
}

/// Draws window attributes for the skeleton's shape: `N`, `C` as drawn (maybe 0), spatial dims
/// shrunk into a few tens and grown where the padded input would be shorter than a window.
pub(crate) fn window_case(rng: &mut Rng, sk: &Skeleton) -> WindowCase {
    let s = sk.shape.len() - 2;
    let mut c = WindowCase {
        x: sk.shape.clone(),
        kernel: vec![],
        stride: vec![],
        dilation: vec![],
        pads_begin: vec![],
        pads_end: vec![],
    };
    for d in 0..s {
        let k = if rng.chance(0.1) { 7 } else { 1 + rng.below(4) };
        let dil = if rng.chance(0.6) { 1 } else { 2 + rng.below(2) };
        let ke = dil * (k - 1) + 1;
        let (pb, pe) = if rng.chance(0.4) { (0, 0) } else { (rng.below(ke), rng.below(ke)) };
        // Spatial dims of the skeleton are up to 257: keep windows a fair share of the input.
        let mut n = c.x[2 + d].min(8 + rng.below(24));
        if n + pb + pe < ke {
            n = ke - pb - pe;
        }
        c.x[2 + d] = n;
        c.kernel.push(k);
        c.stride.push(1 + rng.below(3));
        c.dilation.push(dil);
        c.pads_begin.push(pb);
        c.pads_end.push(pe);
    }
    shrink(&mut c, |c| numel(&c.x) <= MAX_INPUT);
    c
}

/// Halves `N·C` (keeping zeros), then the longest spatial dim (never below what one window needs),
/// until `small` holds or nothing can shrink.
pub(crate) fn shrink(c: &mut WindowCase, small: impl Fn(&WindowCase) -> bool) {
    while !small(c) {
        if c.x[0] * c.x[1] > 1 {
            let i = usize::from(c.x[1] > c.x[0]);
            c.x[i] = (c.x[i] / 2).max(1);
            continue;
        }
        let s = c.x.len() - 2;
        let Some(d) = (0..s).max_by_key(|&d| c.x[2 + d]) else { return };
        let ke = c.dilation[d] * (c.kernel[d] - 1) + 1;
        let floor = ke.saturating_sub(c.pads_begin[d] + c.pads_end[d]);
        if c.x[2 + d] == 0 || c.x[2 + d] / 2 < floor {
            return;
        }
        c.x[2 + d] /= 2;
    }
}

fn pool_case(kind: PoolKind, dtype: backend_api::DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let c = window_case(&mut rng, sk);
    let a = PoolAttrs {
        kind,
        kernel: c.kernel,
        stride: c.stride,
        dilation: c.dilation,
        pads_begin: c.pads_begin,
        pads_end: c.pads_end,
        ceil_mode: rng.chance(0.5),
        count_include_pad: rng.chance(0.5),
    };
    let x = match kind {
        PoolKind::Max => any_tensor(&mut rng, dtype, &c.x, sk.rate, true)?,
        PoolKind::Avg => {
            Values::floats(FloatDomain::new(&[Piece::Uniform(-10.0, 10.0), Piece::Ints(3)], IEEE_SPECIALS))
                .tensor(&mut rng, dtype, &c.x, sk.rate)?
        }
    };
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = pb.g().pool(x, &a)?;
    pb.finish(&[y])
}
