//! Rope and RopeBackward on the wgpu backend against cpu-ref: both pairing styles, every
//! float32-family dtype with tables of x's dtype and of F32, shared and per-batch tables, position
//! axes before and between other axes, partial rotation (R = 0 included), heads of widths that
//! take the four-wide F32 kernel and widths that do not, grids past one workgroup, empty tensors.

use backend_api::op::RopeStyle;
use backend_api::{DType, Graph, GraphBuilder};
use backend_cpu_ref as _;
use backend_wgpu as _;

mod common;
use common::*;

/// Close (§1.11) for the dtype.
fn close(d: DType) -> f64 {
    match d {
        DType::F16 => 1e-3,
        DType::BF16 => 8e-3,
        _ => 1e-6,
    }
}

struct Case {
    dims: &'static [usize],
    d: u32,
    r: u32,
    seq_axis: i64,
    per_batch: bool,
}

const fn case(dims: &'static [usize], d: u32, r: u32, seq_axis: i64, per_batch: bool) -> Case {
    Case { dims, d, r, seq_axis, per_batch }
}

/// Four-wide-eligible (R/2 and D multiples of 4) and scalar geometries.
const CASES: &[Case] = &[
    case(&[1, 70, 4, 128], 128, 128, 1, false),
    case(&[2, 5, 3, 24], 12, 8, 1, true),
    case(&[2, 3, 16], 16, 8, -2, true),
    case(&[3, 7, 20], 10, 6, 1, true),
    case(&[9, 12], 6, 6, 0, false),
    case(&[2, 3, 4, 5, 8], 8, 4, 2, false),
    case(&[2, 3, 4, 5, 8], 8, 2, -4, true),
    case(&[4, 3, 16], 16, 0, 0, false),
    case(&[1, 257, 2], 2, 2, 1, false),
    case(&[3, 0, 8], 8, 8, 1, false),
];

fn graph(c: &Case, d: DType, table: DType, style: RopeStyle, backward: bool) -> (Graph, Vec<usize>) {
    let rank = c.dims.len() as i64;
    let s = c.dims[((c.seq_axis + rank) % rank) as usize];
    let tdims = if c.per_batch { vec![c.dims[0], s, c.r as usize / 2] } else { vec![s, c.r as usize / 2] };
    let mut g = GraphBuilder::new();
    let x = g.input("x", d, c.dims).unwrap();
    let cos = g.input("cos", table, tdims.as_slice()).unwrap();
    let sin = g.input("sin", table, tdims.as_slice()).unwrap();
    let y = if backward {
        g.rope_backward(x, (cos, sin), c.d, Some(c.r), style, c.seq_axis).unwrap()
    } else {
        g.rope(x, (cos, sin), c.d, Some(c.r), style, c.seq_axis).unwrap()
    };
    g.output(y).unwrap();
    (g.build().unwrap(), tdims)
}

#[test]
fn rope_and_backward_match_cpu_ref() {
    for d in [DType::F32, DType::F16, DType::BF16].into_iter().filter(|&d| supported(d)) {
        for table in if d == DType::F32 { vec![d] } else { vec![d, DType::F32] } {
            for (k, c) in CASES.iter().enumerate() {
                for style in [RopeStyle::NeoX, RopeStyle::GptJ] {
                    for backward in [false, true] {
                        let (g, tdims) = graph(c, d, table, style, backward);
                        let seed = k as u64 * 4 + 1;
                        let x = random(d, c.dims, -2.0, 2.0, seed);
                        let cos = random(table, &tdims, -1.5, 1.5, seed + 1);
                        let sin = random(table, &tdims, -1.5, 1.5, seed + 2);
                        let inputs = [("x", &x), ("cos", &cos), ("sin", &sin)];
                        let got = &run(wgpu(), &g, &inputs)[0];
                        let want = &run(cpu(), &g, &inputs)[0];
                        let name =
                            format!("{d} tables {table} {:?} D {} R {} {style:?} back {backward}", c.dims, c.d, c.r);
                        check(&name, got, want, Some(close(d)), None);
                    }
                }
            }
        }
    }
}
