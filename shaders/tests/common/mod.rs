//! Shared by the naga validation tests.

/// Parses and validates one WGSL module with every capability enabled; panics with the source
/// and naga's message on failure.
pub fn validate(name: &str, src: &str) {
    let m = match naga::front::wgsl::parse_str(src) {
        Ok(m) => m,
        Err(e) => panic!("{name}: parse error:\n{}\n--- source ---\n{src}", e.emit_to_string(src)),
    };
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    if let Err(e) = v.validate(&m) {
        panic!("{name}: validation error: {e:?}\n--- source ---\n{src}");
    }
}
