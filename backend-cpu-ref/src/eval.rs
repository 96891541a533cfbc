//! Op dispatch: the one exhaustive `match` over [`Op`], written with [`backend_api::dispatch_ops!`]
//! so that the list of kinds cpu-ref does not implement is written once, next to the match, and
//! [`implements`] is derived from it. At compile each node's op becomes a [`Kernel`] (a closure
//! over the op's attributes), so an op this backend does not implement is found at compile, not
//! at run.

use crate::layout::Bindings;
use crate::ops::elementwise::cast;
use crate::ops::norm::fused;
use crate::ops::reduce::{arg, cumsum};
use crate::ops::{
    attention, backward, control, conv, elementwise, indexing, leaf, linalg, movement, norm, random, reduce, sequence,
};
use backend_api::{bail, Error, ErrorKind, Op, Result, Tensor};
use std::collections::HashMap;

/// What a kernel can see of the run besides its inputs.
pub(crate) struct Env<'a> {
    /// Run inputs by name, already checked and with Bool bytes canonicalised.
    pub inputs: &'a HashMap<String, Tensor>,
    /// Params set so far.
    pub params: &'a HashMap<String, Tensor>,
    /// Sizes of symbolic dims.
    pub bindings: &'a Bindings,
}

/// A node's computation: input tensors in, output tensors out.
pub(crate) type Kernel = Box<dyn Fn(&[&Tensor], &Env<'_>) -> Result<Vec<Tensor>> + Send + Sync>;

/// Input `i` of a node, or an `Arity` error.
fn nth<'t>(ins: &[&'t Tensor], i: usize) -> Result<&'t Tensor> {
    match ins.get(i) {
        Some(t) => Ok(t),
        None => bail!(Arity, "missing input {i} (got {} inputs)", ins.len()),
    }
}

