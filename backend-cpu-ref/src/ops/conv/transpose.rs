//! ConvTranspose (§2.9.2) in its scatter form: start from the bias and add `x · w` from every
//! input position to output position `i·stride + κ·dilation − pads_begin`, dropping targets
//! outside the output. Every product is added, even when `x` is 0, so non-finite weights
//! propagate. The wgpu kernel computes the gather form; this deliberately different order of the
//! same sum checks it. f64 accumulation, one rounding.

use super::conv::{flat, tap, Geom};
use crate::layout::{count, for_each_index};
use crate::mem::try_filled;
use crate::value::{floats, from_floats};
use backend_api::op::{ConvTransposeAttrs, Op};
use backend_api::{Result, Tensor};

/// `ConvTranspose(x, w[, bias])` with the (expanded) attributes `a`.
pub fn conv_transpose(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, a: &ConvTransposeAttrs) -> Result<Tensor> {
    let c = &a.conv;
    let g = Geom::of(&Op::ConvTranspose(a.clone()), c.groups, x, w, bias)?;
    let (vx, vw) = (floats(x, "ConvTranspose x")?, floats(w, "ConvTranspose w")?);
    let vb = bias.map(|b| floats(b, "ConvTranspose bias")).transpose()?;
    let (cgi, cgo) = (g.cin / g.groups, g.cout / g.groups);
    let (in_sp, k_sp, out_sp) = (count(&g.input)?, count(&g.kernel)?, count(&g.output)?);
    let mut out = try_filled(count(&g.out_shape)?, 0.0f64)?;
    if let Some(b) = &vb {
        for (e, v) in out.iter_mut().enumerate() {
            // out_sp ≥ 1 here: the output has an element.
            *v = b[(e / out_sp) % g.cout];
        }
    }
    for_each_index(&[g.n, g.cin], |nc| {
        let (n, ci) = (nc[0], nc[1]);
        // cgi ≥ 1 here: an input channel exists.
        let group = ci / cgi;
        for_each_index(&g.input, |i| {
            let xv = vx[(n * g.cin + ci) * in_sp + flat(i, &g.input)];
            for cl in 0..cgo {
                let co = group * cgo + cl;
                let (oc, wc) = ((n * g.cout + co) * out_sp, (ci * cgo + cl) * k_sp);
                for_each_index(&g.kernel, |kap| {
                    if let Some(t) = tap(i, kap, c, &g.output) {
                        out[oc + t] += xv * vw[wc + flat(kap, &g.kernel)];
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })
    })?;
    from_floats(x.dtype(), &g.out_shape, &out)
}
