//! The shared kernels (the zero fill) validated with naga, and the params registry every naga
//! test looks uniforms up in.

mod common;
use common::validate;

#[test]
fn zero_kernel_is_valid() {
    validate("zero", &shaders::zero_module());
}

#[test]
fn params_struct_names_are_distinct() {
    // The naga tests find a uniform's Rust mirror by name: two structs of one name would let a
    // kernel be checked against the wrong one.
    let mut seen = std::collections::HashSet::new();
    for l in shaders::params::all() {
        assert!(seen.insert(l.name), "two params structs are named {}", l.name);
    }
}
