//! Shared by the naga validation tests.

use backend_api::op::QuantFormat;
use backend_api::DType;
use shaders::params::layout;

// Not every test binary that includes this module calls both functions.
#[allow(dead_code)]
/// Parses and validates one WGSL module with every capability enabled, then checks the layout of
/// its uniform params struct against the Rust struct it is filled from ([`check_params`]); panics
/// with the source and the reason on failure.
pub fn validate(name: &str, src: &str) {
    let m = match naga::front::wgsl::parse_str(src) {
        Ok(m) => m,
        Err(e) => panic!("{name}: parse error:\n{}\n--- source ---\n{src}", e.emit_to_string(src)),
    };
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    if let Err(e) = v.validate(&m) {
        panic!("{name}: validation error: {e:?}\n--- source ---\n{src}");
    }
    if let Err(e) = check_params(&m) {
        panic!("{name}: {e}");
    }
}

/// Reflects every uniform of `m`: each must be a struct named like a `shaders::params` struct,
/// with the same size and the same fields at the same offsets with the same sizes.
pub fn check_params(m: &naga::Module) -> Result<(), String> {
    for (_, g) in m.global_variables.iter() {
        if g.space != naga::AddressSpace::Uniform {
            continue;
        }
        let ty = &m.types[g.ty];
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            return Err(format!("uniform {:?} is not a struct", g.name));
        };
        let Some(name) = ty.name.as_deref() else { return Err("a uniform struct has no name".into()) };
        let Some(rust) = layout(name) else {
            return Err(format!("uniform struct {name} has no Rust mirror in shaders::params::ALL"));
        };
        if *span as usize != rust.size {
            return Err(format!("{name} is {span} bytes in WGSL but {} in Rust", rust.size));
        }
        if members.len() != rust.fields.len() {
            return Err(format!("{name} has {} fields in WGSL but {} in Rust", members.len(), rust.fields.len()));
        }
        for (w, r) in members.iter().zip(rust.fields) {
            let wname = w.name.as_deref().unwrap_or("");
            let wsize = m.types[w.ty].inner.size(m.to_ctx()) as usize;
            if wname != r.name || w.offset as usize != r.offset || wsize != r.size {
                return Err(format!(
                    "{name}: WGSL field {wname} at {} ({wsize} bytes) but Rust field {} at {} ({} bytes)",
                    w.offset, r.name, r.offset, r.size
                ));
            }
        }
    }
    Ok(())
}

// Only the quantised-kernel tests use it.
#[allow(dead_code)]
/// The weight input dtypes each format takes (`w` first), every combination.
pub fn quant_weight_dtypes(f: QuantFormat) -> Vec<Vec<DType>> {
    let scales = [DType::F32, DType::F16];
    match f {
        QuantFormat::Int8Block { .. } => scales.iter().map(|&s| vec![DType::I8, s]).collect(),
        QuantFormat::Int4Block { .. } => scales.iter().map(|&s| vec![DType::U8, s]).collect(),
        QuantFormat::Int8BlockAsym { .. } => {
            [DType::U8, DType::I8].iter().flat_map(|&w| scales.iter().map(move |&s| vec![w, s, s])).collect()
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => vec![vec![DType::U8, DType::F32]],
        QuantFormat::Nvfp4 => vec![vec![DType::U8, DType::U8, DType::F32]],
        QuantFormat::Q4_0
        | QuantFormat::Q4_1
        | QuantFormat::Q5_0
        | QuantFormat::Q5_1
        | QuantFormat::Q8_0
        | QuantFormat::Q2_K
        | QuantFormat::Q3_K
        | QuantFormat::Q4_K
        | QuantFormat::Q5_K
        | QuantFormat::Q6_K
        | QuantFormat::Q8_K => vec![vec![DType::U8]],
    }
}
