//! Variants of the backward kernel family (§2.16): SoftmaxCrossEntropyBackward (§2.16.3), one
//! workgroup per slice on the norm family's `norm_common.wgsl` and `norm_float.wgsl` (params, float helpers, tree
//! reductions), so it binds [`crate::norm::NormParams`].

use crate::{tensor_binding, Access};
use backend_api::DType;

/// SoftmaxCrossEntropyBackward body.
pub const BACKWARD_CROSS_ENTROPY: &str = include_str!("wgsl/backward_cross_entropy.wgsl");

/// The params structs of this family (see [`mod@crate::params`]): none of its own yet; its kernels
/// bind the norm family's [`crate::norm::NormParams`].
pub const PARAMS: &[crate::params::Layout] = &[];

/// SoftmaxCrossEntropyBackward on float `d`: bindings 1 `x` (logits), 2 `t` (targets), 3 `dl`
/// (the loss gradient, one per slice), 4 `out` (the logits' gradient). `None` for other dtypes.
pub fn cross_entropy_module(d: DType) -> Option<Result<String, String>> {
    let tensors = tensor_binding("x", 1, d, Access::Read)
        + &tensor_binding("t", 2, d, Access::Read)
        + &tensor_binding("dl", 3, d, Access::Read)
        + &tensor_binding("out", 4, d, Access::Write);
    crate::norm::with_common(d, &tensors, BACKWARD_CROSS_ENTROPY)
}
