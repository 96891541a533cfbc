//! Pool (§2.9.3): one kernel, one invocation per output element (`conv_pool_max.wgsl`,
//! `conv_pool_avg.wgsl`). Problems of 1 or 2 spatial dims run as 3-D ones with leading size-1
//! dims, so one kernel covers every rank. An input with an empty spatial dim (padding alone makes
//! the windows) has no inside point anywhere: the output is the empty-window value everywhere,
//! written by the movement family's constant Pad.

use super::super::builder::{u32_of, Kernel, Lower, Operand};
use super::super::{movement, Grid};
use crate::pipelines::BindKind;
use backend_api::op::{PadAttrs, PadMode, PoolAttrs, PoolKind};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::conv::pool::{module, supported, WindowParams};
use shaders::params::Params;

/// The per-axis attributes of a windowed op, padded to three spatial dims.
pub(super) struct WindowGeometry {
    /// Spatial input dims.
    pub input: [usize; 3],
    /// Output grid.
    pub out: [usize; 3],
    /// Kernel size.
    pub kernel: [usize; 3],
    /// Stride.
    pub stride: [usize; 3],
    /// Dilation.
    pub dilation: [usize; 3],
    /// Padding before.
    pub pads_begin: [usize; 3],
    /// Padding after.
    pub pads_end: [usize; 3],
}

impl WindowGeometry {
    /// The geometry of `op` on `x` writing `out` (`[N, C, *grid]` or, for Im2Col, `grid` given
    /// apart), from lists of one entry per spatial dim. Errs (`DeviceLimit`) when a coordinate of
    /// some window could leave the kernel's wrapping u32 range (see `conv_window_common.wgsl`).
    pub fn new(op: &str, x: &[usize], grid: &[usize], lists: [&[usize]; 5]) -> Result<WindowGeometry> {
        ensure!((3..=5).contains(&x.len()), Shape, "{op} x {x:?} must have 1 to 3 spatial dims");
        let s = x.len() - 2;
        let fits = grid.len() == s && lists.iter().all(|l| l.len() == s);
        ensure!(
            fits,
            Attribute,
            "{op} of x {x:?}: output grid {grid:?} or an attribute list {lists:?} is not {s} long"
        );
        let pad3 = |v: &[usize], fill: usize| {
            let mut a = [fill; 3];
            a[3 - s..].copy_from_slice(v);
            a
        };
        let [kernel, stride, dilation, pads_begin, pads_end] = lists;
        let g = WindowGeometry {
            input: pad3(&x[2..], 1),
            out: pad3(grid, 1),
            kernel: pad3(kernel, 1),
            stride: pad3(stride, 1),
            dilation: pad3(dilation, 1),
            pads_begin: pad3(pads_begin, 0),
            pads_end: pad3(pads_end, 0),
        };
        for d in 0..3 {
            // The last point of the last window and the padded extent, in i128 (no overflow).
            let i = |v: usize| v as i128;
            let last = i(g.out[d]).max(1) * i(g.stride[d]) + i(g.dilation[d]) * i(g.kernel[d]);
            let extent = i(g.input[d]) + i(g.pads_begin[d]) + i(g.pads_end[d]);
            if last.max(extent) + i(g.pads_begin[d]) >= 1 << 31 || g.stride[d] == 0 || g.dilation[d] == 0 {
                bail!(
                    DeviceLimit,
                    "{op} of x {x:?}: spatial dim {d} (padded {extent}, windows to {last}) exceeds the kernel's 31-bit coordinates"
                );
            }
        }
        Ok(g)
    }

    /// The kernel's params for `n` output elements.
    pub fn params(&self, n: usize, count_include_pad: bool) -> Result<WindowParams> {
        let vec = |v: [usize; 3], w: usize, what: &str| -> Result<[u32; 4]> {
            Ok([u32_of(v[0], what)?, u32_of(v[1], what)?, u32_of(v[2], what)?, u32_of(w, what)?])
        };
        let prod = |v: [usize; 3], what: &str| match v[0].checked_mul(v[1]).and_then(|p| p.checked_mul(v[2])) {
            Some(p) => Ok(p),
            None => Err(Error::new(ErrorKind::DeviceLimit, format!("{what} {v:?} overflow"))),
        };
        Ok(WindowParams {
            n: u32_of(n, "output elements")?,
            count_include_pad: u32::from(count_include_pad),
            in_dims: vec(self.input, prod(self.input, "input dims")?, "input dims")?,
            out_dims: vec(self.out, prod(self.out, "output positions")?, "output positions")?,
            kernel: vec(self.kernel, prod(self.kernel, "kernel points")?, "kernel points")?,
            stride: vec(self.stride, 1, "strides")?,
            dilation: vec(self.dilation, 1, "dilations")?,
            pads_begin: vec(self.pads_begin, 0, "pads")?,
            pads_end: vec(self.pads_end, 0, "pads")?,
            ..WindowParams::default()
        })
    }
}

