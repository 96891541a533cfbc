//! Generators of the convolution family (§2.9): `Pool.Max`/`Pool.Avg` in [`pool`], `Im2Col` in
//! [`im2col`], and here `ResizeNearest` (§2.9.5): 1 to 3 spatial dims, every factor from 1 to 3
//! per dim (all ones: a copy), empty spatial dims and batches, any dtype with any values (the op
//! copies elements, so specials and subnormals pass through unchanged).

pub mod im2col;
pub mod pool;

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{numel, MAX_NUMEL};
use crate::values::any_tensor;
use backend_api::DType;
use proptest::prelude::*;

// Conv (§2.9.1) and ConvTranspose (§2.9.2); the family and its first op share the name `conv`.
#[allow(clippy::module_inception)]
mod conv;
mod transpose;

/// Variants for `ResizeNearest`, `Pool.Max`, `Pool.Avg`, `Im2Col` (in `pool.rs`, `im2col.rs`), and for `Conv` and `ConvTranspose` (in `conv.rs`, `transpose.rs`).
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if let Some(v) = conv::variants(row).or_else(|| transpose::variants(row)) {
        return Some(v);
    }
    if row != "ResizeNearest" {
        return pool::variants(row).or_else(|| im2col::variants(row));
    }
    per_dtype(row, |dtype| skeleton(3..=5, MAX_NUMEL / 8, 1).prop_map(move |sk| resize_case(dtype, &sk)).boxed())
}

fn resize_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let scales: Vec<u32> = (2..sk.shape.len()).map(|_| 1 + rng.below(3) as u32).collect();
    let mut x = sk.shape.clone();
    while numel(&x) * scales.iter().map(|&s| s as usize).product::<usize>() > MAX_NUMEL / 2 {
        if let Some(d) = x.iter_mut().max() {
            *d /= 2;
        }
    }
    let t = any_tensor(&mut rng, dtype, &x, sk.rate, true)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), t)?;
    let y = pb.g().resize_nearest(x, &scales)?;
    pb.finish(&[y])
}
