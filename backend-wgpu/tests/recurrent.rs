//! Rnn, Gru and Lstm on the wgpu backend (through their decomposition into an input-projection
//! `MatMul` and a `Scan` of the cell) against cpu-ref's direct implementation: every cell, stacked
//! and bidirectional, both layouts, with and without bias and initial states, both Rnn
//! nonlinearities, both Gru reset forms, every float dtype the ops allow, and no steps.

use backend_api::op::{RecurrentAttrs, RnnNonlinearity};
use backend_api::{DType, Graph, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;

mod common;
use common::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
}

/// A graph of one `cell` node over x `[B, S, In]` (or `[S, B, In]`), weights as inputs, and its
/// inputs with random values.
fn problem(
    cell: Cell,
    a: RecurrentAttrs,
    d: DType,
    (b, s, i): (usize, usize, usize),
    init: bool,
) -> (Graph, Vec<(String, Tensor)>) {
    let h = a.hidden_size as usize;
    let dirs = a.num_directions();
    let mut g = GraphBuilder::new();
    let mut feeds = Vec::new();
    let mut input = |g: &mut GraphBuilder, name: String, shape: Vec<usize>, scale: f64| {
        let seed = feeds.len() as u64 + 1;
        feeds.push((name.clone(), random(d, &shape, -scale, scale, seed)));
        g.input(&name, d, shape).unwrap()
    };
    let x_shape = if a.batch_first { vec![b, s, i] } else { vec![s, b, i] };
    let x = input(&mut g, "x".into(), x_shape, 1.0);
    let mut weights = Vec::new();
    for l in 0..a.num_layers as usize {
        let in_l = if l == 0 { i } else { dirs * h };
        for dir in 0..dirs {
            let gh = cell.gates() * h;
            weights.push(input(&mut g, format!("w_ih{l}{dir}"), vec![gh, in_l], 0.6));
            weights.push(input(&mut g, format!("w_hh{l}{dir}"), vec![gh, h], 0.6));
            if a.has_bias {
                weights.push(input(&mut g, format!("b_ih{l}{dir}"), vec![gh], 0.3));
                weights.push(input(&mut g, format!("b_hh{l}{dir}"), vec![gh], 0.3));
            }
        }
    }
    let state = vec![a.num_layers as usize * dirs, b, h];
    let h0 = init.then(|| input(&mut g, "h0".into(), state.clone(), 0.5));
    let outs = match cell {
        Cell::Rnn => {
            let (y, hn) = g.rnn(x, &weights, h0, a).unwrap();
            vec![y, hn]
        }
        Cell::Gru => {
            let (y, hn) = g.gru(x, &weights, h0, a).unwrap();
            vec![y, hn]
        }
        Cell::Lstm => {
            let c0 = init.then(|| input(&mut g, "c0".into(), state.clone(), 0.5));
            let (y, hn, cn) = g.lstm(x, &weights, h0.zip(c0), a).unwrap();
            vec![y, hn, cn]
        }
    };
    for v in outs {
        g.output(v).unwrap();
    }
    (g.build().unwrap(), feeds)
}

fn check_case(cell: Cell, a: RecurrentAttrs, d: DType, dims: (usize, usize, usize), init: bool) {
    let (g, feeds) = problem(cell, a, d, dims, init);
    let inputs: Vec<(&str, &Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let want = run(cpu(), &g, &inputs);
    let got = run(wgpu(), &g, &inputs);
    for (k, (w, o)) in want.iter().zip(&got).enumerate() {
        // computed in f32 on both sides; a 16-bit output is one rounding of it
        check(&format!("{cell:?} {d} {a:?} {dims:?} init {init} output {k}"), o, w, Some(approx(d)), None);
    }
}

#[test]
fn every_cell_with_every_attribute_matches_cpu_ref() {
    let base = RecurrentAttrs::new(5);
    for cell in [Cell::Rnn, Cell::Gru, Cell::Lstm] {
        let variants = [
            base,
            RecurrentAttrs { num_layers: 2, bidirectional: true, ..base },
            RecurrentAttrs { batch_first: false, has_bias: false, ..base },
            RecurrentAttrs { nonlinearity: RnnNonlinearity::Relu, linear_before_reset: false, ..base },
        ];
        for (k, a) in variants.into_iter().enumerate() {
            check_case(cell, a, DType::F32, (2, 4, 3), k % 2 == 1);
        }
    }
}

#[test]
fn sixteen_bit_dtypes_and_empty_sequences() {
    let a = RecurrentAttrs { bidirectional: true, ..RecurrentAttrs::new(4) };
    for d in [DType::F16, DType::BF16] {
        if supported(d) {
            check_case(Cell::Lstm, a, d, (3, 3, 2), true);
            check_case(Cell::Gru, a, d, (1, 2, 5), false);
        }
    }
    // S = 0: y is empty, the final states are the initial ones
    for cell in [Cell::Rnn, Cell::Lstm] {
        check_case(cell, a, DType::F32, (2, 0, 3), true);
    }
}
