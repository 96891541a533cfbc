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
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::control::{
    copy_bytes_module, copy_module, gate_module, is_gate, ControlCopyBytesParams, ControlCopyParams, ControlGateParams,
    GATE_MAX, GATE_PARENT_OFFSET, NO_PARENT,
};
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
///
/// Kernels that are already controlled from the GPU are not gated again: an indirect dispatch
/// keeps the counts its own gate writes, and a gate among `kernels` (a branch or loop nested in
/// this body) is chained to this one instead, ANDing its condition with this gate's predicate
/// for its side, so that nesting composes to any depth.
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
    let mut start = 0;
    // Chunks after the first read the condition the first one saw: the body may rewrite the
    // condition tensor (a loop's) between them.
    let mut seen: Option<(String, Operand, u32)> = None;
    while start < kernels.len() {
        // A chunk holds at most GATE_MAX gated kernels; the others ride along.
        let (mut end, mut gated) = (start, 0);
        while let Some((k, _)) = kernels.get(end) {
            if how(k)? == How::Gated {
                if gated == GATE_MAX {
                    break;
                }
                gated += 1;
            }
            end += 1;
        }
        let chunk = &kernels[start..end];
        match &seen {
            Some((src, words, at)) => {
                gate_chunk(b, src, (words, *at, 1), chunk)?;
            }
            None => {
                let (words, at) = gate_chunk(b, &source, (cond, 0, cond_len), chunk)?;
                let Some(Ok(src)) = gate_module(words.dtype) else {
                    bail!(Device, "no gate kernel for a {} condition word", words.dtype)
                };
                seen = Some((src, words, at));
            }
        }
        start = end;
    }
    Ok(())
}

/// What an enclosing gate does with a kernel of its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// Dispatched from the counts the gate writes.
    Gated,
    /// A gate of a nested branch or loop with no enclosing gate yet: chained to this one.
    Chained,
    /// Left as it is: an indirect dispatch, or a gate already chained to one inside the body.
    Kept,
}

fn how(k: &Kernel) -> Result<How> {
    if matches!(k.grid, Grid::Indirect(_)) {
        return Ok(How::Kept);
    }
    if !is_gate(&k.source) {
        return Ok(How::Gated);
    }
    Ok(if gate_parent(k)? == NO_PARENT { How::Chained } else { How::Kept })
}

/// The `parent` field of a gate kernel's params.
fn gate_parent(k: &Kernel) -> Result<u32> {
    match k.params.get(GATE_PARENT_OFFSET..GATE_PARENT_OFFSET + 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_le_bytes([a, b, c, d])),
        _ => bail!(Shape, "a gate kernel's params of {} bytes hold no parent word", k.params.len()),
    }
}

/// One gate kernel for up to [`GATE_MAX`] gated kernels, then the kernels in order: the gated
/// ones dispatched from the counts it writes, nested gates chained to its predicates. Returns
/// the gate's control words as a U32 operand and the word where it keeps the condition it read.
/// The condition is `cond`'s elements `cond_at..cond_at + cond_len`.
fn gate_chunk(
    b: &mut Lower<'_>,
    source: &str,
    (cond, cond_at, cond_len): (&Operand, u32, u32),
    body: &[(Kernel, bool)],
) -> Result<(Operand, u32)> {
    let mut p = ControlGateParams { cond_len, cond_at, parent: NO_PARENT, ..Default::default() };
    let mut slots = 0usize;
    for (k, negate) in body {
        if how(k)? != How::Gated {
            continue;
        }
        let Some(g) = p.grids.get_mut(slots) else {
            bail!(DeviceLimit, "more than {GATE_MAX} gated dispatches in one gate kernel")
        };
        let [x, y, z] = b.workgroup_counts(k.grid)?;
        *g = [x, y, z, u32::from(*negate)];
        slots += 1;
    }
    p.count = u32_of(slots, "gated dispatches")?;
    // 12 bytes (three u32 counts) per gated dispatch, then the two predicate words and the
    // condition.
    let at = |j: usize| u64::try_from(j).ok().and_then(|j| j.checked_mul(12));
    let Some(bytes) = at(slots).and_then(|c| c.checked_add(12)) else { bail!(DeviceLimit, "{slots} gated dispatches") };
    let args = b.control(bytes)?;
    b.push(Kernel {
        source: source.to_string(),
        bindings: vec![(cond.window, BindKind::Read), (cond.window, BindKind::Read), (args, BindKind::Write)],
        params: p.to_bytes(),
        grid: Grid::Workgroups([1, 1, 1]),
        flops: None,
    });
    let mut slot = 0usize;
    for (k, negate) in body {
        match how(k)? {
            How::Gated => {
                let Some(offset) = at(slot) else { bail!(DeviceLimit, "{slot} gated dispatches") };
                let counts = Window { buf: args.buf, offset, bytes: 12 };
                b.push(Kernel { grid: Grid::Indirect(counts), ..k.clone() });
                slot += 1;
            }
            How::Chained => b.push(chained(k, &args, p.count, *negate)?),
            How::Kept => b.push(k.clone()),
        }
    }
    let words = usize::try_from(bytes / 4).unwrap_or(usize::MAX);
    let Some(held) = p.count.checked_mul(3).and_then(|w| w.checked_add(2)) else {
        bail!(DeviceLimit, "{slots} gated dispatches")
    };
    Ok((Operand { window: args, dtype: DType::U32, dims: vec![words] }, held))
}

