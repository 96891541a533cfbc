//! Lowering: every node becomes kernels through the [`builder`] API. The one dispatch below
//! ([`lower`]) hands each family its node's typed attributes and operands; the kinds it does not
//! lower are listed once there, and [`lowers`] (what legalisation and `capabilities()` ask) is
//! derived from that list.
//!
//! Binding order is the same everywhere: binding 0 is the kernel's uniform params struct, then the
//! storage windows in the order the kernel lists them.

pub mod builder;
mod elementwise;
mod indexing;
mod legacy;
mod linalg;
mod movement;
mod norm;
mod ordering;
mod random;
mod reduce;
#[cfg(test)]
mod tests;

pub use builder::{Buf, Kernel, Lower, Lowering, Operand, Window};

use backend_api::op::Op;
use backend_api::{bail, spec::op_label, Node, Result};

/// How many invocations a kernel needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One invocation per item, in workgroups of 256 over a 2-D grid (see `linear_id` in
    /// `common.wgsl`); the kernel bounds-checks.
    Threads(u64),
    /// An explicit workgroup grid.
    Workgroups([u32; 3]),
}

/// A node lowering: [`lower`] in the product; tests compile with their own to run hand-built
/// kernels (a composite op, the control-flow mechanism) through the real compile and run path.
pub type LowerFn = fn(&mut Lower<'_>, &NodeIo<'_>) -> Result<()>;

/// A node and the operands of its inputs and outputs (whole values).
pub struct NodeIo<'a> {
    /// The node.
    pub node: &'a Node,
    /// Operand of each input, `Buf::In(k)`.
    pub inputs: Vec<Operand>,
    /// Operand of each output, `Buf::Out(k)`.
    pub outputs: Vec<Operand>,
}

impl NodeIo<'_> {
    /// Input `k`'s operand.
    pub fn input(&self, k: usize) -> Result<&Operand> {
        match self.inputs.get(k) {
            Some(o) => Ok(o),
            None => bail!(Arity, "{} has no input {k} (it has {})", op_label(&self.node.op), self.inputs.len()),
        }
    }

    /// Input `k`'s operand, if the node has one (optional trailing inputs).
    pub fn opt_input(&self, k: usize) -> Option<&Operand> {
        self.inputs.get(k)
    }

    /// Output `k`'s operand.
    pub fn output(&self, k: usize) -> Result<&Operand> {
        match self.outputs.get(k) {
            Some(o) => Ok(o),
            None => bail!(Arity, "{} has no output {k} (it has {})", op_label(&self.node.op), self.outputs.len()),
        }
    }
}

fn not_lowered(op: &Op) -> Result<()> {
    bail!(Unsupported, "the wgpu backend does not lower {} yet", op_label(op))
}

fn leaf(op: &Op) -> Result<()> {
    bail!(Arity, "{} is a leaf: the memory plan places it, nothing lowers it", op_label(op))
}

