//! [`GraphBuilder`] methods that add the ops of §2.15 (custom ops).

use crate::op::*;
use crate::{GraphBuilder, Result, Value};

impl GraphBuilder {
    /// `Custom`: the op registered as `name` with its attribute blob.
    pub fn custom(&mut self, name: &str, attrs: &[u8], inputs: &[Value]) -> Result<Vec<Value>> {
        self.add(Op::Custom(CustomAttrs { name: name.to_string(), attrs: attrs.to_vec() }), inputs)
    }
}
