//! `If`, `While` (§2.13) and `Scan` (§2.10.7) on the GPU, in one submit with no read-back
//! (docs/DECISIONS.md, "Control flow on the GPU").
//!
//! - `If`: both branches are lowered into the node's outputs, each behind one gate on `cond`
//!   with its polarity; the branch not taken dispatches nothing.
//! - `While`: the loop values live in the node's outputs. The condition is evaluated once
//!   before the loop; each of `max_iterations` recorded iterations is one gate on it followed by
//!   the body, the copy-back of the new values and the condition again, so the iterations after
//!   the loop ends dispatch nothing but their gate.
//! - `Scan`: the carries live in the node's first outputs; each recorded step copies its slice
//!   of every sequence input in, runs the body, writes its row of every stacked output, with the
//!   row offsets in the step's params.
//!
//! A new loop value is written straight into the loop value's memory where that is safe
//! ([`in_place_carries`]); otherwise into scratch copied back after the body, staged through
//! scratch when it is another loop value's old memory (a swap).

use super::body::{in_place_carries, lower_graph, static_type};
use super::{copy_kernel, copy_params, copy_whole, gate_kernels};
use crate::lower::builder::{Buf, Kernel, Lower, Operand, MAX_RECORDED_DISPATCHES};
use crate::lower::NodeIo;
use backend_api::op::{IfAttrs, ScanAttrs, WhileAttrs};
use backend_api::{bail, ensure, Graph, Result};

/// `If(cond, captures…)` into the node's outputs.
pub fn if_(b: &mut Lower<'_>, a: &IfAttrs, io: &NodeIo<'_>) -> Result<()> {
    let cond = io.input(0)?;
    let captures = io.inputs.get(1..).unwrap_or(&[]).to_vec();
    let dests: Vec<Option<Operand>> = io.outputs.iter().cloned().map(Some).collect();
    let mut gated: Vec<(Kernel, bool)> = Vec::new();
    for (graph, negate, what) in [(&a.then_graph, false, "If then_graph"), (&a.else_graph, true, "If else_graph")] {
        let kernels = b.record(|b| {
            let outs = lower_graph(b, graph, &captures, &dests, what)?;
            ensure!(outs.len() == io.outputs.len(), Subgraph, "{what} returns {} values", outs.len());
            for (o, d) in outs.iter().zip(&io.outputs) {
                copy_whole(b, o, d)?;
            }
            Ok(())
        })?;
        gated.extend(kernels.into_iter().map(|k| (k, negate)));
    }
    gate_kernels(b, cond, 1, &gated)
}

/// `While(v…)` into the node's outputs.
pub fn while_(b: &mut Lower<'_>, a: &WhileAttrs, io: &NodeIo<'_>) -> Result<()> {
    let state = io.outputs.clone();
    ensure!(state.len() == io.inputs.len(), Arity, "While has {} inputs, {} outputs", io.inputs.len(), state.len());
    for (x, s) in io.inputs.iter().zip(&state) {
        copy_whole(b, x, s)?;
    }
    if a.max_iterations == 0 {
        return Ok(());
    }
    let times = usize::try_from(a.max_iterations).unwrap_or(usize::MAX);
    if times > MAX_RECORDED_DISPATCHES {
        bail!(
            DeviceLimit,
            "While max_iterations {} exceeds the {MAX_RECORDED_DISPATCHES} dispatches a node may record (each \
             iteration records at least one)",
            a.max_iterations
        );
    }
    let cond = condition_slot(b, &a.cond_graph)?;
    condition(b, &a.cond_graph, &state, &cond)?;
    let in_place = in_place_carries(&a.body_graph, state.len());
    let iteration = b.record(|b| {
        let inner = b.record(|b| {
            let dests: Vec<Option<Operand>> = state.iter().zip(&in_place).map(|(s, &p)| p.then(|| s.clone())).collect();
            let outs = lower_graph(b, &a.body_graph, &state, &dests, "While body_graph")?;
            copy_back(b, &outs, &state)?;
            condition(b, &a.cond_graph, &state, &cond)
        })?;
        let gated: Vec<(Kernel, bool)> = inner.into_iter().map(|k| (k, false)).collect();
        gate_kernels(b, &cond, 1, &gated)
    })?;
    b.repeat_same(times, iteration)
}

