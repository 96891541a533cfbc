//! The registry of custom op definitions (§2.15): `Custom { name, attrs }` nodes are validated and
//! typed by the definition registered under `name`.
//!
//! Crates add definitions with [`register_custom_op!`](crate::register_custom_op), collected at link
//! time by `inventory`. The three definitions of the spec (`umap.knn`, `llada2.group_limited_gate`,
//! `gdino.ms_deform_attn`) are kept in a plain table instead: a definition registered through
//! `inventory` in a code unit nothing refers to can be dropped by the linker, and these three must
//! exist in every program that links `backend-api`.

mod builtin;

use crate::{bail, Result, TensorType};

/// A custom op definition: its name and the function that validates `attrs` and the input types
/// and infers the output types.
pub struct CustomOpDef {
    /// The registry key, e.g. `"umap.knn"`.
    pub name: &'static str,
    /// One line saying what the op computes.
    pub description: &'static str,
    /// Validates the attribute blob and the inputs; returns the output types. Errors use the
    /// spec's kinds (`Attribute`, `Arity`, `DType`, `Shape`).
    pub infer: fn(attrs: &[u8], inputs: &[TensorType]) -> Result<Vec<TensorType>>,
}

inventory::collect!(CustomOpDef);

/// Registers a custom op definition:
/// `register_custom_op!("my.op", "what it does", my_infer_fn);`
#[macro_export]
macro_rules! register_custom_op {
    ($name:expr, $description:expr, $infer:expr) => {
        $crate::inventory::submit! {
            $crate::custom::CustomOpDef { name: $name, description: $description, infer: $infer }
        }
    };
}

/// The definitions of the spec (§2.15.2–2.15.4).
static BUILTIN: [CustomOpDef; 3] = [
    CustomOpDef {
        name: "umap.knn",
        description: "k nearest neighbours per row of a distance matrix",
        infer: builtin::umap_knn,
    },
    CustomOpDef {
        name: "llada2.group_limited_gate",
        description: "group-limited top-k mixture-of-experts routing",
        infer: builtin::group_limited_gate,
    },
    CustomOpDef {
        name: "gdino.ms_deform_attn",
        description: "multi-scale deformable attention sampling",
        infer: builtin::ms_deform_attn,
    },
];

fn all() -> impl Iterator<Item = &'static CustomOpDef> {
    BUILTIN.iter().chain(inventory::iter::<CustomOpDef>)
}

/// The definition registered as `name` (the spec's own definitions take precedence).
pub fn custom_op(name: &str) -> Option<&'static CustomOpDef> {
    all().find(|d| d.name == name)
}

/// Names of every registered definition, sorted and without repeats.
pub fn custom_ops() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = all().map(|d| d.name).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Validates a `Custom` node and infers its outputs; an unregistered name is `UnknownCustom`.
pub fn infer_custom(name: &str, attrs: &[u8], inputs: &[TensorType]) -> Result<Vec<TensorType>> {
    match custom_op(name) {
        Some(def) => (def.infer)(attrs, inputs).map_err(|e| e.context(format!("custom op {name:?}"))),
        None => bail!(UnknownCustom, "no custom op named {name:?}; registered: {:?}", custom_ops()),
    }
}
