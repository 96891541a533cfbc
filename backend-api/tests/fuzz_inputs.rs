//! A fuzzer for the two readers of untrusted bytes, `.npy` and graph JSON: any input, and any
//! mutation of a valid one, gives `Ok` or `Err`, never a panic (overflow checks are on in the test
//! profile, so a wrapping size would panic here). `PROPTEST_CASES=100000` runs it longer.
#![cfg(feature = "serde")]

use backend_api::npy::{from_npy, to_npy};
use backend_api::op::UnaryOp;
use backend_api::{DType, GraphBuilder, Tensor};
use proptest::prelude::*;

fn valid_npy() -> Vec<u8> {
    to_npy(&Tensor::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()).unwrap()
}

fn valid_json() -> String {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2, 3]).unwrap();
    let y = b.unary(UnaryOp::Neg, x).unwrap();
    let z = b.reshape(y, &[3, -1]).unwrap();
    b.output(z).unwrap();
    backend_api::json::to_json(&b.build().unwrap()).unwrap()
}

/// `base` with `edits` (position, byte) applied and cut to `keep` bytes.
fn mutate(mut base: Vec<u8>, edits: &[(usize, u8)], keep: usize) -> Vec<u8> {
    for &(at, b) in edits {
        let n = base.len();
        if let Some(slot) = base.get_mut(at % n.max(1)) {
            *slot = b;
        }
    }
    base.truncate(keep);
    base
}

proptest! {
    #[test]
    fn npy_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = from_npy(&bytes);
        let mut with_magic = b"\x93NUMPY".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = from_npy(&with_magic);
    }

    #[test]
    fn mutated_npy_never_panics(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6), keep in 0usize..200) {
        let _ = from_npy(&mutate(valid_npy(), &edits, keep));
    }

    #[test]
    fn mutated_json_never_panics(edits in proptest::collection::vec((any::<usize>(), 0x20u8..0x7f), 0..6), keep in 0usize..2000) {
        let bytes = mutate(valid_json().into_bytes(), &edits, keep);
        if let Ok(text) = String::from_utf8(bytes) {
            let _ = backend_api::json::from_json(&text);
        }
    }

    #[test]
    fn json_with_hostile_numbers_never_panics(n in any::<u64>(), m in any::<u64>()) {
        let text = valid_json().replacen("[2, 3]", &format!("[{n}, {m}]"), 1).replacen("[3, -1]", &format!("[{m}, {n}]"), 1);
        let _ = backend_api::json::from_json(&text);
    }
}
