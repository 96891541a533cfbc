//! Pool (§2.9.3): max or average over sliding windows of `x = [N, C, *in]`. Max is exact for every
//! numeric dtype (NaN propagating; a window with no inside point gives −∞ or the dtype minimum).
//! Avg sums the inside points in f64 and divides by the `count_include_pad` divisor, rounding once.

use super::window::Window;
use crate::layout::{count, for_each_index, offset, strides};
use crate::ops::math;
use crate::value::{from_scalars, int_bounds, scalars, Scalar};
use backend_api::op::{PoolAttrs, PoolKind};
use backend_api::{bail, DTypeSet, Result, Tensor};

/// `Pool` of `x` with attributes `a` (lists already expanded to one entry per spatial dim).
pub fn pool(x: &Tensor, a: &PoolAttrs) -> Result<Tensor> {
    let (dt, xd) = (x.dtype(), x.shape());
    let allowed = match a.kind {
        PoolKind::Max => DTypeSet::NUMERIC,
        PoolKind::Avg => DTypeSet::FLOAT,
    };
    if !allowed.contains(dt) {
        bail!(DType, "Pool.{:?} is not defined for {dt} (x {xd:?})", a.kind);
    }
    let w = Window::new("Pool", xd, [&a.kernel, &a.stride, &a.dilation, &a.pads_begin, &a.pads_end])?;
    for d in 0..w.input.len() {
        let (pb, pe, ke) = (a.pads_begin[d] as i128, a.pads_end[d] as i128, w.extent(d));
        if pb >= ke || pe >= ke {
            bail!(Attribute, "Pool pads ({pb}, {pe}) of spatial dim {d} must be < the kernel extent {ke}");
        }
    }
    let out_sp = w.out_dims(a.ceil_mode)?;
    let out_shape: Vec<usize> = xd[..2].iter().copied().chain(out_sp.iter().copied()).collect();
    let xs = scalars(x)?;
    let xst = strides(xd)?;
    let mut out = Vec::with_capacity(count(&out_shape)?);
    for_each_index(&out_shape, |o| {
        let mut window = Vec::new();
        let mut extent = 0usize;
        for_each_index(&w.kernel, |k| {
            let p = w.point(&o[2..], k);
            extent += usize::from(w.in_extent(&p));
            if let Some(sp) = w.inside(&p) {
                let idx: Vec<usize> = o[..2].iter().copied().chain(sp).collect();
                match xs.get(offset(&idx, &xst)) {
                    Some(&v) => window.push(v),
                    None => bail!(Shape, "Pool index {idx:?} outside x {xd:?}"),
                }
            }
            Ok(())
        })?;
        out.push(match a.kind {
            PoolKind::Max => max_of(&window, dt)?,
            PoolKind::Avg => avg_of(&window, if a.count_include_pad { extent } else { window.len() })?,
        });
        Ok(())
    })?;
    from_scalars(dt, &out_shape, &out)
}

/// The NaN-propagating maximum of `v`; −∞ (floats) or the dtype minimum (integers) when empty.
fn max_of(v: &[Scalar], dt: backend_api::DType) -> Result<Scalar> {
    let empty = if dt.is_float() { Scalar::F(f64::NEG_INFINITY) } else { Scalar::I(int_bounds(dt).0) };
    v.iter().try_fold(empty, |acc, &b| {
        Ok(match (acc, b) {
            (Scalar::F(x), Scalar::F(y)) => Scalar::F(math::max(x, y)),
            (Scalar::I(x), Scalar::I(y)) => Scalar::I(x.max(y)),
            _ => bail!(DType, "Pool.Max is not defined for {dt}"),
        })
    })
}

