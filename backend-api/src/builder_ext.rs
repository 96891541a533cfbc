//! [`GraphBuilder`] methods for the ops outside the core set (§2.4–2.17). They take the spec's
//! looser forms (negative axes, optional inputs as `Option<Value>`, list shorthands) and store the
//! canonical attributes; the flags that say which optional inputs exist are set from the options.

use crate::op::*;
use crate::shape::canon_axis;
use crate::{DType, Graph, GraphBuilder, Result, Shape, TensorType, Value};

/// The two outputs of an op, in order.
fn two(v: Vec<Value>) -> Result<(Value, Value)> {
    match v[..] {
        [a, b, ..] => Ok((a, b)),
        _ => crate::bail!(Arity, "expected two outputs, the op produced {}", v.len()),
    }
}

impl GraphBuilder {
    fn type_of(&self, v: Value) -> Result<TensorType> {
        self.value_type(v).cloned()
    }

    fn axis_in(&self, v: Value, axis: i64) -> Result<usize> {
        canon_axis(axis, self.value_type(v)?.rank())
    }

    /// Spatial dims of an N-C-spatial value (0 when the rank is too small; validation reports it).
    fn spatial(&self, x: Value) -> Result<usize> {
        Ok(self.value_type(x)?.rank().saturating_sub(2))
    }

    // ---- indexing (§2.4)
    /// `Gather` of `data` along `axis` at `indices`.
    pub fn gather(&mut self, data: Value, indices: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(data, axis)?;
        self.add1(Op::Gather(GatherAttrs { axis }), &[data, indices])
    }
    /// `ScatterAdd` of `updates` into `data` along `axis` at `indices`.
    pub fn scatter_add(&mut self, data: Value, indices: Value, updates: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(data, axis)?;
        self.add1(Op::ScatterAdd(ScatterAddAttrs { axis }), &[data, indices, updates])
    }
    /// `GatherBackward`: the gradient of `Gather(data, indices, axis)` for a `data` of `data_shape`.
    pub fn gather_backward(
        &mut self,
        dy: Value,
        indices: Value,
        axis: i64,
        data_shape: impl Into<Shape>,
    ) -> Result<Value> {
        let data_shape = data_shape.into();
        let axis = canon_axis(axis, data_shape.rank())?;
        self.add1(Op::GatherBackward(GatherBackwardAttrs { axis, data_shape }), &[dy, indices])
    }

