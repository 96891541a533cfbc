//! Renders every norm variant the lowering can produce and validates it with naga.

use backend_api::DType;
use shaders::norm::{cross_entropy_module, module, NormKind};

mod common;
use common::validate;

#[test]
fn every_norm_variant_is_valid() {
    let mut count = 0;
    for kind in NormKind::ALL {
        for &d in &DType::ALL {
            for beta in [false, true] {
                let src = module(kind, d, beta);
                let expected = d.is_float() && (!beta || kind.has_gamma());
                assert_eq!(src.is_some(), expected, "{kind:?} {d:?} beta={beta}");
                if let Some(src) = src {
                    let src = src.unwrap_or_else(|e| panic!("{kind:?} {d:?} beta={beta}: {e}"));
                    assert!(!shaders::is_trusted(&src), "the multi-pass kernels keep the runtime checks");
                    validate(&format!("{kind:?} {d:?} beta={beta}"), &src);
                    count += 1;
                }
            }
        }
    }
    // 4 float dtypes: Softmax, LogSoftmax without beta; LayerNorm, RmsNorm with and without.
    assert_eq!(count, 4 * 6);
}

#[test]
fn every_cross_entropy_variant_is_valid() {
    let mut count = 0;
    for &d in &DType::ALL {
        let src = cross_entropy_module(d);
        assert_eq!(src.is_some(), d.is_float(), "SoftmaxCrossEntropy {d:?}");
        if let Some(src) = src {
            let name = format!("SoftmaxCrossEntropy {d:?}");
            validate(&name, &src.unwrap_or_else(|e| panic!("{name}: {e}")));
            count += 1;
        }
    }
    assert_eq!(count, 4);
}

#[test]
fn every_single_pass_norm_variant_is_valid() {
    use shaders::norm::{held_per_thread, module_held, MAX_HELD, MAX_HELD_PER_THREAD};
    let ks: Vec<u32> = (0..=MAX_HELD_PER_THREAD.trailing_zeros()).map(|e| 1 << e).collect();
    // every K the lowering picks, and nothing above the limit
    for len in [1, 256, 257, 4096, MAX_HELD] {
        assert!(ks.contains(&held_per_thread(len).unwrap()), "{len}");
    }
    assert_eq!(held_per_thread(MAX_HELD + 1), None);
    assert!(module_held(NormKind::Softmax, DType::F32, false, MAX_HELD_PER_THREAD + 1, false).is_none());
    assert!(module_held(NormKind::Softmax, DType::F64, false, 1, true).is_none());
    let mut count = 0;
    for kind in NormKind::ALL {
        for &d in &DType::ALL {
            for beta in [false, true] {
                for &k in &ks {
                    for subgroups in [false, true] {
                        let name = format!("{kind:?} {d:?} beta={beta} K={k} subgroups={subgroups}");
                        if let Some(src) = module_held(kind, d, beta, k, subgroups) {
                            let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                            // trusted on the f32 family (f64's helpers are not reviewed)
                            assert_eq!(shaders::is_trusted(&src), d != DType::F64, "{name}");
                            validate(&name, &src);
                            if !subgroups {
                                validate_without_subgroups(&name, &src);
                            }
                            count += 1;
                        }
                    }
                }
            }
        }
    }
    // subgroup forms for the 3 f32-computed dtypes only
    assert_eq!(count, (4 + 3) * 6 * ks.len());
}

/// The workgroup-memory forms must not need SUBGROUP (devices without it run them).
fn validate_without_subgroups(name: &str, src: &str) {
    let m = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    let caps = naga::valid::Capabilities::all()
        - naga::valid::Capabilities::SUBGROUP
        - naga::valid::Capabilities::SUBGROUP_BARRIER;
    let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps);
    if let Err(e) = v.validate(&m) {
        panic!("{name} needs subgroup features it should not: {e:?}");
    }
}

#[test]
fn every_four_wide_single_pass_variant_is_valid() {
    use shaders::norm::{held4_per_thread, module_held4, MAX_HELD, MAX_HELD_PER_THREAD};
    assert_eq!(held4_per_thread(4096), Some(4));
    assert_eq!(held4_per_thread(4), Some(1));
    assert_eq!(held4_per_thread(6), None);
    assert_eq!(held4_per_thread(MAX_HELD + 4), None);
    assert!(module_held4(NormKind::Softmax, DType::F16, false, 1, false).is_none());
    let mut count = 0;
    for kind in NormKind::ALL {
        for beta in [false, true] {
            for k in [1, 2, 4, MAX_HELD_PER_THREAD / 4] {
                for subgroups in [false, true] {
                    let name = format!("vec4 {kind:?} beta={beta} K={k} subgroups={subgroups}");
                    if let Some(src) = module_held4(kind, DType::F32, beta, k, subgroups) {
                        let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                        assert!(shaders::is_trusted(&src), "{name}");
                        assert!(src.contains("array<vec4<f32>>"), "{name}");
                        validate(&name, &src);
                        count += 1;
                    }
                }
            }
        }
    }
    assert_eq!(count, 6 * 4 * 2);
}

#[test]
fn every_fused_residual_variant_is_valid() {
    use shaders::norm::{module_fused, Fusion, Held, MAX_HELD_PER_THREAD};
    let f = Fusion { bias: false, emit_sum: false };
    assert!(module_fused(NormKind::Softmax, DType::F32, false, f, None).is_none());
    assert!(module_fused(NormKind::RmsNorm, DType::I32, false, f, None).is_none());
    let vec4_f16 = Held { k: 1, subgroups: false, vec4: true };
    assert!(module_fused(NormKind::RmsNorm, DType::F16, false, f, Some(vec4_f16)).is_none());
    let mut count = 0;
    for kind in [NormKind::LayerNorm, NormKind::RmsNorm] {
        for d in [DType::F32, DType::F16, DType::BF16, DType::F64] {
            for (beta, bias, emit_sum) in
                [(false, false, false), (true, true, true), (false, true, false), (true, false, true)]
            {
                let fusion = Fusion { bias, emit_sum };
                let mut forms = vec![None];
                for k in [1, MAX_HELD_PER_THREAD] {
                    forms.push(Some(Held { k, subgroups: false, vec4: false }));
                    forms.push(Some(Held { k, subgroups: true, vec4: false }));
                }
                for k in [1, MAX_HELD_PER_THREAD / 4] {
                    forms.push(Some(Held { k, subgroups: true, vec4: true }));
                    forms.push(Some(Held { k, subgroups: false, vec4: true }));
                }
                for form in forms {
                    let name = format!("fused {kind:?} {d:?} beta={beta} {fusion:?} {form:?}");
                    let Some(src) = module_fused(kind, d, beta, fusion, form) else {
                        assert!(form.is_some_and(|h| !h.valid_for(d)), "{name}");
                        continue;
                    };
                    let src = src.unwrap_or_else(|e| panic!("{name}: {e}"));
                    // trusted as the plain single-pass forms, unless a bias index comes from params
                    assert_eq!(shaders::is_trusted(&src), form.is_some() && d != DType::F64 && !bias, "{name}");
                    assert_eq!(src.contains("st_sm(") || src.contains("sm[j] = v"), emit_sum, "{name}");
                    validate(&name, &src);
                    count += 1;
                }
            }
        }
    }
    // per kind and fusion: 3 f32-computed dtypes × 5 scalar forms + F64 × 3 + F32 × 4 four-wide
    assert_eq!(count, 2 * 4 * (3 * 5 + 3 + 4));
}
