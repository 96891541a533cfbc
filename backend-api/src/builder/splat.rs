//! [`GraphBuilder`] methods that add the ops of §2.17 (gaussian splatting).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

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
