//! The errors of §2.10.1 (`Arity`, `Shape`, `DType`, `Attribute`), from the kernel called directly
//! (the builder rejects the same graphs earlier; one case checks that it agrees).

use super::super::{gru, lstm, rnn};
use super::{params, rand, try_run, Kind};
use backend_api::op::RecurrentAttrs;
use backend_api::{ErrorKind, Result, Tensor};

fn kernel(kind: Kind, a: &RecurrentAttrs, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    let refs: Vec<&Tensor> = ins.iter().collect();
    match kind {
        Kind::Rnn => rnn(a, &refs),
        Kind::Gru => gru(a, &refs),
        Kind::Lstm => lstm(a, &refs),
    }
}

fn kind_of(r: Result<Vec<Tensor>>) -> ErrorKind {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            assert!(!e.message().is_empty());
            e.kind()
        }
    }
}

/// `x` `[2, 3, 4]` and the parameters of `a` with In = 4.
fn inputs(kind: Kind, a: &RecurrentAttrs) -> Vec<Tensor> {
    let mut ins = vec![rand(&[2, 3, 4], 1, 1.0)];
    ins.extend(params(kind, a, 4, 2));
    ins
}

#[test]
fn well_formed_inputs_run() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs { num_layers: 2, bidirectional: true, ..RecurrentAttrs::new(3) };
        let outs = kernel(kind, &a, &inputs(kind, &a)).unwrap();
        assert_eq!(outs.len(), 1 + kind.states());
    }
}

#[test]
fn a_wrong_input_count_is_an_arity_error() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs { num_layers: 2, ..RecurrentAttrs::new(3) };
        let mut ins = inputs(kind, &a);
        ins.pop();
        assert_eq!(kind_of(kernel(kind, &a, &ins)), ErrorKind::Arity, "{kind:?} missing b_hh");
        // an initial state promised but not given
        let st = RecurrentAttrs { has_initial_state: true, ..a };
        assert_eq!(kind_of(kernel(kind, &st, &inputs(kind, &a))), ErrorKind::Arity, "{kind:?} no h0");
        assert_eq!(kind_of(kernel(kind, &a, &[])), ErrorKind::Arity, "{kind:?} no x");
    }
}

#[test]
fn wrong_weight_bias_state_and_x_shapes_are_shape_errors() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs { num_layers: 2, ..RecurrentAttrs::new(3) };
        let gh = kind.gates() * 3;
        // layer 1's w_ih must be [Gc·H, D·H], not [Gc·H, In]
        let mut ins = inputs(kind, &a);
        ins[5] = rand(&[gh, 4], 3, 1.0);
        assert_eq!(kind_of(kernel(kind, &a, &ins)), ErrorKind::Shape, "{kind:?} layer 1 w_ih");
        let mut ins = inputs(kind, &a);
        ins[2] = rand(&[gh, 2], 3, 1.0);
        assert_eq!(kind_of(kernel(kind, &a, &ins)), ErrorKind::Shape, "{kind:?} w_hh");
        let mut ins = inputs(kind, &a);
        ins[4] = rand(&[gh + 1], 3, 1.0);
        assert_eq!(kind_of(kernel(kind, &a, &ins)), ErrorKind::Shape, "{kind:?} b_hh");
        let mut ins = inputs(kind, &a);
        ins[0] = rand(&[6, 4], 3, 1.0);
        assert_eq!(kind_of(kernel(kind, &a, &ins)), ErrorKind::Shape, "{kind:?} rank-2 x");
        // states are [L·D, B, H] = [2, 2, 3] even though x is batch-first
        let st = RecurrentAttrs { has_initial_state: true, ..a };
        let mut ins = inputs(kind, &a);
        ins.extend((0..kind.states()).map(|_| rand(&[2, 3, 3], 4, 1.0)));
        assert_eq!(kind_of(kernel(kind, &st, &ins)), ErrorKind::Shape, "{kind:?} h0");
    }
}

#[test]
fn dtypes_outside_float32_family_or_mixed_are_dtype_errors() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs::new(2);
        let to = |t: &Tensor, d| crate::ops::elementwise::cast::cast(t, d).unwrap();
        let f64s: Vec<Tensor> = inputs(kind, &a).iter().map(|t| to(t, backend_api::DType::F64)).collect();
        assert_eq!(kind_of(kernel(kind, &a, &f64s)), ErrorKind::DType, "{kind:?} F64");
        let mut mixed = inputs(kind, &a);
        mixed[1] = to(&mixed[1], backend_api::DType::F16);
        assert_eq!(kind_of(kernel(kind, &a, &mixed)), ErrorKind::DType, "{kind:?} F16 w_ih");
    }
}

#[test]
fn zero_sizes_are_attribute_errors() {
    for kind in Kind::ALL {
        let zero_h = RecurrentAttrs::new(0);
        assert_eq!(kind_of(kernel(kind, &zero_h, &inputs(kind, &RecurrentAttrs::new(1)))), ErrorKind::Attribute);
        let zero_l = RecurrentAttrs { num_layers: 0, ..RecurrentAttrs::new(2) };
        assert_eq!(kind_of(kernel(kind, &zero_l, &[rand(&[2, 3, 4], 1, 1.0)])), ErrorKind::Attribute);
    }
}

#[test]
fn the_builder_reports_the_same_kinds() {
    for kind in Kind::ALL {
        let a = RecurrentAttrs::new(2);
        let ins = inputs(kind, &a);
        let mut bad = ins[1..].to_vec();
        bad[1] = rand(&[kind.gates() * 2, 3], 1, 1.0);
        assert_eq!(kind_of(try_run(kind, a, &ins[0], &bad, &[])), ErrorKind::Shape, "{kind:?}");
        assert_eq!(kind_of(try_run(kind, a, &ins[0], &ins[1..3], &[])), ErrorKind::Arity, "{kind:?}");
        let zero = RecurrentAttrs::new(0);
        assert_eq!(kind_of(try_run(kind, zero, &ins[0], &ins[1..], &[])), ErrorKind::Attribute, "{kind:?}");
    }
}