/// Pool of `x` into `out` (`[N, C, *grid]`).
pub fn pool(b: &mut Lower<'_>, a: &PoolAttrs, x: &Operand, out: &Operand) -> Result<()> {
    let d = x.dtype;
    ensure!(supported(a.kind, d), DType, "Pool.{:?} is not defined for {d} (x {:?})", a.kind, x.dims);
    ensure!(out.dtype == d, DType, "Pool of {d} x cannot write a {} output", out.dtype);
    let fits = out.dims.len() == x.dims.len() && out.dims.len() >= 3 && out.dims[..2] == x.dims[..2];
    ensure!(fits, Shape, "Pool of x {:?} cannot write {:?}", x.dims, out.dims);
    let lists = [&a.kernel[..], &a.stride, &a.dilation, &a.pads_begin, &a.pads_end];
    let g = WindowGeometry::new("Pool", &x.dims, &out.dims[2..], lists)?;
    if out.numel() == 0 {
        return Ok(());
    }
    u32_of(x.numel(), "input elements")?;
    if x.numel() == 0 {
        return empty_windows(b, a.kind, x, out);
    }
    b.zero_if_packed(out)?;
    let source = module(a.kind, d).map_err(|e| Error::new(ErrorKind::Device, format!("Pool shader: {e}")))?;
    let p = g.params(out.numel(), a.count_include_pad)?;
    b.push(Kernel {
        source,
        bindings: vec![(x.window, BindKind::Read), (out.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Threads(u64::from(p.n)),
        flops: None,
    });
    Ok(())
}

/// An output whose every window is empty (`x` has an empty spatial dim, so none has an inside
/// point): −∞ or the dtype minimum for Max, 0 for Avg, as a constant Pad of the empty `x`.
fn empty_windows(b: &mut Lower<'_>, kind: PoolKind, x: &Operand, out: &Operand) -> Result<()> {
    let value = match (kind, x.dtype) {
        (PoolKind::Avg, _) => 0.0,
        (PoolKind::Max, DType::F32 | DType::F16 | DType::BF16 | DType::F64) => f64::NEG_INFINITY,
        // Every minimum is exact in f64 (−2^7, −2^31, −2^63, 0), so the Pad's Cast keeps it.
        (PoolKind::Max, DType::I8) => f64::from(i8::MIN),
        (PoolKind::Max, DType::I32) => f64::from(i32::MIN),
        (PoolKind::Max, DType::I64) => -(2f64.powi(63)),
        (PoolKind::Max, DType::U32 | DType::U8 | DType::Bool | DType::C64) => 0.0,
    };
    let grow: Vec<usize> = x.dims.iter().zip(&out.dims).map(|(&i, &o)| o.saturating_sub(i)).collect();
    let a = PadAttrs { pads_begin: vec![0; x.dims.len()], pads_end: grow, mode: PadMode::Constant { value } };
    movement::pad(b, &a, x, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::builder::Buf;

    fn lowered(a: &PoolAttrs, x: &[usize], out: &[usize], d: DType) -> Result<crate::lower::Lowering> {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let (x, out) = (Operand::whole(Buf::In(0), d, x.to_vec())?, Operand::whole(Buf::Out(0), d, out.to_vec())?);
        pool(&mut b, a, &x, &out)?;
        Ok(b.finish())
    }

    #[test]
    fn one_and_two_d_pools_run_as_3d() {
        let mut a = PoolAttrs::new(PoolKind::Max, &[3, 2], &[2, 1]);
        a.pads_begin = vec![1, 0];
        let l = lowered(&a, &[2, 3, 7, 5], &[2, 3, 4, 4], DType::F32).unwrap();
        let ks = l.kernels();
        let [k] = ks.as_slice() else { panic!("one kernel expected") };
        let p: WindowParams = bytemuck::pod_read_unaligned(&k.params);
        assert_eq!((p.n, p.in_dims, p.out_dims), (96, [1, 7, 5, 35], [1, 4, 4, 16]));
        assert_eq!((p.kernel, p.stride, p.pads_begin), ([1, 3, 2, 6], [1, 2, 1, 1], [0, 1, 0, 0]));
    }

    #[test]
    fn packed_outputs_are_zeroed_and_empty_inputs_padded() {
        let a = PoolAttrs::new(PoolKind::Max, &[2], &[1]);
        assert_eq!(lowered(&a, &[1, 2, 5], &[1, 2, 4], DType::F16).unwrap().kernels().len(), 2);
        let mut a = PoolAttrs::new(PoolKind::Avg, &[3], &[1]);
        a.pads_begin = vec![2];
        a.pads_end = vec![2];
        // in 0: padding alone makes 2 windows, none with an inside point: one constant Pad.
        let l = lowered(&a, &[1, 2, 0], &[1, 2, 2], DType::F32).unwrap();
        assert!(shaders::kernel_file(&l.kernels()[0].source) == Some("movement.wgsl"));
        assert!(lowered(&a, &[0, 2, 4], &[0, 2, 6], DType::F32).unwrap().kernels().is_empty());
        assert_eq!(lowered(&a, &[1, 2, 4], &[1, 2, 6], DType::I32).unwrap_err().kind(), ErrorKind::DType);
        let big = PoolAttrs::new(PoolKind::Max, &[1], &[1 << 31]);
        assert_eq!(lowered(&big, &[1, 1, 4], &[1, 1, 1], DType::F32).unwrap_err().kind(), ErrorKind::DeviceLimit);
    }
}
