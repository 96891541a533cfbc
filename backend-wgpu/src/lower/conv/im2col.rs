//! Im2Col (§2.9.4): one kernel, one invocation per output element (`conv_im2col.wgsl`), copying
//! raw element bits through the window addressing of Pool ([`WindowGeometry`]). An input with an
//! empty spatial dim (padding alone makes the windows) unfolds to zeros: a constant Pad.

use super::super::builder::{u32_of, Kernel, Lower, Operand};
use super::super::{movement, Grid};
use super::pool::WindowGeometry;
use crate::pipelines::BindKind;
use backend_api::op::{Im2ColAttrs, PadAttrs, PadMode};
use backend_api::{ensure, Error, ErrorKind, Result};
use shaders::conv::im2col::module;
use shaders::params::Params;

/// Im2Col of `x` (`[N, C, *in]`) into `out` (`[N, C·Πk, L]`).
pub fn im2col(b: &mut Lower<'_>, a: &Im2ColAttrs, x: &Operand, out: &Operand) -> Result<()> {
    ensure!(out.dtype == x.dtype, DType, "Im2Col of {} x cannot write a {} output", x.dtype, out.dtype);
    let s = x.dims.len().saturating_sub(2);
    let grid = grid(x, a)?;
    let g =
        WindowGeometry::new("Im2Col", &x.dims, &grid, [&a.kernel, &a.stride, &a.dilation, &a.pads_begin, &a.pads_end])?;
    let kvol = a.kernel.iter().try_fold(1usize, |v, &k| v.checked_mul(k));
    let rows = kvol.and_then(|k| k.checked_mul(x.dims[1]));
    let cols = grid.iter().try_fold(1usize, |v, &o| v.checked_mul(o));
    let fits = s >= 1 && out.dims.len() == 3 && out.dims[0] == x.dims[0] && Some(out.dims[1]) == rows;
    ensure!(fits && Some(out.dims[2]) == cols, Shape, "Im2Col of x {:?} cannot write {:?}", x.dims, out.dims);
    if out.numel() == 0 {
        return Ok(());
    }
    u32_of(x.numel(), "input elements")?;
    if x.numel() == 0 {
        // [N, C·Πk, L] from an empty [N, C·Πk, 0] view of x: every entry is padding.
        let empty = x.reshaped(vec![out.dims[0], out.dims[1], 0])?;
        let pad = PadAttrs {
            pads_begin: vec![0; 3],
            pads_end: vec![0, 0, out.dims[2]],
            mode: PadMode::Constant { value: 0.0 },
        };
        return movement::pad(b, &pad, &empty, out);
    }
    b.zero_if_packed(out)?;
    let source = module(x.dtype).map_err(|e| Error::new(ErrorKind::Device, format!("Im2Col shader: {e}")))?;
    let p = g.params(out.numel(), false)?;
    b.push(Kernel {
        source,
        bindings: vec![(x.window, BindKind::Read), (out.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Threads(u64::from(p.n)),
        flops: None,
    });
    Ok(())
}

/// The output grid `⌊(in + pb + pe − ke) / stride⌋ + 1` per spatial dim (the output keeps only
/// its product `L`), or a `Shape` error when the padded input is shorter than a window.
fn grid(x: &Operand, a: &Im2ColAttrs) -> Result<Vec<usize>> {
    let s = x.dims.len().saturating_sub(2);
    let lists = [&a.kernel, &a.stride, &a.dilation, &a.pads_begin, &a.pads_end];
    ensure!(
        lists.iter().all(|l| l.len() == s),
        Attribute,
        "Im2Col lists {lists:?} must have {s} entries for x {:?}",
        x.dims
    );
    (0..s)
        .map(|d| {
            let i = |v: usize| v as i128;
            let ke = i(a.dilation[d]) * (i(a.kernel[d]) - 1) + 1;
            let span = i(x.dims[2 + d]) + i(a.pads_begin[d]) + i(a.pads_end[d]) - ke;
            ensure!(span >= 0 && a.stride[d] > 0, Shape, "Im2Col spatial dim {d} of x {:?}: no window fits", x.dims);
            usize::try_from(span / i(a.stride[d]) + 1)
                .map_err(|_| Error::new(ErrorKind::DeviceLimit, format!("Im2Col output size of dim {d} overflows")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::builder::Buf;
    use backend_api::DType;

    fn lowered(a: &Im2ColAttrs, x: &[usize], out: &[usize], d: DType) -> Result<crate::lower::Lowering> {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let (x, out) = (Operand::whole(Buf::In(0), d, x.to_vec())?, Operand::whole(Buf::Out(0), d, out.to_vec())?);
        im2col(&mut b, a, &x, &out)?;
        Ok(b.finish())
    }

    #[test]
    fn params_carry_the_kernel_volume_and_column_count() {
        let mut a = Im2ColAttrs::new(&[2, 3]);
        a.pads_end = vec![1, 1];
        let l = lowered(&a, &[2, 3, 4, 5], &[2, 18, 16], DType::F32).unwrap();
        let p: shaders::conv::pool::WindowParams = bytemuck::pod_read_unaligned(&l.kernels()[0].params);
        assert_eq!((p.n, p.kernel, p.out_dims), (576, [1, 2, 3, 6], [1, 4, 4, 16]));
        assert!(lowered(&a, &[2, 3, 4, 5], &[2, 18, 15], DType::F32).is_err());
        // U8 output is packed: zeroed first.
        assert_eq!(lowered(&a, &[2, 3, 4, 5], &[2, 18, 16], DType::U8).unwrap().kernels().len(), 2);
        // An empty spatial dim needs pads that hold a window.
        assert_eq!(lowered(&a, &[1, 1, 0, 5], &[1, 6, 0], DType::F32).unwrap_err().kind(), ErrorKind::Shape);
        let mut a = Im2ColAttrs::new(&[2]);
        a.pads_begin = vec![1];
        a.pads_end = vec![1];
        let l = lowered(&a, &[1, 2, 0], &[1, 4, 1], DType::F64).unwrap();
        assert_eq!(shaders::kernel_file(&l.kernels()[0].source), Some("movement.wgsl"));
    }
}