/// Scratch for the value of a While condition graph (its one output).
fn condition_slot(b: &mut Lower<'_>, g: &Graph) -> Result<Operand> {
    let Some(&v) = g.outputs().first() else { bail!(Subgraph, "While cond_graph has no output") };
    let (dtype, dims) = static_type(g, v, "While cond_graph")?;
    b.temp(dtype, dims)
}

/// Evaluates the condition graph on the loop values into `cond`.
fn condition(b: &mut Lower<'_>, g: &Graph, state: &[Operand], cond: &Operand) -> Result<()> {
    let outs = lower_graph(b, g, state, &[Some(cond.clone())], "While cond_graph")?;
    match outs.first() {
        Some(o) => copy_whole(b, o, cond),
        None => bail!(Subgraph, "While cond_graph returns no value"),
    }
}

/// Copies each new loop value `outs[k]` into `state[k]` unless it is there already; values that
/// live in a loop value's memory (a swap, a value kept under another name) go through scratch
/// first, so that no copy reads memory an earlier copy wrote.
fn copy_back(b: &mut Lower<'_>, outs: &[Operand], state: &[Operand]) -> Result<()> {
    ensure!(outs.len() >= state.len(), Subgraph, "a loop body returns {} values for {}", outs.len(), state.len());
    let mut pending = Vec::new();
    for (o, s) in outs.iter().zip(state) {
        if o.window == s.window {
            continue;
        }
        let src = if matches!(o.window.buf, Buf::Out(_)) {
            let t = b.temp(o.dtype, o.dims.clone())?;
            copy_whole(b, o, &t)?;
            t
        } else {
            o.clone()
        };
        pending.push((src, s));
    }
    for (src, s) in pending {
        copy_whole(b, &src, s)?;
    }
    Ok(())
}

/// A copy of a repeated step whose row moves with the step: the source's row (a sequence
/// input's slice) or the destination's (a stacked output's row).
struct RowCopy {
    src: Operand,
    dst: Operand,
    elems: usize,
    /// The row is in the source (else in the destination).
    row_in_src: bool,
}

impl RowCopy {
    /// The copy's params at row `t`.
    fn params(&self, t: usize) -> Result<Vec<u8>> {
        let Some(at) = t.checked_mul(self.elems) else { bail!(DeviceLimit, "row {t} of {} elements", self.elems) };
        let (from, to) = if self.row_in_src { (at, 0) } else { (0, at) };
        match copy_params(&self.src, from, &self.dst, to, self.elems)? {
            Some((_, p, _)) => Ok(p),
            None => bail!(Shape, "an empty row copy was recorded"),
        }
    }

    /// The copy's kernel at row 0, if it copies anything.
    fn kernel(&self) -> Result<Option<Kernel>> {
        copy_kernel(&self.src, 0, &self.dst, 0, self.elems)
    }
}

/// The parts of a Scan node's inputs and outputs.
struct ScanIo {
    carries: Vec<Operand>,
    bcast: Vec<Operand>,
    xs: Vec<Operand>,
    state: Vec<Operand>,
    ys: Vec<Operand>,
    traj: Vec<Operand>,
}

fn scan_io(a: &ScanAttrs, io: &NodeIo<'_>) -> Result<ScanIo> {
    let n = |v: u32| usize::try_from(v).unwrap_or(usize::MAX);
    let (c, bc, x) = (n(a.num_carry), n(a.num_bcast), n(a.num_xs));
    let split = |v: &[Operand], at: usize, len: usize, what: &str| -> Result<Vec<Operand>> {
        match at.checked_add(len).and_then(|end| v.get(at..end)) {
            Some(s) => Ok(s.to_vec()),
            None => bail!(Arity, "Scan has no {what} {at}..{at}+{len}"),
        }
    };
    let traj = if a.save_trajectory { c } else { 0 };
    let Some(ys) = io.outputs.len().checked_sub(c + traj) else {
        bail!(Arity, "Scan has {} outputs for {c} carries", io.outputs.len())
    };
    Ok(ScanIo {
        carries: split(&io.inputs, 0, c, "carry")?,
        bcast: split(&io.inputs, c, bc, "broadcast input")?,
        xs: split(&io.inputs, c + bc, x, "sequence input")?,
        state: split(&io.outputs, 0, c, "carry output")?,
        ys: split(&io.outputs, c, ys, "stacked output")?,
        traj: split(&io.outputs, c + ys, traj, "trajectory output")?,
    })
}