/// Nested gate `k` reading the predicate an enclosing gate with `count` gated dispatches writes
/// into `args` for its side (`negate`: the side run when that condition fails).
fn chained(k: &Kernel, args: &Window, count: u32, negate: bool) -> Result<Kernel> {
    let Some(word) = count.checked_mul(3).and_then(|w| w.checked_add(u32::from(negate))) else {
        bail!(DeviceLimit, "{count} gated dispatches")
    };
    let mut k = k.clone();
    match k.params.get_mut(GATE_PARENT_OFFSET..GATE_PARENT_OFFSET + 4) {
        Some(dst) => dst.copy_from_slice(&word.to_le_bytes()),
        None => bail!(Shape, "a gate kernel's params of {} bytes hold no parent word", k.params.len()),
    }
    match k.bindings.get_mut(1) {
        Some(up) => *up = (*args, BindKind::Read),
        None => bail!(Arity, "a gate kernel binds no enclosing gate's words"),
    }
    Ok(k)
}

/// Copies `elems` elements of `src` starting at element `from` into `dst` at element `to` (same
/// dtype). Whole words are copied a word per invocation; offsets or lengths that are not whole
/// words (1- and 2-byte dtypes) are copied bytewise, keeping the other bytes of the words
/// written.
pub fn copy_at(b: &mut Lower<'_>, src: &Operand, from: usize, dst: &Operand, to: usize, elems: usize) -> Result<()> {
    if let Some(k) = copy_kernel(src, from, dst, to, elems)? {
        b.push(k);
    }
    Ok(())
}

/// `src` copied whole into `dst` (same dtype and element count), unless they are one window.
pub fn copy_whole(b: &mut Lower<'_>, src: &Operand, dst: &Operand) -> Result<()> {
    if src.window == dst.window {
        return Ok(());
    }
    ensure!(src.numel() == dst.numel(), Shape, "copying {}{:?} into {}{:?}", src.dtype, src.dims, dst.dtype, dst.dims);
    copy_at(b, src, 0, dst, 0, src.numel())
}

/// The kernel [`copy_at`] pushes, or `None` for an empty copy.
pub fn copy_kernel(src: &Operand, from: usize, dst: &Operand, to: usize, elems: usize) -> Result<Option<Kernel>> {
    let Some((bytewise, params, threads)) = copy_params(src, from, dst, to, elems)? else { return Ok(None) };
    Ok(Some(Kernel {
        source: if bytewise { copy_bytes_module() } else { copy_module() },
        bindings: vec![(src.window, BindKind::Read), (dst.window, BindKind::Write)],
        params,
        grid: Grid::Threads(threads),
        flops: None,
    }))
}

/// Whether the copy is bytewise, its params and its invocations; `None` for an empty copy. The
/// kind and the invocations depend only on the length and on which offsets are whole words,
/// so the copies of a repeated body at different rows differ in their params only.
pub fn copy_params(
    src: &Operand,
    from: usize,
    dst: &Operand,
    to: usize,
    elems: usize,
) -> Result<Option<(bool, Vec<u8>, u64)>> {
    ensure!(src.dtype == dst.dtype, Shape, "copy from {} into {}", src.dtype, dst.dtype);
    let size = src.dtype.size();
    let bytes = |e: usize, what: &str| -> Result<u64> {
        match e.checked_mul(size).and_then(|b| u64::try_from(b).ok()) {
            Some(b) => Ok(b),
            None => bail!(DeviceLimit, "a copy's {what} of {e} elements overflows"),
        }
    };
    let (n, s, d) = (bytes(elems, "length")?, bytes(from, "source offset")?, bytes(to, "destination offset")?);
    let fits = |o: &Operand, start: u64| start.checked_add(n).is_some_and(|e| e <= o.window.bytes);
    ensure!(
        fits(src, s) && fits(dst, d),
        Shape,
        "copying {elems} elements from {from} of {:?} to {to} of {:?} leaves the operands",
        src.dims,
        dst.dims
    );
    if n == 0 {
        return Ok(None);
    }
    let u32_at = |v: u64, what: &str| match u32::try_from(v) {
        Ok(x) => Ok(x),
        Err(_) => bail!(DeviceLimit, "a copy's {what} of {v} exceeds the kernel's 32-bit offsets"),
    };
    if [n, s, d].iter().all(|v| v.is_multiple_of(4)) {
        let (n, s, d) =
            (u32_at(n / 4, "length")?, u32_at(s / 4, "source offset")?, u32_at(d / 4, "destination offset")?);
        return Ok(Some((false, ControlCopyParams { n, src: s, dst: d, pad0: 0 }.to_bytes(), u64::from(n))));
    }
    let p = ControlCopyBytesParams {
        n: u32_at(n, "length")?,
        src: u32_at(s, "source offset")?,
        dst: u32_at(d, "destination offset")?,
        pad0: 0,
    };
    // n bytes touch at most ⌈n/4⌉ + 1 words wherever they start; the kernel skips the rest.
    Ok(Some((true, p.to_bytes(), n.div_ceil(4) + 1)))
}

mod body;
mod flow;

pub use flow::{if_, scan, while_};

#[cfg(test)]
mod tests;
