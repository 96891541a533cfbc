//! Renders every variant of the indexing family the lowering can produce (Gather for every data
//! dtype × index dtype; atomic scatter, owner-computes scatter and the conversions it uses) and
//! validates it with naga.

use backend_api::DType;
use shaders::indexing::{convert_module, gather_module, owner_module, scatter_acc_dtype, scatter_module};

mod common;
use common::validate;

const INDEX: [DType; 3] = [DType::I32, DType::I64, DType::U32];

#[test]
fn every_gather_variant_is_valid() {
    for &d in &DType::ALL {
        for &i in &INDEX {
            let src = gather_module(d, i).unwrap_or_else(|e| panic!("gather {d:?}/{i:?}: {e}"));
            validate(&format!("gather {d:?}/{i:?}"), &src);
        }
    }
}

#[test]
fn every_scatter_variant_is_valid() {
    for &d in &DType::ALL {
        for &i in &INDEX {
            match scatter_acc_dtype(d) {
                Some(_) => {
                    let src = scatter_module(d, i).unwrap_or_else(|e| panic!("scatter {d:?}/{i:?}: {e}"));
                    validate(&format!("scatter {d:?}/{i:?}"), &src);
                    assert!(src.contains("atomic"), "{src}");
                }
                None => assert!(scatter_module(d, i).is_err(), "{d:?}"),
            }
        }
    }
}

#[test]
fn owner_variants_are_valid() {
    for &d in &[DType::F64, DType::F32, DType::I64, DType::C64] {
        for &i in &INDEX {
            for with_data in [true, false] {
                let src = owner_module(d, i, with_data).unwrap_or_else(|e| panic!("owner {d:?}/{i:?}: {e}"));
                validate(&format!("owner {d:?}/{i:?}/{with_data}"), &src);
            }
        }
    }
    assert!(owner_module(DType::F16, DType::I32, true).is_err());
}

#[test]
fn conversions_are_valid() {
    for (s, d) in [
        (DType::U32, DType::U32),
        (DType::F16, DType::F32),
        (DType::BF16, DType::F32),
        (DType::F32, DType::F16),
        (DType::F32, DType::BF16),
    ] {
        let src = convert_module(s, d).unwrap_or_else(|e| panic!("convert {s:?}->{d:?}: {e}"));
        validate(&format!("convert {s:?}->{d:?}"), &src);
    }
    assert!(convert_module(DType::F32, DType::I32).is_err());
}

#[test]
fn non_index_dtypes_are_refused() {
    assert!(gather_module(DType::F32, DType::F32).is_err());
    assert!(scatter_module(DType::F32, DType::I8).is_err());
}
