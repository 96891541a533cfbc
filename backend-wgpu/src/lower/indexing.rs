//! Lowering of the indexing family (being written).

use super::{LowerCtx, Lowered};
use backend_api::{bail, Result};

/// Lowers one node of this family.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    bail!(Unsupported, "the wgpu backend does not lower {} yet", backend_api::spec::op_label(&ctx.node.op))
}
