//! Renders every variant of the elementwise family (Unary, Binary, Compare, Where, Fma, Cast, in
//! both indexing forms) and validates it with naga: a broken kernel fails here, on a machine with
//! no GPU.

use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::DType;
use shaders::elementwise::{module, ElemKind};

mod common;
use common::validate;

/// Validates `src` with the capabilities a device without SHADER_F64 / SHADER_INT64 has: variants
/// that touch neither dtype must run there.
fn validate_without_64bit(name: &str, src: &str) {
    let m = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    let caps = naga::valid::Capabilities::all()
        - naga::valid::Capabilities::FLOAT64
        - naga::valid::Capabilities::SHADER_INT64
        - naga::valid::Capabilities::SHADER_INT64_ATOMIC_MIN_MAX
        - naga::valid::Capabilities::SHADER_INT64_ATOMIC_ALL_OPS;
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps);
    if let Err(e) = v.validate(&m) {
        panic!("{name} needs 64-bit features it should not: {e:?}");
    }
}

#[test]
fn every_elementwise_variant_is_valid() {
    let mut count = 0;
    let mut check = |kind: ElemKind, ins: &[DType], out: DType, allowed: bool| {
        let name = format!("{kind:?} {ins:?} -> {out:?}");
        match module(kind, ins, out) {
            Some(src) => {
                assert!(allowed, "{name}: the spec does not allow it, but a variant exists");
                let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                validate(&name, &src);
                let wide = |d: &DType| matches!(d, DType::F64 | DType::I64);
                if !ins.iter().any(wide) && !wide(&out) {
                    validate_without_64bit(&name, &src);
                }
                count += 1;
            }
            None => assert!(!allowed, "{name}: the spec allows it, but there is no variant"),
        }
    };
    for &d in &DType::ALL {
        for &u in UnaryOp::ALL {
            check(ElemKind::Unary(u), &[d], d, u.dtypes().contains(d));
        }
        for &b in BinaryOp::ALL {
            check(ElemKind::Binary(b), &[d, d], d, b.dtypes().contains(d));
        }
        for &c in CompareOp::ALL {
            check(ElemKind::Compare(c), &[d, d], DType::Bool, c.dtypes().contains(d));
        }
        check(ElemKind::Where, &[DType::Bool, d, d], d, true);
        check(ElemKind::Fma, &[d, d, d], d, d.is_float());
        for &to in &DType::ALL {
            check(ElemKind::Cast, &[d], to, true);
        }
    }
    assert!(count > 400, "{count} variants");
}

#[test]
fn flat_indexing_variants_are_valid() {
    use shaders::elementwise::{module_indexed, Indexing};
    for &d in &DType::ALL {
        let kinds = [(ElemKind::Binary(BinaryOp::Add), vec![d, d], d), (ElemKind::Where, vec![DType::Bool, d, d], d)];
        for (kind, ins, out) in kinds {
            if let Some(src) = module_indexed(kind, &ins, out, Indexing::Flat) {
                validate(&format!("flat {kind:?} {ins:?}"), &src.expect("renders"));
            }
        }
    }
}

#[test]
fn four_wide_variants_are_valid() {
    use shaders::elementwise::{is_word_dtype, module_vec4};
    let words: Vec<DType> = DType::ALL.iter().copied().filter(|&d| is_word_dtype(d)).collect();
    let mut count = 0;
    let mut check = |kind: ElemKind, ins: &[DType], out: DType| {
        // every input contiguous, and each input alone a broadcast scalar
        let mut patterns = vec![vec![false; ins.len()]];
        patterns.extend((0..ins.len()).map(|k| (0..ins.len()).map(|j| j == k).collect()));
        for scalar in patterns {
            if let Some(src) = module_vec4(kind, ins, out, &scalar) {
                let name = format!("vec4 {kind:?} {ins:?} -> {out:?} scalar {scalar:?}");
                let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(shaders::is_trusted(&src), shaders::elementwise::trusted_map(kind), "{name}");
                validate_without_64bit(&name, &src);
                validate(&name, &src);
                count += 1;
            }
        }
    };
    for &d in &words {
        for &u in UnaryOp::ALL {
            check(ElemKind::Unary(u), &[d], d);
        }
        for &b in BinaryOp::ALL {
            check(ElemKind::Binary(b), &[d, d], d);
        }
        check(ElemKind::Fma, &[d, d, d], d);
        for &to in &words {
            check(ElemKind::Cast, &[d], to);
        }
    }
    assert!(
        module_vec4(ElemKind::Binary(BinaryOp::Add), &[DType::F16, DType::F16], DType::F16, &[false, false]).is_none()
    );
    assert!(count > 100, "{count} variants");
}

#[test]
fn reviewed_four_wide_maps_are_trusted_and_others_not() {
    use shaders::elementwise::module_vec4;
    let f = DType::F32;
    let add =
        module_vec4(ElemKind::Binary(BinaryOp::Add), &[f, f], f, &[false, true]).expect("renders").expect("renders");
    assert!(shaders::is_trusted(&add));
    let gelu = module_vec4(ElemKind::Unary(UnaryOp::Gelu), &[f], f, &[false]).expect("renders").expect("renders");
    assert!(shaders::is_trusted(&gelu));
    let sin = module_vec4(ElemKind::Unary(UnaryOp::Sin), &[f], f, &[false]).expect("renders").expect("renders");
    assert!(!shaders::is_trusted(&sin));
    let cast = module_vec4(ElemKind::Cast, &[f], DType::I32, &[false]).expect("renders").expect("renders");
    assert!(!shaders::is_trusted(&cast));
    // the scalar forms keep the runtime checks
    let scalar =
        shaders::elementwise::module(ElemKind::Binary(BinaryOp::Add), &[f, f], f).expect("renders").expect("renders");
    assert!(!shaders::is_trusted(&scalar));
}

#[test]
fn single_element_stores_are_valid_for_packed_outputs() {
    use shaders::elementwise::module_single;
    let cases = [
        (ElemKind::Compare(CompareOp::Lt), vec![DType::I32, DType::I32], DType::Bool),
        (ElemKind::Compare(CompareOp::Eq), vec![DType::F16, DType::F16], DType::Bool),
        (ElemKind::Binary(BinaryOp::Add), vec![DType::F16, DType::F16], DType::F16),
        (ElemKind::Binary(BinaryOp::Add), vec![DType::U8, DType::U8], DType::U8),
        (ElemKind::Unary(UnaryOp::Neg), vec![DType::I8], DType::I8),
        (ElemKind::Where, vec![DType::Bool, DType::BF16, DType::BF16], DType::BF16),
    ];
    for (kind, ins, out) in cases {
        let name = format!("single {kind:?} {ins:?} -> {out:?}");
        let src = module_single(kind, &ins, out).expect("a variant").unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(src.contains("atomicStore(&out[") && !src.contains("atomicOr(&out["), "{name}");
        validate(&name, &src);
    }
}
