//! Convolution, pooling, unfolding and nearest resize (§2.9). ResizeNearest (§2.9.5),
//! nearest-neighbour upsampling by integer factors, an exact copy of input elements for every
//! dtype, is here; Pool (§2.9.3) in [`pool`], Im2Col (§2.9.4) in [`im2col`], both on the window
//! geometry of [`window`].

pub mod im2col;
pub mod pool;
mod window;

// Conv (§2.9.1) and ConvTranspose (§2.9.2); the family and its first op share the name `conv`.
#[allow(clippy::module_inception)]
mod conv;
#[cfg(test)]
mod conv_tests;
mod transpose;
pub use conv::conv;
pub use transpose::conv_transpose;

use crate::layout::{gather, offset, strides};
use backend_api::{bail, Result, Tensor};

/// `out[n, c, o] = x[n, c, o div scales]` per spatial dim.
pub fn resize_nearest(x: &Tensor, scales: &[u32]) -> Result<Tensor> {
    let xd = x.shape();
    if xd.len() != scales.len() + 2 || scales.contains(&0) {
        bail!(Attribute, "ResizeNearest scales {scales:?} do not fit x {:?} ([N, C, *spatial], factors >= 1)", xd);
    }
    let mut out = xd.to_vec();
    for (d, &s) in out[2..].iter_mut().zip(scales) {
        match d.checked_mul(s as usize) {
            Some(n) => *d = n,
            None => bail!(Shape, "ResizeNearest of {xd:?} by {scales:?} overflows"),
        }
    }
    let xs = strides(xd)?;
    gather(x, &out, None, |o| {
        let mut idx = o.to_vec();
        for (i, &s) in idx[2..].iter_mut().zip(scales) {
            *i /= s as usize;
        }
        Some(offset(&idx, &xs))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_each_element_by_its_factors() {
        let x = Tensor::from_slice(&[1, 1, 2, 2], &[1u8, 2, 3, 4]).unwrap();
        let y = resize_nearest(&x, &[2, 3]).unwrap();
        assert_eq!(y.shape(), &[1, 1, 4, 6]);
        let want = [1u8, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4];
        assert_eq!(y.to_vec::<u8>().unwrap(), want);
        let e = Tensor::from_slice::<f32>(&[2, 1, 0], &[]).unwrap();
        assert_eq!(resize_nearest(&e, &[3]).unwrap().shape(), &[2, 1, 0]);
        assert!(resize_nearest(&x, &[2]).is_err());
    }
}
