//! The layout check itself: it must notice a Rust/WGSL mismatch (so the naga tests that rely on
//! it can fail).

mod common;
use common::check_params;

fn parse(src: &str) -> naga::Module {
    naga::front::wgsl::parse_str(src).expect("test WGSL parses")
}

const ZERO_LIKE: &str =
    "@group(0) @binding(0) var<uniform> p: ZeroParams;\n@compute @workgroup_size(1) fn main() { _ = p.n; }\n";

#[test]
fn a_matching_struct_passes() {
    let src = format!("struct ZeroParams {{ n: u32, pad0: u32, pad1: u32, pad2: u32 }}\n{ZERO_LIKE}");
    assert_eq!(check_params(&parse(&src)), Ok(()));
}

#[test]
fn mismatches_are_caught() {
    for (what, fields) in [
        ("a missing field", "n: u32, pad0: u32, pad1: u32"),
        ("a renamed field", "n: u32, pad0: u32, pad1: u32, pad3: u32"),
        ("a moved field", "pad0: u32, n: u32, pad1: u32, pad2: u32"),
        ("a wider field", "n: u32, pad0: u32, pad1: u32, pad2: vec2<u32>"),
    ] {
        let src = format!("struct ZeroParams {{ {fields} }}\n{ZERO_LIKE}");
        assert!(check_params(&parse(&src)).is_err(), "{what} went unnoticed");
    }
    let unknown = "struct NoSuchParams { n: u32 }\n@group(0) @binding(0) var<uniform> p: NoSuchParams;\n@compute @workgroup_size(1) fn main() { _ = p.n; }\n";
    assert!(check_params(&parse(unknown)).is_err(), "a struct without a Rust mirror went unnoticed");
}
