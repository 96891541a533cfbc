//! ArgMax / ArgMin (§2.5.2–2.5.3) along any axis: one workgroup per row with a tree reduction of
//! (value, index) pairs, or one invocation per short row (`shaders::reduce::arg`).

use super::{around, check_size, shader, threads, SHORT_ROW};
use crate::lower::builder::{u32_of, Kernel, Lower, Operand};
use crate::pipelines::BindKind;
use backend_api::op::ArgReduceAttrs;
use backend_api::{bail, ensure, Result};
use shaders::params::Params;
use shaders::reduce::arg::{module, ArgLayout, ArgParams};

/// ArgMax of `x` along `a.axis` into `out` (`a.index_dtype`, one index per row).
pub fn arg_max(b: &mut Lower<'_>, a: &ArgReduceAttrs, x: &Operand, out: &Operand) -> Result<()> {
    arg(b, a, true, x, out)
}

/// ArgMin of `x` along `a.axis` into `out` (`a.index_dtype`, one index per row).
pub fn arg_min(b: &mut Lower<'_>, a: &ArgReduceAttrs, x: &Operand, out: &Operand) -> Result<()> {
    arg(b, a, false, x, out)
}

/// ArgMax (`max`) / ArgMin.
fn arg(b: &mut Lower<'_>, a: &ArgReduceAttrs, max: bool, x: &Operand, out: &Operand) -> Result<()> {
    let what = if max { "ArgMax" } else { "ArgMin" };
    let d = x.dtype;
    check_size(what, &x.dims)?;
    let (outer, len, inner) = around(&x.dims, a.axis)?;
    let layout = if len <= SHORT_ROW { ArgLayout::Threads } else { ArgLayout::Rows };
    let source = shader(what, module(max, d, a.index_dtype, layout), d)?;
    let rows = outer * inner;
    ensure!(
        out.dtype == a.index_dtype && out.numel() == rows,
        Shape,
        "{what} of {d}{:?} along axis {} cannot write {}{:?}",
        x.dims,
        a.axis,
        out.dtype,
        out.dims
    );
    if rows == 0 {
        return Ok(());
    }
    if len == 0 {
        bail!(Shape, "{what} along an empty axis {} of {:?}", a.axis, x.dims);
    }
    let p = ArgParams {
        rows: u32_of(rows, "rows")?,
        len: u32_of(len, "row elements")?,
        inner: u32_of(inner, "row stride")?,
        ..ArgParams::default()
    };
    let grid = match layout {
        ArgLayout::Threads => threads(rows),
        ArgLayout::Rows => b.workgroups(rows)?,
    };
    // The index dtypes are never packed today; the guard keeps the kernel right if one is.
    b.zero_if_packed(out)?;
    let bindings = vec![(x.window, BindKind::Read), (out.window, BindKind::Write)];
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}
