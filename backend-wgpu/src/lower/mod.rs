//! Lowering: one file per op family turns a node into [`Kernel`] records (shader, bindings, params
//! struct, grid). `compile.rs` calls [`lower`] for every node and adds node context to errors.
//!
//! Binding order is the same everywhere: binding 0 is the kernel's uniform params struct, then the
//! node's inputs, then its outputs, then scratch buffers, in the order the kernel lists them.

mod elementwise;
mod indexing;
mod linalg;
mod movement;
mod norm;
mod ordering;
mod random;
mod reduce;

use crate::device::DeviceCaps;
use crate::pipelines::BindKind;
use backend_api::op::Op;
use backend_api::{bail, DType, Node, Result};

/// A tensor range a kernel binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buf {
    /// The node's input `k`.
    In(usize),
    /// The node's output `k`.
    Out(usize),
    /// Scratch buffer `k` of this node (sizes in [`Lowered::temps`]).
    Temp(usize),
}

/// How many invocations a kernel needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One invocation per item, in workgroups of 256 over a 2-D grid (see `linear_id` in
    /// `common.wgsl`); the kernel bounds-checks.
    Threads(u64),
    /// An explicit workgroup grid.
    Workgroups([u32; 3]),
}

/// One dispatch of one kernel.
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
    /// Output 0 is input `k`'s memory unchanged (Reshape): no work.
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

/// Number of u32 words of a tensor of `numel` elements of `d`.
pub fn words(d: DType, numel: usize) -> u64 {
    ((numel * d.size()) as u64).div_ceil(4)
}

/// Lowers one node. Leaves are handled by the planner and never reach here.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    let op = &ctx.node.op;
    let unsupported = || -> Result<Lowered> {
        bail!(Unsupported, "the wgpu backend does not lower {} yet", backend_api::spec::op_label(op))
    };
    match op {
        Op::Input(_) | Op::Param(_) | Op::Constant(_) => bail!(Unsupported, "leaves are not lowered"),
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Where | Op::Fma | Op::Cast { .. } => {
            elementwise::lower(ctx)
        }
        Op::Reshape { .. } => Ok(Lowered::Alias(0)),
        Op::Transpose { .. }
        | Op::Narrow(_)
        | Op::Concat { .. }
        | Op::Expand { .. }
        | Op::Reverse { .. }
        | Op::Pad(_) => movement::lower(ctx),
        Op::Reduce(_) => reduce::lower(ctx),
        Op::MatMul | Op::DotGeneral(_) | Op::FusedMatMulBiasAct { .. } => linalg::lower(ctx),
        Op::Softmax { .. } | Op::LogSoftmax { .. } | Op::LayerNorm(_) | Op::RmsNorm(_) => norm::lower(ctx),
        Op::Gather(_) | Op::ScatterAdd(_) | Op::GatherBackward(_) => indexing::lower(ctx),
        Op::ArgMax(_)
        | Op::ArgMin(_)
        | Op::TopK(_)
        | Op::Cumsum(_)
        | Op::CumsumBackward(_)
        | Op::SoftmaxCrossEntropy(_)
        | Op::SoftmaxCrossEntropyBackward(_) => ordering::lower(ctx),
        Op::RngBits(_) | Op::RngUniform(_) | Op::RngNormal(_) | Op::Sample(_) => random::lower(ctx),
        Op::GroupedMatMul(_)
        | Op::QuantMatMul(_)
        | Op::QuantGroupedMatMul(_)
        | Op::GroupNorm(_)
        | Op::LayerNorm2d(_)
        | Op::FusedResidualLayerNorm(_)
        | Op::FusedResidualRmsNorm(_)
        | Op::Attention(_)
        | Op::AttentionBackward(_)
        | Op::Rope(_)
        | Op::RopeBackward(_)
        | Op::Conv(_)
        | Op::ConvTranspose(_)
        | Op::Pool(_)
        | Op::Im2Col(_)
        | Op::ResizeNearest(_)
        | Op::Rnn(_)
        | Op::Gru(_)
        | Op::Lstm(_)
        | Op::SelectiveScan(_)
        | Op::Mamba2(_)
        | Op::GatedDeltaNet(_)
        | Op::Scan(_)
        | Op::Fft(_)
        | Op::LogMel(_)
        | Op::WelchPeaks(_)
        | Op::If(_)
        | Op::While(_)
        | Op::ElementwiseRegion(_)
        | Op::BatchElementwiseRegion(_)
        | Op::TransformRegion(_)
        | Op::Custom(_)
        | Op::LayerNormBackward(_)
        | Op::RmsNormBackward(_)
        | Op::LogMelBackward(_) => unsupported(),
        #[cfg(feature = "splat")]
        Op::GaussianSplatPrepare(_)
        | Op::GaussianSplatRasterize(_)
        | Op::GaussianSplatRender(_)
        | Op::GaussianSplatRenderBackward(_) => unsupported(),
    }
}

/// Collapses axes that can be merged for every operand: returns (dims, per-operand strides).
/// Two adjacent axes merge when, for every operand, stride[k] == stride[k+1] * dims[k+1].
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
