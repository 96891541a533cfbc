//! Lowering: every node becomes kernels through the [`builder`] API. The one dispatch below
//! ([`lower`]) hands each family its node's typed attributes and operands; the kinds it does not
//! lower are listed once there, and [`lowers`] (what legalisation and `capabilities()` ask) is
//! derived from that list.
//!
//! Binding order is the same everywhere: binding 0 is the kernel's uniform params struct, then the
//! storage windows in the order the kernel lists them.

mod attention;
mod backward;
pub mod builder;
pub mod control;
mod conv;
mod elementwise;
mod indexing;
mod linalg;
mod movement;
mod norm;
mod random;
mod reduce;
mod sequence;
#[cfg(test)]
mod tests;

pub use builder::{Buf, Kernel, Lower, Lowering, Operand, Repeat, Step, Window};

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
    /// Workgroup counts that an earlier kernel of the run wrote on the GPU: three u32 words
    /// (x, y, z) at the start of a window of a control buffer ([`Buf::Control`]). Zero counts
    /// dispatch nothing (a false branch, a finished loop). The kernel must not bind that
    /// control buffer itself.
    Indirect(Window),
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

    /// Whether every output is empty: such a node writes nothing and is not lowered, so no
    /// lowering computes strides or row counts from the non-empty dims of an empty tensor (a
    /// [2^40, 2^40, 0] tensor has 0 bytes, but its leading dims multiply past 64 bits). Graph
    /// validation has already checked its operands.
    pub fn writes_nothing(&self) -> bool {
        !self.outputs.is_empty() && self.outputs.iter().all(|o| o.window.bytes == 0)
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
        Op::Unary(u) => elementwise::unary(b, *u, io.input(0)?, io.output(0)?),
        Op::Binary(o) => elementwise::binary(b, *o, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::Compare(c) => elementwise::compare(b, *c, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::Where => elementwise::where_(b, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::Fma => elementwise::fma(b, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::Cast { to } => elementwise::cast(b, *to, io.input(0)?, io.output(0)?),
        Op::Reshape { .. } => match (io.outputs.first(), io.inputs.first()) {
            (Some(out), Some(x)) => b.alias(out, x),
            _ => bail!(Arity, "Reshape takes one input and makes one output"),
        },
        Op::Transpose { perm } => movement::transpose(b, perm, io.input(0)?, io.output(0)?),
        Op::Narrow(a) => movement::narrow(b, a, io.input(0)?, io.output(0)?),
        Op::Concat { axis } => movement::concat(b, *axis, &io.inputs.iter().collect::<Vec<_>>(), io.output(0)?),
        Op::Expand { .. } => movement::expand(b, io.input(0)?, io.output(0)?),
        Op::Reverse { axes } => movement::reverse(b, axes, io.input(0)?, io.output(0)?),
        Op::Pad(a) => movement::pad(b, a, io.input(0)?, io.output(0)?),
        Op::Reduce(a) => reduce::reduce(b, a, io.input(0)?, io.output(0)?),
        Op::ArgMax(a) => reduce::arg_max(b, a, io.input(0)?, io.output(0)?),
        Op::ArgMin(a) => reduce::arg_min(b, a, io.input(0)?, io.output(0)?),
        Op::TopK(a) => reduce::top_k(b, a, io.input(0)?, io.output(0)?, io.output(1)?),
        Op::Cumsum(a) => reduce::cumsum(b, a, io.input(0)?, io.output(0)?),
        Op::CumsumBackward(a) => reduce::cumsum_backward(b, a, io.input(0)?, io.output(0)?),
        Op::MatMul => linalg::matmul(b, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::FusedMatMulBiasAct { activation } => {
            linalg::fused_matmul_bias_act(b, *activation, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?)
        }
        Op::DotGeneral(a) => linalg::dot_general(b, a, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::GroupedMatMul(_) => linalg::grouped_matmul(b, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::QuantMatMul(a) => linalg::quant_matmul(b, a.format, io.input(0)?, io.inputs.get(1..).unwrap_or(&[]), io.output(0)?),
        Op::QuantGroupedMatMul(a) => match io.inputs.as_slice() {
            [x, ws @ .., expert] => linalg::quant_grouped_matmul(b, a.format, x, ws, expert, io.output(0)?),
            _ => bail!(Arity, "QuantGroupedMatMul takes x, the weight inputs and expert"),
        },
        Op::Softmax { axis } => norm::softmax(b, *axis, io.input(0)?, io.output(0)?),
        Op::LogSoftmax { axis } => norm::log_softmax(b, *axis, io.input(0)?, io.output(0)?),
        Op::LayerNorm(a) => norm::layer_norm(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::RmsNorm(a) => norm::rms_norm(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::GroupNorm(a) => norm::group_norm(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::LayerNorm2d(a) => norm::layer_norm_2d(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::FusedResidualLayerNorm(a) => norm::fused_residual_norm(b, shaders::norm::NormKind::LayerNorm, a, io),
        Op::FusedResidualRmsNorm(a) => norm::fused_residual_norm(b, shaders::norm::NormKind::RmsNorm, a, io),
        Op::SoftmaxCrossEntropy(a) => norm::softmax_cross_entropy(b, a, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::Rope(a) => attention::rope(b, a, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::RopeBackward(a) => attention::rope_backward(b, a, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::Gather(a) => indexing::gather(b, a.axis, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::ScatterAdd(a) => indexing::scatter_add(b, a.axis, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?),
        Op::GatherBackward(a) => indexing::gather_backward(b, a.axis, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::SoftmaxCrossEntropyBackward(a) => {
            backward::softmax_cross_entropy_backward(b, a, io.input(0)?, io.input(1)?, io.input(2)?, io.output(0)?)
        }
        Op::RngBits(a) => random::rng_bits(b, a, io.input(0)?, io.output(0)?),
        Op::RngUniform(a) => random::rng_uniform(b, a, io.input(0)?, io.output(0)?),
        Op::RngNormal(a) => random::rng_normal(b, a, io.input(0)?, io.output(0)?),
        Op::Sample(a) => random::sample(b, a, io.input(0)?, io.input(1)?, io.output(0)?),
        Op::Attention(a) => attention::attention(b, a, io),
        Op::Pool(a) => conv::pool(b, a, io.input(0)?, io.output(0)?),
        Op::Im2Col(a) => conv::im2col(b, a, io.input(0)?, io.output(0)?),
        Op::ResizeNearest(a) => conv::resize_nearest(b, &a.scales, io.input(0)?, io.output(0)?),
        Op::Conv(a) => conv::conv(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::ConvTranspose(a) => conv::conv_transpose(b, a, io.input(0)?, io.input(1)?, io.opt_input(2), io.output(0)?),
        Op::If(a) => control::if_(b, a, io),
        Op::While(a) => control::while_(b, a, io),
        Op::Scan(a) => control::scan(b, a, io),
    }
    missing => not_lowered(&io.node.op),
    [
        AttentionBackward,
        Rnn, Gru, Lstm, SelectiveScan, Mamba2, GatedDeltaNet, Fft, LogMel,
        WelchPeaks, ElementwiseRegion, BatchElementwiseRegion, TransformRegion, Custom,
        LayerNormBackward, RmsNormBackward, LogMelBackward;
        splat:  GaussianSplatPrepare, GaussianSplatRasterize, GaussianSplatRender, GaussianSplatRenderBackward]
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
