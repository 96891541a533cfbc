//! Input, Param, Constant (§2.1): the leaves hand out the tensors the run was given, the params set
//! before it, or the graph's constant bytes.

use backend_api::op::ConstantAttrs;
use backend_api::{bail, Result, Tensor};
use std::collections::HashMap;

/// The run input `name` (already checked against the signature by the executable).
pub fn input(name: &str, inputs: &HashMap<String, Tensor>) -> Result<Tensor> {
    match inputs.get(name) {
        Some(t) => Ok(t.clone()),
        None => bail!(Input, "missing input {name:?}"),
    }
}

/// The param `name`, which `set_param` must have set.
pub fn param(name: &str, params: &HashMap<String, Tensor>) -> Result<Tensor> {
    match params.get(name) {
        Some(t) => Ok(t.clone()),
        None => bail!(Input, "param {name:?} was never set (call set_param first)"),
    }
}

/// The constant's tensor, built once at compile.
pub fn constant(a: &ConstantAttrs) -> Result<Tensor> {
    Tensor::from_bytes(a.dtype, &a.shape, a.data.to_vec())
}
