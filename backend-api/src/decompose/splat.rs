//! `GaussianSplatRender` → `GaussianSplatPrepare` + `GaussianSplatRasterize` (§2.17.3, which defines
//! the render as exactly that composition).

use super::arg;
use crate::op::SplatAttrs;
use crate::{GraphBuilder, Result, Value};

/// Prepares the six scene inputs, then rasterises the six prepared values with `meta`.
pub(crate) fn render(g: &mut GraphBuilder, a: &SplatAttrs, ins: &[Value]) -> Result<Vec<Value>> {
    let meta = arg(ins, 5)?;
    let prepared = g.gaussian_splat_prepare(ins, *a)?;
    Ok(vec![g.gaussian_splat_rasterize(&prepared, meta, *a)?])
}
