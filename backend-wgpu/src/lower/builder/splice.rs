//! Splicing a child builder's lowering into its parent ([`Lower::splice`]): how a subgraph's
//! node, lowered on its own, becomes part of the control op that holds it.

use super::{Buf, Kernel, Lower, Lowering, Repeat, Step, Window};
use backend_api::{bail, ensure, Result};

impl Lower<'_> {
    /// Appends what a child builder lowered (one node of a subgraph), its buffers renamed into
    /// this builder: the child's input `k` is `ins[k]`, its output `k` is `outs[k]` unless the
    /// child aliased it; its scratch, control buffers, params and constants become this
    /// builder's. Returns the window each child output ended up in (`outs[k]`, or the window of
    /// an input it aliases).
    pub fn splice(&mut self, child: Lowering, ins: &[Window], outs: &[Window]) -> Result<Vec<Window>> {
        let temps: Vec<Window> = child.temps.iter().map(|&t| self.temp_bytes(t)).collect();
        let controls: Vec<Window> = child.controls.iter().map(|&c| self.control(c)).collect::<Result<_>>()?;
        let mut consts = Vec::with_capacity(child.consts.len());
        for data in child.consts {
            self.out.consts.push(data);
            consts.push(self.out.consts.len() - 1);
        }
        let params: Vec<usize> = child.params.iter().map(|(name, bytes)| self.param_index(name, *bytes)).collect();
        let names = Names { ins, outs, temps: &temps, controls: &controls, params: &params, consts: &consts };
        let mut windows = Vec::with_capacity(outs.len());
        for (k, w) in outs.iter().enumerate() {
            match child.aliases.get(k).copied().flatten() {
                Some(a) => windows.push(names.rename(&a)?),
                None => windows.push(*w),
            }
        }
        for step in child.steps {
            let renamed = match step {
                Step::Kernel(k) => Step::Kernel(names.kernel(k)?),
                Step::Repeat(r) => {
                    let body = r.body.into_iter().map(|k| names.kernel(k)).collect::<Result<_>>()?;
                    Step::Repeat(Repeat { body, params: r.params })
                }
            };
            self.out.steps.push(renamed);
        }
        Ok(windows)
    }
}

/// What a child builder's buffers are in its parent ([`Lower::splice`]).
struct Names<'n> {
    ins: &'n [Window],
    outs: &'n [Window],
    temps: &'n [Window],
    controls: &'n [Window],
    params: &'n [usize],
    consts: &'n [usize],
}

impl Names<'_> {
    /// `w`, a window of the child, as a window of the parent.
    fn rename(&self, w: &Window) -> Result<Window> {
        let pick = |v: &[Window], k: usize, what: &str| match v.get(k) {
            Some(b) => Ok(*b),
            None => bail!(Arity, "a spliced kernel binds {what} {k}, which the child does not have"),
        };
        let whole = |buf: Buf| Window { buf, offset: 0, bytes: u64::MAX };
        let base = match w.buf {
            Buf::In(k) => pick(self.ins, k, "input")?,
            Buf::Out(k) => pick(self.outs, k, "output")?,
            Buf::Temp(k) => pick(self.temps, k, "scratch buffer")?,
            Buf::Control(k) => pick(self.controls, k, "control buffer")?,
            Buf::Param(k) => match self.params.get(k) {
                Some(&p) => whole(Buf::Param(p)),
                None => bail!(Arity, "a spliced kernel binds param {k}, which the child does not have"),
            },
            Buf::Const(k) => match self.consts.get(k) {
                Some(&c) => whole(Buf::Const(c)),
                None => bail!(Arity, "a spliced kernel binds constant {k}, which the child does not have"),
            },
        };
        let end = w.offset.checked_add(w.bytes);
        ensure!(
            end.is_some_and(|e| e <= base.bytes),
            Shape,
            "a window of {} bytes at byte {} leaves the {} bytes it is spliced into",
            w.bytes,
            w.offset,
            base.bytes
        );
        match base.offset.checked_add(w.offset) {
            Some(offset) => Ok(Window { buf: base.buf, offset, bytes: w.bytes }),
            None => bail!(DeviceLimit, "a window at byte {} overflows 64 bits", w.offset),
        }
    }

    /// `k` with every window renamed.
    fn kernel(&self, mut k: Kernel) -> Result<Kernel> {
        for (w, _) in &mut k.bindings {
            *w = self.rename(w)?;
        }
        if let crate::lower::Grid::Indirect(w) = k.grid {
            k.grid = crate::lower::Grid::Indirect(self.rename(&w)?);
        }
        Ok(k)
    }
}
