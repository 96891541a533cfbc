//! Im2Col (§2.9.4): unfolds the sliding windows of `x = [N, C, *in]` into `[N, C·Πk, L]`, PyTorch
//! `unfold` layout. Elements are copied as bytes (every dtype); window points in the padding give
//! zero bytes, which is the value 0 of every dtype (false for Bool, 0 + 0i for C64).

use super::window::Window;
use crate::layout::{count, gather, offset, strides};
use backend_api::op::Im2ColAttrs;
use backend_api::{bail, Result, Tensor};

/// `out[n, c·Πk + flat(κ), flat(o)] = X(n, c, o·stride + κ·dilation − pads_begin)`.
pub fn im2col(x: &Tensor, a: &Im2ColAttrs) -> Result<Tensor> {
    let xd = x.shape();
    let w = Window::new("Im2Col", xd, [&a.kernel, &a.stride, &a.dilation, &a.pads_begin, &a.pads_end])?;
    let grid = w.out_dims(false)?;
    let kvol = count(&a.kernel)?;
    let Some(rows) = xd[1].checked_mul(kvol) else { bail!(Shape, "Im2Col rows C·Πk of x {xd:?} overflow") };
    let out_shape = [xd[0], rows, count(&grid)?];
    let (xst, kst, gst) = (strides(xd)?, strides(&a.kernel)?, strides(&grid)?);
    let zero = vec![0u8; x.dtype().size()];
    gather(x, &out_shape, Some(&zero), |o| {
        let (c, flat_k) = (o[1] / kvol, o[1] % kvol);
        let k = unflatten(flat_k, &a.kernel, &kst);
        let pos = unflatten(o[2], &grid, &gst);
        let sp = w.inside(&w.point(&pos, &k))?;
        let idx: Vec<usize> = [o[0], c].into_iter().chain(sp).collect();
        Some(offset(&idx, &xst))
    })
}

/// The multi-index of row-major position `i` in `dims` (with strides `st`).
fn unflatten(i: usize, dims: &[usize], st: &[usize]) -> Vec<usize> {
    dims.iter().zip(st).map(|(&d, &s)| i.checked_div(s).map_or(0, |q| q % d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfolds_a_padded_2d_input() {
        // 1×1×2×3 input, 2×2 kernel, pads 1 before on H only: grid ⌊(2+1−2)/1⌋+1 = 2 by 2.
        let x = Tensor::from_slice(&[1, 1, 2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
        let mut a = Im2ColAttrs::new(&[2, 2]);
        a.pads_begin = vec![1, 0];
        let y = im2col(&x, &a).unwrap();
        assert_eq!(y.shape(), &[1, 4, 4]);
        // Rows κ = (0,0), (0,1), (1,0), (1,1); columns o = (0,0), (0,1), (1,0), (1,1). Row κ_h = 0
        // of output row 0 reads input row −1 (padding).
        let want = [0, 0, 1, 2, 0, 0, 2, 3, 1, 2, 4, 5, 2, 3, 5, 6];
        assert_eq!(y.to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn strided_dilated_1d_with_channels() {
        // in 5, k 2, dilation 2, stride 2, pads_end 1: extent 3, grid ⌊(5+1−3)/2⌋+1 = 2.
        let x = Tensor::from_slice(&[1, 2, 5], &[1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
        let mut a = Im2ColAttrs::new(&[2]);
        a.stride = vec![2];
        a.dilation = vec![2];
        a.pads_end = vec![1];
        let y = im2col(&x, &a).unwrap();
        assert_eq!(y.shape(), &[1, 4, 2]);
        // Channel 0: κ 0 reads 0, 2; κ 1 reads 2, 4. Channel 1 likewise shifted by 5.
        assert_eq!(y.to_vec::<u8>().unwrap(), [1, 3, 3, 5, 6, 8, 8, 10]);
        let e = Tensor::from_slice::<f32>(&[2, 0, 5], &[]).unwrap();
        assert_eq!(im2col(&e, &a).unwrap().shape(), &[2, 0, 2]);
        assert!(im2col(&x, &Im2ColAttrs::new(&[7])).is_err());
    }
}