backend_api::dispatch_ops! {
    /// Lowers one node into `b`. Leaves never reach here (the memory plan places them).
    pub fn lower(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> = match (&io.node.op) {
        Op::Input(_) | Op::Param(_) | Op::Constant(_) => leaf(&io.node.op),
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Where | Op::Fma | Op::Cast { .. } => {
            legacy::run(b, io, elementwise::lower)
        }
        Op::Reshape { .. } => match (io.outputs.first(), io.inputs.first()) {
            (Some(out), Some(x)) => b.alias(out, x),
            _ => bail!(Arity, "Reshape takes one input and makes one output"),
        },
        Op::Transpose { .. } | Op::Narrow(_) | Op::Concat { .. } | Op::Expand { .. } | Op::Reverse { .. } | Op::Pad(_) => {
            legacy::run(b, io, movement::lower)
        }
        Op::Reduce(_) => legacy::run(b, io, reduce::lower),
        Op::MatMul => linalg::matmul(b, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::FusedMatMulBiasAct { activation } => {
            linalg::fused_matmul_bias_act(b, *activation, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?)
        }
        Op::DotGeneral(a) => linalg::dot_general(b, a, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::Softmax { axis } => norm::softmax(b, *axis, io.input(0)?, io.output(0)?),
        Op::LogSoftmax { axis } => norm::log_softmax(b, *axis, io.input(0)?, io.output(0)?),
        Op::LayerNorm(a) => norm::layer_norm(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::RmsNorm(a) => norm::rms_norm(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::Gather(_) | Op::ScatterAdd(_) | Op::GatherBackward(_) => legacy::run(b, io, indexing::lower),
        Op::ArgMax(_)
        | Op::ArgMin(_)
        | Op::TopK(_)
        | Op::Cumsum(_)
        | Op::CumsumBackward(_)
        | Op::SoftmaxCrossEntropy(_)
        | Op::SoftmaxCrossEntropyBackward(_) => legacy::run(b, io, ordering::lower),
        Op::RngBits(_) | Op::RngUniform(_) | Op::RngNormal(_) | Op::Sample(_) => legacy::run(b, io, random::lower),
    }
    missing => not_lowered(&io.node.op),
    [
        GroupedMatMul, QuantMatMul, QuantGroupedMatMul, GroupNorm, LayerNorm2d, FusedResidualLayerNorm,
        FusedResidualRmsNorm, Attention, AttentionBackward, Rope, RopeBackward, Conv, ConvTranspose, Pool,
        Im2Col, ResizeNearest, Rnn, Gru, Lstm, SelectiveScan, Mamba2, GatedDeltaNet, Scan, Fft, LogMel,
        WelchPeaks, If, While, ElementwiseRegion, BatchElementwiseRegion, TransformRegion, Custom,
        LayerNormBackward, RmsNormBackward, LogMelBackward,
        #[cfg(feature = "splat")] GaussianSplatPrepare,
        #[cfg(feature = "splat")] GaussianSplatRasterize,
        #[cfg(feature = "splat")] GaussianSplatRender,
        #[cfg(feature = "splat")] GaussianSplatRenderBackward,
    ]
    /// Whether this backend lowers `kind` natively: the complement of the `missing` list above.
    pub fn lowers;
}

/// Collapses axes that can be merged for every operand: returns (dims, per-operand strides).
/// Two adjacent axes merge when, for every operand, `stride[k] == stride[k+1] * dims[k+1]`.
pub fn collapse(dims: &[usize], strides: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut d: Vec<usize> = Vec::new();
    let mut s: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
    for k in 0..dims.len() {
        if dims[k] == 1 {
            continue;
        }
        let mergeable =
            !d.is_empty() && strides.iter().enumerate().all(|(o, st)| s[o].last().copied() == Some(st[k] * dims[k]));
        if mergeable {
            if let Some(last) = d.last_mut() {
                *last *= dims[k];
            }
            for (o, st) in strides.iter().enumerate() {
                if let Some(l) = s[o].last_mut() {
                    *l = st[k];
                }
            }
        } else {
            d.push(dims[k]);
            for (o, st) in strides.iter().enumerate() {
                s[o].push(st[k]);
            }
        }
    }
    (d, s)
}

/// Appends `v` as little-endian u32s, padded to a multiple of 4 entries (a WGSL
/// `array<vec4<u32>, n>`), with `n4` vec4s in total.
pub fn push_u32_array(out: &mut Vec<u8>, v: &[usize], n4: usize) -> Result<()> {
    if v.len() > n4 * 4 {
        bail!(DeviceLimit, "rank {} exceeds the kernel's {} dims", v.len(), n4 * 4);
    }
    for k in 0..n4 * 4 {
        let x = v.get(k).copied().unwrap_or(0);
        let x = u32::try_from(x).map_err(|_| {
            backend_api::Error::new(backend_api::ErrorKind::DeviceLimit, format!("index {x} does not fit 32 bits"))
        })?;
        out.extend_from_slice(&x.to_le_bytes());
    }
    Ok(())
}
