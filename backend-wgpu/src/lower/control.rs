//! The GPU-side control mechanism (§2.13 If, While, Scan build on it; docs/DECISIONS.md, "GPU-side
//! control flow"): nothing is read back to the host inside a run.
//!
//! - [`gate`]: the kernels a body pushes run only when a condition tensor (element 0) holds. A
//!   gate kernel writes each body dispatch's workgroup counts into a control buffer — its grid,
//!   or zeros — and the body is dispatched indirectly from there.
//! - [`Lower::repeat`](super::Lower::repeat) records a body once per iteration with
//!   per-iteration params; [`copy_at`] moves a slice in or out at offsets that are params, so a
//!   repeated body binds the same windows in every iteration.

use super::builder::{u32_of, Kernel, Lower, Operand, Window};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::{bail, ensure, Error, ErrorKind, Result};
use shaders::control::{copy_module, gate_module, ControlCopyParams, ControlGateParams, GATE_MAX};
use shaders::params::Params;

/// Runs the kernels `body` pushes only when element 0 of `cond` is non-zero (or, with `negate`,
/// when it is zero). The decision is made on the GPU at run time.
pub fn gate(
    b: &mut Lower<'_>,
    cond: &Operand,
    negate: bool,
    body: impl FnOnce(&mut Lower<'_>) -> Result<()>,
) -> Result<()> {
    let kernels = b.record(body)?;
    let gated: Vec<(Kernel, bool)> = kernels.into_iter().map(|k| (k, negate)).collect();
    gate_kernels(b, cond, 1, &gated)
}

/// Dispatches each of `kernels` only when one of the first `cond_len` elements of `cond` is
/// non-zero, or, for a kernel marked `true`, only when none is: both sides of a branch behind
/// one decision made on the GPU at run time.
pub fn gate_kernels(b: &mut Lower<'_>, cond: &Operand, cond_len: usize, kernels: &[(Kernel, bool)]) -> Result<()> {
    ensure!(
        (1..=cond.numel()).contains(&cond_len),
        Shape,
        "a condition of {cond_len} elements of a tensor of dims {:?}",
        cond.dims
    );
    let Some(src) = gate_module(cond.dtype) else {
        bail!(Unsupported, "a {} condition is not supported (Bool or a 32-bit number)", cond.dtype)
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("gate shader: {e}")))?;
    let cond_len = u32_of(cond_len, "condition elements")?;
    for chunk in kernels.chunks(GATE_MAX) {
        gate_chunk(b, &source, cond, cond_len, chunk)?;
    }
    Ok(())
}

/// One gate kernel for up to [`GATE_MAX`] kernels, then the kernels dispatched from the counts
/// it writes.
fn gate_chunk(b: &mut Lower<'_>, source: &str, cond: &Operand, cond_len: u32, body: &[(Kernel, bool)]) -> Result<()> {
    let mut p = ControlGateParams { count: u32_of(body.len(), "gated dispatches")?, cond_len, ..Default::default() };
    ensure!(body.len() <= p.grids.len(), DeviceLimit, "{} gated dispatches in one gate kernel", body.len());
    for (g, (k, negate)) in p.grids.iter_mut().zip(body) {
        let [x, y, z] = b.workgroup_counts(k.grid)?;
        *g = [x, y, z, u32::from(*negate)];
    }
    // 12 bytes (three u32 counts) per dispatch; at most GATE_MAX of them.
    let at = |j: usize| u64::try_from(j).ok().and_then(|j| j.checked_mul(12));
    let Some(bytes) = at(body.len()) else { bail!(DeviceLimit, "{} gated dispatches", body.len()) };
    let args = b.control(bytes)?;
    b.push(Kernel {
        source: source.to_string(),
        bindings: vec![(cond.window, BindKind::Read), (args, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Workgroups([1, 1, 1]),
        flops: None,
    });
    for (j, (k, _)) in body.iter().enumerate() {
        let Some(offset) = at(j) else { bail!(DeviceLimit, "{j} gated dispatches") };
        let counts = Window { buf: args.buf, offset, bytes: 12 };
        b.push(Kernel { grid: Grid::Indirect(counts), ..k.clone() });
    }
    Ok(())
}

/// Copies `elems` elements of `src` starting at element `from` into `dst` at element `to`. Both
/// must have the same dtype and the offsets and length must be whole u32 words.
pub fn copy_at(b: &mut Lower<'_>, src: &Operand, from: usize, dst: &Operand, to: usize, elems: usize) -> Result<()> {
    ensure!(src.dtype == dst.dtype, Shape, "copy from {} into {}", src.dtype, dst.dtype);
    let size = src.dtype.size();
    let word = |e: usize, what: &str| -> Result<u32> {
        let Some(bytes) = e.checked_mul(size) else { bail!(DeviceLimit, "a copy's {what} of {e} elements overflows") };
        ensure!(bytes.is_multiple_of(4), Shape, "a copy's {what} of {e} {} elements is not whole words", src.dtype);
        u32_of(bytes / 4, what)
    };
    let (n, s, d) = (word(elems, "length")?, word(from, "source offset")?, word(to, "destination offset")?);
    let fits = |o: &Operand, start: u32| u64::from(start) + u64::from(n) <= o.words();
    ensure!(
        fits(src, s) && fits(dst, d),
        Shape,
        "copying {elems} elements from {from} of {:?} to {to} of {:?} leaves the operands",
        src.dims,
        dst.dims
    );
    if n == 0 {
        return Ok(());
    }
    let p = ControlCopyParams { n, src: s, dst: d, pad0: 0 };
    b.push(Kernel {
        source: copy_module(),
        bindings: vec![(src.window, BindKind::Read), (dst.window, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Threads(u64::from(n)),
        flops: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests;
