//! Generator for `Im2Col` (§2.9.4): the window attributes of the Pool generator (1 to 3 spatial
//! dims, strides, dilations, asymmetric pads up to `ke − 1`, windows over the edge, empty `N` or
//! `C`), every dtype with any value (the op copies elements, so specials and subnormals pass
//! through unchanged). Inputs shrink until the unfolded output stays small.

use super::pool::{shrink, window_case, MAX_INPUT};
use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::MAX_NUMEL;
use crate::values::any_tensor;
use backend_api::op::Im2ColAttrs;
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `Im2Col`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if row != "Im2Col" {
        return None;
    }
    per_dtype(row, |dtype| skeleton(3..=5, MAX_INPUT, 1).prop_map(move |sk| im2col_case(dtype, &sk)).boxed())
}

/// Elements of the unfolded output `N·C·Πk·L`, counting zero dims as 1.
fn unfolded(x: &[usize], a: &Im2ColAttrs) -> usize {
    let mut n = x[0].max(1) * x[1].max(1);
    for d in 0..a.kernel.len() {
        let ke = a.dilation[d] * (a.kernel[d] - 1) + 1;
        let grid = (x[2 + d] + a.pads_begin[d] + a.pads_end[d]).saturating_sub(ke) / a.stride[d] + 1;
        n = n.saturating_mul(a.kernel[d]).saturating_mul(grid);
    }
    n
}

fn im2col_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let mut c = window_case(&mut rng, sk);
    let a = Im2ColAttrs {
        kernel: c.kernel.clone(),
        stride: c.stride.clone(),
        dilation: c.dilation.clone(),
        pads_begin: c.pads_begin.clone(),
        pads_end: c.pads_end.clone(),
    };
    shrink(&mut c, |c| unfolded(&c.x, &a) <= MAX_NUMEL / 4);
    let x = any_tensor(&mut rng, dtype, &c.x, sk.rate, true)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = pb.g().im2col(x, &a)?;
    pb.finish(&[y])
}