    // ---- arg-reductions, TopK, Cumsum (§2.5)
    /// `ArgMax` along `axis`.
    pub fn arg_max(&mut self, x: Value, axis: i64, keep_dims: bool, index_dtype: DType) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::ArgMax(ArgReduceAttrs { axis, keep_dims, index_dtype }), &[x])
    }
    /// `ArgMin` along `axis`.
    pub fn arg_min(&mut self, x: Value, axis: i64, keep_dims: bool, index_dtype: DType) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::ArgMin(ArgReduceAttrs { axis, keep_dims, index_dtype }), &[x])
    }
    /// `TopK`: `(values, indices)` of the `k` largest (or smallest) elements along `axis`.
    pub fn top_k(
        &mut self,
        x: Value,
        k: usize,
        axis: i64,
        largest: bool,
        index_dtype: DType,
    ) -> Result<(Value, Value)> {
        let axis = self.axis_in(x, axis)?;
        two(self.add(Op::TopK(TopKAttrs { k, axis, largest, index_dtype }), &[x])?)
    }
    /// `Cumsum` along `axis`.
    pub fn cumsum(&mut self, x: Value, axis: i64, exclusive: bool, reverse: bool) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::Cumsum(CumsumAttrs { axis, exclusive, reverse }), &[x])
    }
    /// `CumsumBackward` with the forward op's attributes.
    pub fn cumsum_backward(&mut self, dy: Value, axis: i64, exclusive: bool, reverse: bool) -> Result<Value> {
        let a = CumsumAttrs { axis: self.axis_in(dy, axis)?, exclusive, reverse };
        crate::infer::cumsum_backward(&a, &[self.type_of(dy)?])?;
        self.add1(Op::CumsumBackward(a), &[dy])
    }

    // ---- grouped and quantised matmul (§2.6.4–2.6.6)
    /// `GroupedMatMul`: row `m` of `x [M, K]` times `w[expert[m]]` of `w [E, K, N]`.
    pub fn grouped_matmul(&mut self, x: Value, w: Value, expert: Value) -> Result<Value> {
        self.add1(Op::GroupedMatMul(GroupedMatMulAttrs {}), &[x, w, expert])
    }
    /// `QuantMatMul`: `x [..., K]` times the decoded `W[N, K]ᵀ`; `weights` as the format lists.
    pub fn quant_matmul(&mut self, x: Value, weights: &[Value], format: QuantFormat) -> Result<Value> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).collect();
        self.add1(Op::QuantMatMul(QuantMatMulAttrs { format }), &ins)
    }
    /// `QuantGroupedMatMul`: `weights` each with a leading expert dim, then `expert [M]`.
    pub fn quant_grouped_matmul(
        &mut self,
        x: Value,
        weights: &[Value],
        expert: Value,
        format: QuantFormat,
    ) -> Result<Value> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).chain([expert]).collect();
        self.add1(Op::QuantGroupedMatMul(QuantMatMulAttrs { format }), &ins)
    }

    // ---- normalisation (§2.7) and its backward ops (§2.16)
    /// `SoftmaxCrossEntropy` over the class `axis` (spec default −1).
    pub fn softmax_cross_entropy(&mut self, logits: Value, targets: Value, axis: i64) -> Result<Value> {
        let axis = self.axis_in(logits, axis)?;
        self.add1(Op::SoftmaxCrossEntropy(SoftmaxCrossEntropyAttrs { axis }), &[logits, targets])
    }
    /// `SoftmaxCrossEntropyBackward`: `d_logits` given the loss gradient `d_loss`.
    pub fn softmax_cross_entropy_backward(
        &mut self,
        logits: Value,
        targets: Value,
        d_loss: Value,
        axis: i64,
    ) -> Result<Value> {
        let axis = self.axis_in(logits, axis)?;
        self.add1(Op::SoftmaxCrossEntropyBackward(SoftmaxCrossEntropyAttrs { axis }), &[logits, targets, d_loss])
    }
    /// `GroupNorm` of `x [N, C, *spatial]` in `num_groups` channel groups.
    pub fn group_norm(
        &mut self,
        x: Value,
        gamma: Value,
        beta: Option<Value>,
        num_groups: u32,
        eps: f32,
    ) -> Result<Value> {
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::GroupNorm(GroupNormAttrs { num_groups, eps }), &ins)
    }
    /// `LayerNorm2d`: normalisation across channels at every spatial position.
    pub fn layer_norm_2d(&mut self, x: Value, gamma: Value, beta: Option<Value>, eps: f32) -> Result<Value> {
        let ins: Vec<Value> = [x, gamma].into_iter().chain(beta).collect();
        self.add1(Op::LayerNorm2d(LayerNorm2dAttrs { eps }), &ins)
    }
    /// `FusedResidualLayerNorm`: `y = LayerNorm((x + residual) + bias)`; returns `(y, sum)` with
    /// `sum` present iff `emit_sum`.
    pub fn fused_residual_layer_norm(
        &mut self,
        x: Value,
        (residual, bias): (Value, Option<Value>),
        (gamma, beta): (Value, Option<Value>),
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<(Value, Option<Value>)> {
        let a = self.fused_attrs(x, bias.is_some(), beta.is_some(), axis, eps, emit_sum)?;
        self.fused_norm(Op::FusedResidualLayerNorm(a), x, (residual, bias), (gamma, beta))
    }
    /// `FusedResidualRmsNorm`: `y = RmsNorm((x + residual) + bias)`; returns `(y, sum)` with `sum`
    /// present iff `emit_sum`.
    pub fn fused_residual_rms_norm(
        &mut self,
        x: Value,
        (residual, bias): (Value, Option<Value>),
        (gamma, beta): (Value, Option<Value>),
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<(Value, Option<Value>)> {
        let a = self.fused_attrs(x, bias.is_some(), beta.is_some(), axis, eps, emit_sum)?;
        self.fused_norm(Op::FusedResidualRmsNorm(a), x, (residual, bias), (gamma, beta))
    }
    fn fused_attrs(
        &self,
        x: Value,
        has_bias: bool,
        has_beta: bool,
        axis: i64,
        eps: f32,
        emit_sum: bool,
    ) -> Result<FusedResidualNormAttrs> {
        Ok(FusedResidualNormAttrs { axis: self.axis_in(x, axis)?, eps, has_bias, has_beta, emit_sum })
    }
    fn fused_norm(
        &mut self,
        op: Op,
        x: Value,
        rb: (Value, Option<Value>),
        gb: (Value, Option<Value>),
    ) -> Result<(Value, Option<Value>)> {
        let ins: Vec<Value> = [x, rb.0].into_iter().chain(rb.1).chain([gb.0]).chain(gb.1).collect();
        let outs = self.add(op, &ins)?;
        match outs[..] {
            [y] => Ok((y, None)),
            [y, sum] => Ok((y, Some(sum))),
            _ => crate::bail!(Arity, "a fused residual norm produced {} outputs, expected 1 or 2", outs.len()),
        }
    }
    /// `LayerNormBackward`: `dx`, `dgamma` or `dbeta` (`wrt`) of `LayerNorm(x, gamma; axis, eps)`.
    pub fn layer_norm_backward(
        &mut self,
        x: Value,
        gamma: Value,
        dy: Value,
        axis: i64,
        eps: f32,
        wrt: NormGrad,
    ) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::LayerNormBackward(NormBackwardAttrs { axis, eps, wrt }), &[x, gamma, dy])
    }
    /// `RmsNormBackward`: `dx`, `dgamma` or `dbeta` (`wrt`) of `RmsNorm(x, gamma; axis, eps)`.
    pub fn rms_norm_backward(
        &mut self,
        x: Value,
        gamma: Value,
        dy: Value,
        axis: i64,
        eps: f32,
        wrt: NormGrad,
    ) -> Result<Value> {
        let axis = self.axis_in(x, axis)?;
        self.add1(Op::RmsNormBackward(NormBackwardAttrs { axis, eps, wrt }), &[x, gamma, dy])
    }

    // ---- attention and position (§2.8)
    /// `Attention`; `attrs.has_keep_mask` and `attrs.has_bias` are set from the options.
    pub fn attention(
        &mut self,
        q: Value,
        k: Value,
        v: Value,
        keep_mask: Option<Value>,
        bias: Option<Value>,
        attrs: AttentionAttrs,
    ) -> Result<Value> {
        let a = AttentionAttrs { has_keep_mask: keep_mask.is_some(), has_bias: bias.is_some(), ..attrs };
        let ins: Vec<Value> = [q, k, v].into_iter().chain(keep_mask).chain(bias).collect();
        self.add1(Op::Attention(a), &ins)
    }
    /// `AttentionBackward`: the gradient `attrs.wrt` given `d_out`; `(keep_mask, bias)` as in the
    /// forward op (the flags are set from them).
    pub fn attention_backward(
        &mut self,
        (q, k, v): (Value, Value, Value),
        d_out: Value,
        (keep_mask, bias): (Option<Value>, Option<Value>),
        attrs: AttentionBackwardAttrs,
    ) -> Result<Value> {
        let forward = AttentionAttrs { has_keep_mask: keep_mask.is_some(), has_bias: bias.is_some(), ..attrs.forward };
        let ins: Vec<Value> = [q, k, v, d_out].into_iter().chain(keep_mask).chain(bias).collect();
        self.add1(Op::AttentionBackward(AttentionBackwardAttrs { forward, wrt: attrs.wrt }), &ins)
    }
    /// `Rope` with tables `(cos, sin)`; `rotary_dim` defaults to `head_dim`, `seq_axis` may be
    /// negative (spec default −2).
    pub fn rope(
        &mut self,
        x: Value,
        (cos, sin): (Value, Value),
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<Value> {
        let a = self.rope_attrs(x, head_dim, rotary_dim, style, seq_axis)?;
        self.add1(Op::Rope(a), &[x, cos, sin])
    }
    /// `RopeBackward`: the transpose rotation of `dy` with the forward op's attributes.
    pub fn rope_backward(
        &mut self,
        dy: Value,
        (cos, sin): (Value, Value),
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<Value> {
        let a = self.rope_attrs(dy, head_dim, rotary_dim, style, seq_axis)?;
        self.add1(Op::RopeBackward(a), &[dy, cos, sin])
    }
    fn rope_attrs(
        &self,
        x: Value,
        head_dim: u32,
        rotary_dim: Option<u32>,
        style: RopeStyle,
        seq_axis: i64,
    ) -> Result<RopeAttrs> {
        let seq_axis = self.axis_in(x, seq_axis)?;
        Ok(RopeAttrs { head_dim, rotary_dim: rotary_dim.unwrap_or(head_dim), style, seq_axis })
    }

    // ---- convolution, pooling, resize (§2.9)
    /// `Conv`; lists may use the shorthands of [`expand_list`], `has_bias` is set from `bias`.
    pub fn conv(&mut self, x: Value, w: Value, bias: Option<Value>, attrs: &ConvAttrs) -> Result<Value> {
        let a = ConvAttrs { has_bias: bias.is_some(), ..attrs.expand(self.spatial(x)?)? };
        let ins: Vec<Value> = [x, w].into_iter().chain(bias).collect();
        self.add1(Op::Conv(a), &ins)
    }
    /// `ConvTranspose`; lists may use the shorthands of [`expand_list`].
    pub fn conv_transpose(
        &mut self,
        x: Value,
        w: Value,
        bias: Option<Value>,
        attrs: &ConvTransposeAttrs,
    ) -> Result<Value> {
        let mut a = attrs.expand(self.spatial(x)?)?;
        a.conv.has_bias = bias.is_some();
        let ins: Vec<Value> = [x, w].into_iter().chain(bias).collect();
        self.add1(Op::ConvTranspose(a), &ins)
    }
    /// `Pool`; lists may use the shorthands of [`expand_list`].
    pub fn pool(&mut self, x: Value, attrs: &PoolAttrs) -> Result<Value> {
        let a = attrs.expand(self.spatial(x)?)?;
        self.add1(Op::Pool(a), &[x])
    }
    /// `Im2Col`; lists may use the shorthands of [`expand_list`].
    pub fn im2col(&mut self, x: Value, attrs: &Im2ColAttrs) -> Result<Value> {
        let a = attrs.expand(self.spatial(x)?)?;
        self.add1(Op::Im2Col(a), &[x])
    }
    /// `ResizeNearest` by integer factors, one per spatial dim.
    pub fn resize_nearest(&mut self, x: Value, scales: &[u32]) -> Result<Value> {
        self.add1(Op::ResizeNearest(ResizeNearestAttrs { scales: scales.to_vec() }), &[x])
    }
}

/// Sequence models, signal, randomness, control flow, regions, custom ops.
impl GraphBuilder {
    fn cell(&mut self, op: Op, x: Value, weights: &[Value], states: &[Value]) -> Result<Vec<Value>> {
        let ins: Vec<Value> = std::iter::once(x).chain(weights.iter().copied()).chain(states.iter().copied()).collect();
        self.add(op, &ins)
    }
    /// `Rnn`: `(y, h_n)`. `weights` in PyTorch order; `has_initial_state` is set from `h0`.
    pub fn rnn(
        &mut self,
        x: Value,
        weights: &[Value],
        h0: Option<Value>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value)> {
        let a = RecurrentAttrs { has_initial_state: h0.is_some(), linear_before_reset: true, ..attrs };
        two(self.cell(Op::Rnn(a), x, weights, &h0.into_iter().collect::<Vec<_>>())?)
    }
    /// `Gru`: `(y, h_n)`. `weights` in PyTorch order; `has_initial_state` is set from `h0`.
    pub fn gru(
        &mut self,
        x: Value,
        weights: &[Value],
        h0: Option<Value>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value)> {
        let a = RecurrentAttrs { has_initial_state: h0.is_some(), nonlinearity: RnnNonlinearity::Tanh, ..attrs };
        two(self.cell(Op::Gru(a), x, weights, &h0.into_iter().collect::<Vec<_>>())?)
    }
    /// `Lstm`: `(y, h_n, c_n)`. `initial` is `(h0, c0)`.
    pub fn lstm(
        &mut self,
        x: Value,
        weights: &[Value],
        initial: Option<(Value, Value)>,
        attrs: RecurrentAttrs,
    ) -> Result<(Value, Value, Value)> {
        let a = RecurrentAttrs {
            has_initial_state: initial.is_some(),
            nonlinearity: RnnNonlinearity::Tanh,
            linear_before_reset: true,
            ..attrs
        };
        let states: Vec<Value> = initial.map(|(h, c)| vec![h, c]).unwrap_or_default();
        let outs = self.cell(Op::Lstm(a), x, weights, &states)?;
        match outs[..] {
            [y, h, c] => Ok((y, h, c)),
            _ => crate::bail!(Arity, "Lstm produced {} outputs, expected 3", outs.len()),
        }
    }
    /// `SelectiveScan`: `(y, h_final)`.
    pub fn selective_scan(
        &mut self,
        x: Value,
        delta: Value,
        a: Value,
        b: Value,
        c: Value,
        h0: Option<Value>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [x, delta, a, b, c].into_iter().chain(h0).collect();
        two(self.add(Op::SelectiveScan(StateSpaceAttrs { has_initial_state: h0.is_some() }), &ins)?)
    }
    /// `Mamba2`: `(y, state)`.
    pub fn mamba2(
        &mut self,
        x: Value,
        dt: Value,
        a: Value,
        b: Value,
        c: Value,
        state0: Option<Value>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [x, dt, a, b, c].into_iter().chain(state0).collect();
        two(self.add(Op::Mamba2(StateSpaceAttrs { has_initial_state: state0.is_some() }), &ins)?)
    }
    /// `GatedDeltaNet`: `(o, state)`; `scale` `None` means `1/√Dk`.
    pub fn gated_delta_net(
        &mut self,
        (q, k, v): (Value, Value, Value),
        g: Value,
        beta: Value,
        state0: Option<Value>,
        scale: Option<f32>,
    ) -> Result<(Value, Value)> {
        let ins: Vec<Value> = [q, k, v, g, beta].into_iter().chain(state0).collect();
        let a = GatedDeltaNetAttrs { scale, has_initial_state: state0.is_some() };
        two(self.add(Op::GatedDeltaNet(a), &ins)?)
    }
    /// `Scan` of `body` over `length` steps: outputs final carries, stacked per-step values and
    /// (iff `save_trajectory`) stacked carries.
    pub fn scan(
        &mut self,
        body: Graph,
        length: u64,
        reverse: bool,
        (carries, bcast, xs): (&[Value], &[Value], &[Value]),
        save_trajectory: bool,
    ) -> Result<Vec<Value>> {
        let count = |v: &[Value]| u32::try_from(v.len()).unwrap_or(u32::MAX);
        let a = ScanAttrs {
            body,
            length,
            reverse,
            num_carry: count(carries),
            num_bcast: count(bcast),
            num_xs: count(xs),
            save_trajectory,
        };
        let ins: Vec<Value> = carries.iter().chain(bcast).chain(xs).copied().collect();
        self.add(Op::Scan(a), &ins)
    }

    /// `Fft` over the last axis.
    pub fn fft(&mut self, x: Value, inverse: bool, norm: FftNorm) -> Result<Value> {
        self.add1(Op::Fft(FftAttrs { inverse, norm }), &[x])
    }
    /// `LogMel` of a C64 spectrum with F32 mel `filters`.
    pub fn log_mel(&mut self, spectrum: Value, filters: Value, floor_scope: FloorScope) -> Result<Value> {
        self.add1(Op::LogMel(LogMelAttrs { floor_scope }), &[spectrum, filters])
    }
    /// `LogMelBackward`: `d_spectrum` given `dy`.
    pub fn log_mel_backward(
        &mut self,
        spectrum: Value,
        filters: Value,
        dy: Value,
        floor_scope: FloorScope,
    ) -> Result<Value> {
        self.add1(Op::LogMelBackward(LogMelAttrs { floor_scope }), &[spectrum, filters, dy])
    }
    /// `WelchPeaks`: `(bins, power)` of the `k` strongest bins.
    pub fn welch_peaks(&mut self, spectrum: Value, k: u32, index_dtype: DType) -> Result<(Value, Value)> {
        two(self.add(Op::WelchPeaks(WelchPeaksAttrs { k, index_dtype }), &[spectrum])?)
    }

    /// `RngBits`: raw Philox words of `shape`.
    pub fn rng_bits(&mut self, key: Value, shape: impl Into<Shape>, seed: u64) -> Result<Value> {
        self.add1(Op::RngBits(RngBitsAttrs { shape: shape.into(), seed }), &[key])
    }
    /// `RngUniform` in `[low, high)`.
    pub fn rng_uniform(
        &mut self,
        key: Value,
        shape: impl Into<Shape>,
        dtype: DType,
        low: f64,
        high: f64,
        seed: u64,
    ) -> Result<Value> {
        let a = RngUniformAttrs { shape: shape.into(), dtype, low, high, seed };
        self.add1(Op::RngUniform(a), &[key])
    }
    /// `RngNormal` with `mean` and `std`.
    pub fn rng_normal(
        &mut self,
        key: Value,
        shape: impl Into<Shape>,
        dtype: DType,
        mean: f64,
        std: f64,
        seed: u64,
    ) -> Result<Value> {
        let a = RngNormalAttrs { shape: shape.into(), dtype, mean, std, seed };
        self.add1(Op::RngNormal(a), &[key])
    }
    /// `Sample` one token index per row of `logits`.
    pub fn sample(&mut self, logits: Value, key: Value, attrs: SampleAttrs) -> Result<Value> {
        self.add1(Op::Sample(attrs), &[logits, key])
    }

    /// `If`: the outputs of `then_graph(captures)` or `else_graph(captures)`.
    pub fn if_(&mut self, cond: Value, captures: &[Value], then_graph: Graph, else_graph: Graph) -> Result<Vec<Value>> {
        let ins: Vec<Value> = std::iter::once(cond).chain(captures.iter().copied()).collect();
        self.add(Op::If(IfAttrs { then_graph, else_graph }), &ins)
    }
    /// `While`: the final loop values.
    pub fn while_(
        &mut self,
        init: &[Value],
        cond_graph: Graph,
        body_graph: Graph,
        max_iterations: u64,
    ) -> Result<Vec<Value>> {
        self.add(Op::While(WhileAttrs { cond_graph, body_graph, max_iterations }), init)
    }

    /// `ElementwiseRegion`: one output per `program.outputs` entry.
    pub fn elementwise_region(&mut self, inputs: &[Value], program: RegionProgram) -> Result<Vec<Value>> {
        self.add(Op::ElementwiseRegion(RegionAttrs { program }), inputs)
    }
    /// `BatchElementwiseRegion`: the one-input `program` on every input, stacked on axis 0.
    pub fn batch_elementwise_region(&mut self, inputs: &[Value], program: RegionProgram) -> Result<Value> {
        self.add1(Op::BatchElementwiseRegion(RegionAttrs { program }), inputs)
    }
    /// `TransformRegion`: input `resized_input` read through `ResizeNearest(scales)`.
    pub fn transform_region(
        &mut self,
        inputs: &[Value],
        program: RegionProgram,
        resized_input: u32,
        scales: &[u32],
    ) -> Result<Vec<Value>> {
        let a = TransformRegionAttrs { program, resized_input, scales: scales.to_vec() };
        self.add(Op::TransformRegion(a), inputs)
    }
    /// `Custom`: the op registered as `name` with its attribute blob.
    pub fn custom(&mut self, name: &str, attrs: &[u8], inputs: &[Value]) -> Result<Vec<Value>> {
        self.add(Op::Custom(CustomAttrs { name: name.to_string(), attrs: attrs.to_vec() }), inputs)
    }
}

/// Gaussian splatting (§2.17).
#[cfg(feature = "splat")]
impl GraphBuilder {
    /// `GaussianSplatPrepare` of `scene` = `[positions, log_scales, rotations, opacity_logits, sh,
    /// meta]`: `[means2d, conic, depth, radius, rgb, alpha]`.
    pub fn gaussian_splat_prepare(&mut self, scene: &[Value], attrs: SplatAttrs) -> Result<Vec<Value>> {
        self.add(Op::GaussianSplatPrepare(attrs), scene)
    }
    /// `GaussianSplatRasterize` of the six prepared values and `meta`: the `[H, W, 4]` image.
    pub fn gaussian_splat_rasterize(&mut self, prepared: &[Value], meta: Value, attrs: SplatAttrs) -> Result<Value> {
        let ins: Vec<Value> = prepared.iter().copied().chain([meta]).collect();
        self.add1(Op::GaussianSplatRasterize(attrs), &ins)
    }
    /// `GaussianSplatRender` of `scene` (as for prepare): the `[H, W, 4]` image.
    pub fn gaussian_splat_render(&mut self, scene: &[Value], attrs: SplatAttrs) -> Result<Value> {
        self.add1(Op::GaussianSplatRender(attrs), scene)
    }
    /// `GaussianSplatRenderBackward`: `[d_positions, d_log_scales, d_rotations, d_opacity_logits,
    /// d_sh]` given `d_image`.
    pub fn gaussian_splat_render_backward(
        &mut self,
        scene: &[Value],
        d_image: Value,
        attrs: SplatAttrs,
    ) -> Result<Vec<Value>> {
        let ins: Vec<Value> = scene.iter().copied().chain([d_image]).collect();
        self.add(Op::GaussianSplatRenderBackward(attrs), &ins)
    }
}