/// `Scan(carries…, bcast…, xs…)` into the node's outputs.
pub fn scan(b: &mut Lower<'_>, a: &ScanAttrs, io: &NodeIo<'_>) -> Result<()> {
    let s = scan_io(a, io)?;
    for (x, st) in s.carries.iter().zip(&s.state) {
        copy_whole(b, x, st)?;
    }
    let length = usize::try_from(a.length).unwrap_or(usize::MAX);
    if length == 0 {
        return Ok(());
    }
    if length > MAX_RECORDED_DISPATCHES {
        bail!(DeviceLimit, "Scan length {length} exceeds the {MAX_RECORDED_DISPATCHES} dispatches a node may record");
    }
    let mut slices = Vec::with_capacity(s.xs.len());
    let mut rows: Vec<RowCopy> = Vec::new();
    for x in &s.xs {
        let Some((_, step)) = x.dims.split_first() else { bail!(Shape, "Scan sequence input of rank 0") };
        let slice = b.temp(x.dtype, step.to_vec())?;
        rows.push(RowCopy { src: x.clone(), dst: slice.clone(), elems: slice.numel(), row_in_src: true });
        slices.push(slice);
    }
    let args: Vec<Operand> = s.state.iter().chain(&s.bcast).chain(&slices).cloned().collect();
    let in_place = in_place_carries(&a.body, s.state.len());
    let mut outs = Vec::new();
    let body = b.record(|b| {
        let dests: Vec<Option<Operand>> = s.state.iter().zip(&in_place).map(|(st, &p)| p.then(|| st.clone())).collect();
        outs = lower_graph(b, &a.body, &args, &dests, "Scan body")?;
        Ok(())
    })?;
    let Some(ys_vals) = outs.get(s.state.len()..) else {
        bail!(Subgraph, "the Scan body returns {} values for {} carries", outs.len(), s.state.len())
    };
    ensure!(ys_vals.len() == s.ys.len(), Subgraph, "the Scan body returns {} per-step values", ys_vals.len());
    let ys: Vec<RowCopy> = ys_vals
        .iter()
        .zip(&s.ys)
        .map(|(y, out)| RowCopy { src: y.clone(), dst: out.clone(), elems: y.numel(), row_in_src: false })
        .collect();
    let back = b.record(|b| copy_back(b, &outs, &s.state))?;
    let traj: Vec<RowCopy> = s
        .state
        .iter()
        .zip(&s.traj)
        .map(|(st, out)| RowCopy { src: st.clone(), dst: out.clone(), elems: st.numel(), row_in_src: false })
        .collect();
    // One step: slices in, body, rows of the stacked outputs, copy-back, trajectory rows.
    let mut step: Vec<(Kernel, Option<&RowCopy>)> = Vec::new();
    for r in &rows {
        step.extend(r.kernel()?.map(|k| (k, Some(r))));
    }
    step.extend(body.into_iter().map(|k| (k, None)));
    for r in &ys {
        step.extend(r.kernel()?.map(|k| (k, Some(r))));
    }
    step.extend(back.into_iter().map(|k| (k, None)));
    for r in &traj {
        step.extend(r.kernel()?.map(|k| (k, Some(r))));
    }
    let (kernels, movers): (Vec<Kernel>, Vec<Option<&RowCopy>>) = step.into_iter().unzip();
    b.repeat_kernels(length, kernels, |i, j, p| {
        let t = if a.reverse { length - 1 - i } else { i };
        if let Some(Some(r)) = movers.get(j) {
            *p = r.params(t)?;
        }
        Ok(())
    })
}
