//! The node-position interface that family lowerings used before [`super::builder`]: kept only
//! while families move to the builder, and adapted to it by [`run`].

pub use super::builder::Buf;
use super::builder::{Lower, Operand, Window};
use super::{Grid, NodeIo};
use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::{bail, DType, Node, Result};

/// One dispatch whose bindings name the node's inputs and outputs by position.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Complete WGSL source (entry point `main`).
    pub source: String,
    /// Storage bindings 1.. in order (binding 0 is the params uniform).
    pub bindings: Vec<(Buf, BindKind)>,
    /// Bytes of the params uniform (padded by the runtime to 16).
    pub params: Vec<u8>,
    /// Invocation grid.
    pub grid: Grid,
}

/// What a node becomes.
#[derive(Clone, Debug)]
pub enum Lowered {
    /// Output 0 is input `k`'s memory unchanged: no work.
    Alias(usize),
    /// Kernels run in order, with scratch buffers of the given byte sizes.
    Kernels {
        /// Scratch buffer sizes in bytes.
        temps: Vec<u64>,
        /// Dispatches in order.
        kernels: Vec<Kernel>,
    },
}

/// Everything a family lowering may look at.
pub struct LowerCtx<'a> {
    /// The node.
    pub node: &'a Node,
    /// Static dims and dtype of every input.
    pub inputs: Vec<(DType, Vec<usize>)>,
    /// Static dims and dtype of every output.
    pub outputs: Vec<(DType, Vec<usize>)>,
    /// Device capabilities.
    pub caps: &'a DeviceCaps,
}

impl LowerCtx<'_> {
    /// Elements of output `k`.
    pub fn out_numel(&self, k: usize) -> usize {
        self.outputs[k].1.iter().product()
    }
}

/// A kernel that zeroes `buf` (`words` u32 words): needed before packed atomic stores.
pub fn zero_kernel(buf: Buf, words: u64) -> Kernel {
    let mut params = Vec::new();
    params.extend_from_slice(&(words as u32).to_le_bytes());
    params.resize(16, 0);
    Kernel {
        source: shaders::zero_module(),
        bindings: vec![(buf, BindKind::Write)],
        params,
        grid: Grid::Threads(words),
    }
}

/// A grid of at least `n` workgroups for a node-position lowering ([`Lower::workgroups`]).
pub fn workgroup_grid(ctx: &LowerCtx<'_>, n: usize) -> Result<Grid> {
    Lower::new(ctx.caps, 0).workgroups(n)
}

/// Number of u32 words of a tensor of `numel` elements of `d`.
pub fn words(d: DType, numel: usize) -> u64 {
    ((numel * d.size()) as u64).div_ceil(4)
}

/// Runs a node-position lowering `f` and records what it made in the builder.
pub fn run(b: &mut Lower<'_>, io: &NodeIo<'_>, f: fn(&LowerCtx<'_>) -> Result<Lowered>) -> Result<()> {
    let types = |os: &[Operand]| os.iter().map(|o| (o.dtype, o.dims.clone())).collect();
    let ctx = LowerCtx { node: io.node, inputs: types(&io.inputs), outputs: types(&io.outputs), caps: b.caps() };
    match f(&ctx)? {
        Lowered::Alias(k) => {
            let (Some(out), Some(src)) = (io.outputs.first(), io.inputs.get(k)) else {
                bail!(Arity, "alias of input {k} on a node with {} inputs", io.inputs.len())
            };
            b.alias(out, src)
        }
        Lowered::Kernels { temps, kernels } => {
            let temps: Vec<Window> = temps.into_iter().map(|t| b.temp_bytes(t)).collect();
            for k in kernels {
                let bindings = k
                    .bindings
                    .iter()
                    .map(|(buf, kind)| Ok((window(io, &temps, *buf)?, *kind)))
                    .collect::<Result<Vec<_>>>()?;
                b.push(super::Kernel { source: k.source, bindings, params: k.params, grid: k.grid });
            }
            Ok(())
        }
    }
}

fn window(io: &NodeIo<'_>, temps: &[Window], buf: Buf) -> Result<Window> {
    let w = match buf {
        Buf::In(k) => io.inputs.get(k).map(|o| o.window),
        Buf::Out(k) => io.outputs.get(k).map(|o| o.window),
        Buf::Temp(k) => temps.get(k).copied(),
    };
    match w {
        Some(w) => Ok(w),
        None => bail!(Arity, "a kernel binds {buf:?}, which the node does not have"),
    }
}
