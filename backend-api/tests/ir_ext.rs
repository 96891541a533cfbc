//! Integration tests of the non-core ops of the IR: for every op, a valid build whose inferred
//! types are checked against a hand-worked example of the spec, and invalid builds for each error
//! class the op's section lists.

#[path = "ir_ext/attention.rs"]
mod attention;
#[path = "ir_ext/control.rs"]
mod control;
#[path = "ir_ext/conv.rs"]
mod conv;
#[path = "ir_ext/indexing.rs"]
mod indexing;
#[path = "ir_ext/linalg.rs"]
mod linalg;
#[path = "ir_ext/norm.rs"]
mod norm;
#[path = "ir_ext/sequence.rs"]
mod sequence;
#[path = "ir_ext/signal.rs"]
mod signal;
#[cfg(feature = "splat")]
#[path = "ir_ext/splat.rs"]
mod splat;

use backend_api::{DType, Dim, ErrorKind, GraphBuilder, Result, Shape, Value};
use std::fmt::Debug;

/// An input with static dims.
pub fn inp(b: &mut GraphBuilder, name: &str, dtype: DType, dims: &[usize]) -> Value {
    b.input(name, dtype, Shape::of(dims)).unwrap()
}

/// An input with mixed static / symbolic dims (`Dim`s).
pub fn sym(b: &mut GraphBuilder, name: &str, dtype: DType, dims: Vec<Dim>) -> Value {
    b.input(name, dtype, Shape(dims)).unwrap()
}

/// The static dims of a value.
pub fn dims(b: &GraphBuilder, v: Value) -> Vec<usize> {
    b.value_type(v).unwrap().shape.as_static().unwrap()
}

/// The dtype of a value.
pub fn dt(b: &GraphBuilder, v: Value) -> DType {
    b.value_type(v).unwrap().dtype
}

/// Asserts that `r` failed with `kind`.
#[track_caller]
pub fn fails<T: Debug>(r: Result<T>, kind: ErrorKind) {
    match r {
        Ok(v) => panic!("expected a {kind:?} error, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "wrong kind; error was: {e}");
            assert!(!e.message().is_empty());
        }
    }
}

/// Marks `outs` as outputs, builds the graph and re-validates it (which re-runs inference).
pub fn finish(mut b: GraphBuilder, outs: &[Value]) -> backend_api::Graph {
    for &o in outs {
        b.output(o).unwrap();
    }
    let g = b.build().unwrap();
    g.validate().unwrap();
    g
}
