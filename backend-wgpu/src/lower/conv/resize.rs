//! ResizeNearest (§2.9.5): one kernel, one invocation per output element (`conv_resize.wgsl`),
//! copying raw element bits; 1- and 2-D problems run as 3-D ones with leading size-1 dims.
//! All-ones scales are a copy (the movement family's alias or copy).

use super::super::builder::{u32_of, Kernel, Lower, Operand};
use super::super::{movement, Grid};
use crate::pipelines::BindKind;
use backend_api::{ensure, Error, ErrorKind, Result};
use shaders::conv::resize::{module, ResizeParams};
use shaders::params::Params;

/// ResizeNearest of `x` (`[N, C, *in]`) by `scales` into `out` (`[N, C, in·scales]`).
pub fn resize_nearest(b: &mut Lower<'_>, scales: &[u32], x: &Operand, out: &Operand) -> Result<()> {
    ensure!(out.dtype == x.dtype, DType, "ResizeNearest of {} x cannot write a {} output", x.dtype, out.dtype);
    let r = x.dims.len();
    ensure!(
        (3..=5).contains(&r) && scales.len() == r - 2,
        Attribute,
        "ResizeNearest scales {scales:?} do not fit x {:?}",
        x.dims
    );
    ensure!(!scales.contains(&0), Attribute, "ResizeNearest scales {scales:?} entries must be >= 1");
    let want: Option<Vec<usize>> =
        (0..r).map(|d| if d < 2 { Some(x.dims[d]) } else { x.dims[d].checked_mul(scales[d - 2] as usize) }).collect();
    ensure!(
        want.as_ref() == Some(&out.dims),
        Shape,
        "ResizeNearest of x {:?} by {scales:?} cannot write {:?}",
        x.dims,
        out.dims
    );
    if out.numel() == 0 {
        return Ok(());
    }
    if scales.iter().all(|&s| s == 1) {
        return movement::copy(b, x, out);
    }
    u32_of(x.numel(), "input elements")?;
    let pad3 = |v: &[usize]| -> Result<[u32; 4]> {
        let mut a = [1u32; 4];
        for (slot, &d) in a[4 - 1 - v.len()..3].iter_mut().zip(v) {
            *slot = u32_of(d, "spatial dims")?;
        }
        a[3] = u32_of(v.iter().product(), "spatial elements")?;
        Ok(a)
    };
    let mut sc = [1u32; 4];
    sc[3 - scales.len()..3].copy_from_slice(scales);
    let p = ResizeParams {
        n: u32_of(out.numel(), "output elements")?,
        in_dims: pad3(&x.dims[2..])?,
        out_dims: pad3(&out.dims[2..])?,
        scales: sc,
        ..ResizeParams::default()
    };
    b.zero_if_packed(out)?;
    let source = module(x.dtype).map_err(|e| Error::new(ErrorKind::Device, format!("ResizeNearest shader: {e}")))?;
    b.push(Kernel {
        source,
        bindings: vec![(x.window, BindKind::Read), (out.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Threads(u64::from(p.n)),
        flops: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::builder::Buf;
    use backend_api::DType;

    #[test]
    fn params_pad_to_three_dims() {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let x = Operand::whole(Buf::In(0), DType::BF16, vec![2, 3, 4, 5]).unwrap();
        let out = Operand::whole(Buf::Out(0), DType::BF16, vec![2, 3, 8, 15]).unwrap();
        resize_nearest(&mut b, &[2, 3], &x, &out).unwrap();
        assert!(resize_nearest(&mut b, &[2, 2], &x, &out).is_err());
        let l = b.finish();
        let ks = l.kernels();
        let p: ResizeParams = bytemuck::pod_read_unaligned(&ks[1].params);
        assert_eq!(
            (ks.len(), p.n, p.in_dims, p.out_dims, p.scales),
            (2, 720, [1, 4, 5, 20], [1, 8, 15, 120], [1, 2, 3, 1])
        );
    }
}