/// `Σ v / divisor` in f64; 0 when the divisor is 0.
fn avg_of(v: &[Scalar], divisor: usize) -> Result<Scalar> {
    let mut sum = 0.0f64;
    for &s in v {
        match s {
            Scalar::F(x) => sum += x,
            _ => bail!(DType, "Pool.Avg needs a float input"),
        }
    }
    Ok(Scalar::F(if divisor == 0 { 0.0 } else { sum / divisor as f64 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::DType;

    fn attrs(kind: PoolKind, k: &[usize], s: &[usize]) -> PoolAttrs {
        PoolAttrs::new(kind, k, s)
    }

    fn run_f32(x: &[f32], shape: &[usize], a: &PoolAttrs) -> (Vec<usize>, Vec<f32>) {
        let y = pool(&Tensor::from_slice(shape, x).unwrap(), a).unwrap();
        (y.shape().to_vec(), y.to_vec::<f32>().unwrap())
    }

    #[test]
    fn max_2d_with_padding_and_nan() {
        // 3×3 input, 2×2 kernel, stride 1, pads 1 before: windows hang over the top-left.
        let x = [1., 2., 3., 4., f32::NAN, 6., 7., 8., 9.];
        let mut a = attrs(PoolKind::Max, &[2, 2], &[2, 2]);
        a.pads_begin = vec![1, 1];
        let (s, y) = run_f32(&x, &[1, 1, 3, 3], &a);
        // out = ⌊(3 + 1 − 2) / 2⌋ + 1 = 2 per dim; window (1,1) covers x[1..3, 1..3] with the NaN.
        assert_eq!(s, [1, 1, 2, 2]);
        assert_eq!(y[..3], [1., 3., 7.]);
        assert!(y[3].is_nan());
    }

    #[test]
    fn ceil_mode_overhang_and_avg_divisors() {
        // in 5, k 2, s 2, ceil: 3 windows, the last is [4, 5] with 5 past the input and past the
        // padded extent (pads_end 0): count_include_pad counts only the point 4.
        let x = [1., 2., 3., 4., 5.];
        let mut a = attrs(PoolKind::Avg, &[2], &[2]);
        a.ceil_mode = true;
        assert_eq!(run_f32(&x, &[1, 1, 5], &a), (vec![1, 1, 3], vec![1.5, 3.5, 5.0]));
        // pads 1 both ends, k 3, s 2, ceil: in + 2 = 7, out = ⌈4/2⌉ + 1 = 3 windows starting at
        // −1, 1, 3: [−1, 0, 1], [1, 2, 3], [3, 4, 5] (5 is in the end padding).
        a = attrs(PoolKind::Avg, &[3], &[2]);
        a.pads_begin = vec![1];
        a.pads_end = vec![1];
        a.ceil_mode = true;
        assert_eq!(run_f32(&x, &[1, 1, 5], &a).1, [3. / 3., 9. / 3., 9. / 3.]);
        a.count_include_pad = false;
        assert_eq!(run_f32(&x, &[1, 1, 5], &a).1, [3. / 2., 9. / 3., 9. / 2.]);
        // pads_end 1, k 2, s 2, ceil on in 4: span 3, out ⌊4/2⌋+1 = 3, window 2 starts at 4 ≥ in + pb
        // and is dropped; the windows are [0, 1], [2, 3].
        let mut a = attrs(PoolKind::Avg, &[2], &[2]);
        a.pads_end = vec![1];
        a.ceil_mode = true;
        assert_eq!(run_f32(&x[..4], &[1, 1, 4], &a), (vec![1, 1, 2], vec![1.5, 3.5]));
        // Ceil past the padded extent: in 6, k 3, s 2, pads_end 1 → span 4, out ⌈4/2⌉+1 = 3;
        // window 2 = [4, 5, 6], 6 in the end padding, all counted: (5 + 6) / 3.
        let x6 = [1., 2., 3., 4., 5., 6.];
        let mut a = attrs(PoolKind::Avg, &[3], &[2]);
        a.pads_end = vec![1];
        a.ceil_mode = true;
        assert_eq!(run_f32(&x6, &[1, 1, 6], &a).1, [2., 4., 11. / 3.]);
        // k 2, s 2, in 7, ceil: 4 windows, the last [6, 7]. With pads_end 1 the point 7 is end
        // padding (divisor 2); without it (span 5: floor would give 3 windows) it lies beyond the
        // padded extent and is never counted (divisor 1).
        let x7 = [1., 2., 3., 4., 5., 6., 7.];
        let mut a = attrs(PoolKind::Avg, &[2], &[2]);
        a.pads_end = vec![1];
        a.ceil_mode = true;
        assert_eq!(run_f32(&x7, &[1, 1, 7], &a), (vec![1, 1, 4], vec![1.5, 3.5, 5.5, 3.5]));
        // Without end padding the point 7 lies beyond the padded extent: divisor 1.
        a.pads_end = vec![0];
        assert_eq!(run_f32(&x7, &[1, 1, 7], &a), (vec![1, 1, 4], vec![1.5, 3.5, 5.5, 7.0]));
    }

    #[test]
    fn dilated_windows_with_no_inside_point() {
        // k 2, dilation 3 (extent 4), pads 3 before, in 1: window 0 = points −3, 0; window 1 is
        // not made (out = ⌊(1 + 3 − 4)/1⌋ + 1 = 1). With pads_end 3 too: windows −3+o, o: o = 0..3.
        // Window 1 = points −2, 1 (1 is in the end padding): no inside point.
        let mut a = attrs(PoolKind::Max, &[2], &[1]);
        a.dilation = vec![3];
        a.pads_begin = vec![3];
        a.pads_end = vec![3];
        let (s, y) = run_f32(&[5.], &[1, 1, 1], &a);
        assert_eq!(s, [1, 1, 4]);
        assert_eq!(y, [5., f32::NEG_INFINITY, f32::NEG_INFINITY, 5.]);
        let xi = Tensor::from_slice(&[1, 1, 1], &[5i8]).unwrap();
        assert_eq!(pool(&xi, &a).unwrap().to_vec::<i8>().unwrap(), [5, i8::MIN, i8::MIN, 5]);
        let xu = Tensor::from_slice(&[1, 1, 1], &[5u32]).unwrap();
        assert_eq!(pool(&xu, &a).unwrap().to_vec::<u32>().unwrap(), [5, 0, 0, 5]);
        a.kind = PoolKind::Avg;
        assert_eq!(run_f32(&[5.], &[1, 1, 1], &a).1, [5. / 2., 0., 0., 5. / 2.]);
        a.count_include_pad = false;
        assert_eq!(run_f32(&[5.], &[1, 1, 1], &a).1, [5., 0., 0., 5.]);
    }

    #[test]
    fn three_spatial_dims_and_integers() {
        let v: Vec<i64> = (0..16).map(|i| if i == 5 { i64::MIN } else { i * 3 - 20 }).collect();
        let x = Tensor::from_slice(&[1, 2, 2, 2, 2], &v).unwrap();
        let y = pool(&x, &attrs(PoolKind::Max, &[2, 2, 2], &[1, 1, 1])).unwrap();
        assert_eq!(y.shape(), &[1, 2, 1, 1, 1]);
        assert_eq!(y.to_vec::<i64>().unwrap(), [7 * 3 - 20, 15 * 3 - 20]);
        let h = Tensor::from_slice(&[1, 1, 4], &[half::f16::from_f32(1.0); 4]).unwrap();
        let y = pool(&h, &attrs(PoolKind::Avg, &[3], &[1])).unwrap();
        assert_eq!((y.dtype(), y.shape()), (DType::F16, &[1, 1, 2][..]));
    }

    #[test]
    fn empty_batches_and_bad_attributes() {
        let e = Tensor::from_slice::<f32>(&[0, 3, 4], &[]).unwrap();
        assert_eq!(pool(&e, &attrs(PoolKind::Max, &[2], &[1])).unwrap().shape(), &[0, 3, 3]);
        let x = Tensor::from_slice(&[1, 1, 4], &[1f32; 4]).unwrap();
        let mut a = attrs(PoolKind::Max, &[2], &[1]);
        a.pads_begin = vec![2];
        assert_eq!(pool(&x, &a).unwrap_err().kind(), backend_api::ErrorKind::Attribute);
        let b = Tensor::from_slice(&[1, 1, 4], &[true; 4]).unwrap();
        assert_eq!(pool(&b, &attrs(PoolKind::Max, &[2], &[1])).unwrap_err().kind(), backend_api::ErrorKind::DType);
        let i = Tensor::from_slice(&[1, 1, 4], &[1i32; 4]).unwrap();
        assert_eq!(pool(&i, &attrs(PoolKind::Avg, &[2], &[1])).unwrap_err().kind(), backend_api::ErrorKind::DType);
        assert!(pool(&x, &attrs(PoolKind::Max, &[5], &[1])).is_err());
    }
}