/// Boxes a kernel closure (and pins down its higher-ranked signature for inference).
fn k(f: impl Fn(&[&Tensor], &Env<'_>) -> Result<Vec<Tensor>> + Send + Sync + 'static) -> Result<Kernel> {
    Ok(Box::new(f))
}

fn one(t: Tensor) -> Vec<Tensor> {
    vec![t]
}

fn unsupported(op: &Op) -> Error {
    let label = backend_api::spec::op_label(op);
    Error::new(ErrorKind::Unsupported, format!("cpu-ref does not implement {label}"))
}

backend_api::dispatch_ops! {
    /// The kernel of `op`, or `Unsupported` for an op outside the implemented set.
    pub(crate) fn kernel(op: &Op) -> Result<Kernel> = match (op.clone()) {
        Op::Input(a) => k(move |_, env| leaf::input(&a.name, env.inputs).map(one)),
        Op::Param(a) => k(move |_, env| leaf::param(&a.name, env.params).map(one)),
        Op::Constant(a) => {
            let t = leaf::constant(&a)?;
            k(move |_, _| Ok(one(t.clone())))
        }
        Op::Unary(u) => k(move |i, _| elementwise::unary(u, nth(i, 0)?).map(one)),
        Op::Binary(b) => k(move |i, _| elementwise::binary(b, nth(i, 0)?, nth(i, 1)?).map(one)),
        Op::Compare(c) => k(move |i, _| elementwise::compare(c, nth(i, 0)?, nth(i, 1)?).map(one)),
        Op::Where => k(|i, _| elementwise::where_(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?).map(one)),
        Op::Fma => k(|i, _| elementwise::fma(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?).map(one)),
        Op::Cast { to } => k(move |i, _| cast::cast(nth(i, 0)?, to).map(one)),
        Op::Reshape { new_shape } => k(move |i, env| movement::reshape(nth(i, 0)?, &new_shape, env.bindings).map(one)),
        Op::Transpose { perm } => k(move |i, _| movement::transpose(nth(i, 0)?, &perm).map(one)),
        Op::Narrow(a) => k(move |i, _| movement::narrow(nth(i, 0)?, &a).map(one)),
        Op::Concat { axis } => k(move |i, _| movement::concat(i, axis).map(one)),
        Op::Expand { shape } => k(move |i, env| movement::expand(nth(i, 0)?, &shape, env.bindings).map(one)),
        Op::Reverse { axes } => k(move |i, _| movement::reverse(nth(i, 0)?, &axes).map(one)),
        Op::Pad(a) => k(move |i, _| movement::pad(nth(i, 0)?, &a).map(one)),
        Op::Reduce(a) => k(move |i, _| reduce::reduce(nth(i, 0)?, &a).map(one)),
        Op::MatMul => k(|i, _| linalg::matmul(nth(i, 0)?, nth(i, 1)?).map(one)),
        Op::DotGeneral(a) => k(move |i, _| linalg::dot_general(nth(i, 0)?, nth(i, 1)?, &a).map(one)),
        Op::FusedMatMulBiasAct { activation } => {
            k(move |i, _| linalg::fused_matmul_bias_act(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, activation).map(one))
        }
        Op::GroupedMatMul(_) => k(|i, _| linalg::grouped_matmul(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?).map(one)),
        Op::QuantMatMul(a) => k(move |i, _| linalg::quant_matmul(i, a.format).map(one)),
        Op::QuantGroupedMatMul(a) => k(move |i, _| linalg::quant_grouped_matmul(i, a.format).map(one)),
        Op::Softmax { axis } => k(move |i, _| norm::softmax(nth(i, 0)?, axis, false).map(one)),
        Op::LogSoftmax { axis } => k(move |i, _| norm::softmax(nth(i, 0)?, axis, true).map(one)),
        Op::LayerNorm(a) => k(move |i, _| norm::layer_norm(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one)),
        Op::RmsNorm(a) => k(move |i, _| norm::rms_norm(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one)),
        Op::GroupNorm(a) => k(move |i, _| norm::group_norm(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one)),
        Op::LayerNorm2d(a) => k(move |i, _| norm::layer_norm_2d(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one)),
        Op::FusedResidualLayerNorm(a) => k(move |i, _| fused::fused_residual_norm(i, &a, fused::Norm::Layer)),
        Op::FusedResidualRmsNorm(a) => k(move |i, _| fused::fused_residual_norm(i, &a, fused::Norm::Rms)),
        Op::Rope(a) => k(move |i, _| attention::rope::rope(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, &a).map(one)),
        Op::RopeBackward(a) => {
            k(move |i, _| attention::rope::rope_backward(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, &a).map(one))
        }
        Op::Gather(a) => k(move |i, _| indexing::gather(nth(i, 0)?, nth(i, 1)?, a.axis).map(one)),
        Op::ScatterAdd(a) => k(move |i, _| indexing::scatter_add(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, a.axis).map(one)),
        Op::GatherBackward(a) => {
            k(move |i, env| indexing::gather_backward(nth(i, 0)?, nth(i, 1)?, &a, env.bindings).map(one))
        }
        Op::ArgMax(a) => k(move |i, _| arg::arg_reduce(nth(i, 0)?, &a, true).map(one)),
        Op::ArgMin(a) => k(move |i, _| arg::arg_reduce(nth(i, 0)?, &a, false).map(one)),
        Op::TopK(a) => k(move |i, _| arg::top_k(nth(i, 0)?, &a)),
        Op::Cumsum(a) => k(move |i, _| cumsum::cumsum(nth(i, 0)?, &a).map(one)),
        Op::CumsumBackward(a) => k(move |i, _| cumsum::cumsum_backward(nth(i, 0)?, &a).map(one)),
        Op::SoftmaxCrossEntropy(a) => {
            k(move |i, _| norm::softmax_cross_entropy(nth(i, 0)?, nth(i, 1)?, a.axis).map(one))
        }
        Op::SoftmaxCrossEntropyBackward(a) => {
            k(move |i, _| backward::softmax_cross_entropy_backward(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, a.axis).map(one))
        }
        Op::RngBits(a) => k(move |i, env| random::rng_bits(nth(i, 0)?, &a, env.bindings).map(one)),
        Op::RngUniform(a) => k(move |i, env| random::rng_uniform(nth(i, 0)?, &a, env.bindings).map(one)),
        Op::RngNormal(a) => k(move |i, env| random::rng_normal(nth(i, 0)?, &a, env.bindings).map(one)),
        Op::Sample(a) => k(move |i, _| random::sample(nth(i, 0)?, nth(i, 1)?, &a).map(one)),
        Op::Attention(a) => k(move |i, _| {
            attention::sdpa::attention(nth(i, 0)?, nth(i, 1)?, nth(i, 2)?, i.get(3..).unwrap_or(&[]), &a).map(one)
        }),
        Op::Conv(a) => k(move |i, _| conv::conv(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one)),
        Op::ConvTranspose(a) => {
            k(move |i, _| conv::conv_transpose(nth(i, 0)?, nth(i, 1)?, i.get(2).copied(), &a).map(one))
        }
        Op::ResizeNearest(a) => k(move |i, _| conv::resize_nearest(nth(i, 0)?, &a.scales).map(one)),
        Op::Pool(a) => k(move |i, _| conv::pool::pool(nth(i, 0)?, &a).map(one)),
        Op::Im2Col(a) => k(move |i, _| conv::im2col::im2col(nth(i, 0)?, &a).map(one)),
        Op::If(a) => {
            let then_g = control::Body::new(&a.then_graph, "If then_graph")?;
            let else_g = control::Body::new(&a.else_graph, "If else_graph")?;
            k(move |i, env| control::if_(&then_g, &else_g, i, env))
        }
        Op::While(a) => {
            let cond = control::Body::new(&a.cond_graph, "While cond_graph")?;
            let body = control::Body::new(&a.body_graph, "While body_graph")?;
            k(move |i, env| control::while_(&cond, &body, &a, i, env))
        }
        Op::Scan(a) => {
            let body = control::Body::new(&a.body, "Scan body")?;
            k(move |i, env| sequence::scan(&body, &a, i, env))
        }
        Op::Rnn(a) => k(move |i, _| sequence::recurrent::rnn(&a, i)),
        Op::Gru(a) => k(move |i, _| sequence::recurrent::gru(&a, i)),
        Op::Lstm(a) => k(move |i, _| sequence::recurrent::lstm(&a, i)),
        Op::SelectiveScan(a) => k(move |i, _| sequence::ssm::selective_scan(i, &a)),
        Op::Mamba2(a) => k(move |i, _| sequence::ssm::mamba2(i, &a)),
        Op::GatedDeltaNet(a) => k(move |i, _| sequence::delta::gated_delta_net(i, &a)),
    }
    // Every kind cpu-ref does not implement, each named once (legalisation may still reach some
    // of them through their decompositions).
    missing => Err(unsupported(op)),
    [AttentionBackward,
     Fft, LogMel, WelchPeaks,
     ElementwiseRegion, BatchElementwiseRegion, TransformRegion, Custom, LayerNormBackward, RmsNormBackward,
     LogMelBackward;
    splat: GaussianSplatPrepare, GaussianSplatRasterize, GaussianSplatRender, GaussianSplatRenderBackward]
    /// Whether [`kernel`] implements ops of `kind` (the complement of the `missing` list).
    pub(crate) fn implements;
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::OpKind;

    #[test]
    fn non_core_ops_are_unsupported_by_name() {
        let Err(e) = kernel(&Op::Fft(Default::default())) else { panic!("Fft should be unsupported") };
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.message().contains("Fft"), "{e}");
        assert!(kernel(&Op::MatMul).is_ok());
    }

    #[test]
    fn the_predicate_agrees_with_the_dispatch() {
        assert!(implements(OpKind::MatMul) && implements(OpKind::Unary) && implements(OpKind::Sample));
        assert!(!implements(OpKind::Fft) && !implements(OpKind::AttentionBackward));
    }
}
