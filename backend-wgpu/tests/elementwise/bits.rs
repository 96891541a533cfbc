//! Signed zeros and special values, bit for bit (the class comparison treats +0 = -0).

use crate::harness::{floats_of, Harness};
use crate::values::*;
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{Backend, DType, GraphBuilder, Tensor, Value};

const PI_2: f64 = std::f64::consts::FRAC_PI_2;

/// (op, [(x, f(x))]) where f(x) must match bit for bit (any NaN for NaN).
const UNARY_BITS: &[(UnaryOp, &[(f64, f64)])] = &[
    (UnaryOp::Relu, &[(-0.0, 0.0), (-1.0, 0.0), (3.0, 3.0), (NAN, NAN), (-INF, 0.0), (INF, INF)]),
    (UnaryOp::Abs, &[(-0.0, 0.0), (-INF, INF), (-2.0, 2.0), (NAN, NAN)]),
    (UnaryOp::Neg, &[(0.0, -0.0), (-0.0, 0.0), (INF, -INF), (NAN, NAN)]),
    (UnaryOp::Sign, &[(-0.0, -0.0), (0.0, 0.0), (-5.0, -1.0), (7.0, 1.0), (NAN, NAN), (-INF, -1.0)]),
    (
        UnaryOp::Round,
        &[
            (-0.4, -0.0),
            (-0.5, -0.0),
            (0.5, 0.0),
            (1.5, 2.0),
            (2.5, 2.0),
            (-2.5, -2.0),
            (-INF, -INF),
            (NAN, NAN),
            (-0.0, -0.0),
        ],
    ),
    (UnaryOp::Floor, &[(-0.0, -0.0), (0.3, 0.0), (-0.3, -1.0), (INF, INF), (NAN, NAN)]),
    (UnaryOp::Ceil, &[(-0.5, -0.0), (0.3, 1.0), (-0.0, -0.0), (-INF, -INF), (NAN, NAN)]),
    (UnaryOp::Sqrt, &[(-0.0, -0.0), (0.0, 0.0), (-1.0, NAN), (INF, INF), (4.0, 2.0), (NAN, NAN), (-INF, NAN)]),
    (UnaryOp::Rsqrt, &[(-0.0, -INF), (0.0, INF), (INF, 0.0), (-1.0, NAN), (4.0, 0.5), (NAN, NAN)]),
    (UnaryOp::Reciprocal, &[(-0.0, -INF), (0.0, INF), (-INF, -0.0), (INF, 0.0), (4.0, 0.25), (NAN, NAN)]),
    (UnaryOp::Log, &[(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (1.0, 0.0), (NAN, NAN), (-INF, NAN)]),
    (UnaryOp::Exp, &[(-INF, 0.0), (INF, INF), (1000.0, INF), (-1000.0, 0.0), (0.0, 1.0), (NAN, NAN)]),
    (UnaryOp::Sigmoid, &[(INF, 1.0), (-INF, 0.0), (NAN, NAN)]),
    (UnaryOp::Tanh, &[(INF, 1.0), (-INF, -1.0), (1000.0, 1.0), (-1000.0, -1.0), (0.0, 0.0), (NAN, NAN)]),
    (UnaryOp::Gelu, &[(INF, INF), (-INF, 0.0), (0.0, 0.0), (NAN, NAN)]),
    (UnaryOp::GeluApprox, &[(INF, INF), (-INF, 0.0), (0.0, 0.0), (NAN, NAN)]),
    (UnaryOp::Silu, &[(INF, INF), (-INF, 0.0), (0.0, 0.0), (NAN, NAN)]),
    (UnaryOp::Softplus, &[(INF, INF), (-INF, 0.0), (NAN, NAN)]),
    (UnaryOp::Sin, &[(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 0.0)]),
    (UnaryOp::Cos, &[(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 1.0)]),
    (UnaryOp::Tan, &[(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 0.0)]),
    (UnaryOp::Atan, &[(NAN, NAN), (0.0, 0.0), (INF, PI_2), (-INF, -PI_2)]),
    (UnaryOp::Erf, &[(INF, 1.0), (-INF, -1.0), (NAN, NAN), (0.0, 0.0)]),
];

/// Cases (a, b, g(a, b)) of one binary op.
type BinaryCases = &'static [(f64, f64, f64)];

/// (op, cases).
const BINARY_BITS: &[(BinaryOp, BinaryCases)] = &[
    (BinaryOp::Max, &[(-0.0, 0.0, 0.0), (0.0, -0.0, 0.0), (NAN, 1.0, NAN), (1.0, NAN, NAN), (-INF, 3.0, 3.0)]),
    (BinaryOp::Min, &[(-0.0, 0.0, -0.0), (0.0, -0.0, -0.0), (NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, 3.0, 3.0)]),
    (
        BinaryOp::Rem,
        &[
            (-4.0, 2.0, -0.0),
            (4.0, -2.0, 0.0),
            (5.5, 2.0, 1.5),
            (-5.5, 2.0, -1.5),
            (1.0, 0.0, NAN),
            (INF, 2.0, NAN),
            (3.0, INF, 3.0),
            (-3.0, -INF, -3.0),
        ],
    ),
    (
        BinaryOp::Mod,
        &[
            (-4.0, 2.0, 0.0),
            (4.0, -2.0, -0.0),
            (-5.5, 2.0, 0.5),
            (5.5, -2.0, -0.5),
            (1.0, -0.0, NAN),
            (-INF, 2.0, NAN),
            (3.0, INF, 3.0),
            (-3.0, INF, INF),
            (3.0, -INF, -INF),
            (-3.0, -INF, -3.0),
            (0.0, -INF, -0.0),
        ],
    ),
    (
        BinaryOp::Div,
        &[(1.0, -0.0, -INF), (0.0, 0.0, NAN), (-1.0, INF, -0.0), (INF, INF, NAN), (-INF, 2.0, -INF), (6.0, 3.0, 2.0)],
    ),
    (
        BinaryOp::Pow,
        &[
            (NAN, 0.0, 1.0),
            (NAN, -0.0, 1.0),
            (1.0, NAN, 1.0),
            (1.0, INF, 1.0),
            (-2.0, 0.5, NAN),
            (0.0, -3.0, INF),
            (-0.0, -3.0, -INF),
            (-0.0, -2.0, INF),
            (-0.0, -0.5, INF),
            (0.0, 3.0, 0.0),
            (-0.0, 3.0, -0.0),
            (-0.0, 2.0, 0.0),
            (-0.0, 0.5, 0.0),
            (-1.0, INF, 1.0),
            (-1.0, -INF, 1.0),
            (0.5, INF, 0.0),
            (2.0, INF, INF),
            (0.5, -INF, INF),
            (-2.0, -INF, 0.0),
            (INF, -1.0, 0.0),
            (INF, 0.5, INF),
            (-INF, 3.0, -INF),
            (-INF, 2.0, INF),
            (-INF, 0.5, INF),
            (-INF, -3.0, -0.0),
            (-INF, -2.0, 0.0),
            (-INF, -0.5, 0.0),
            (NAN, 1.0, NAN),
            (2.0, NAN, NAN),
            (-3.0, 1e30, INF),
        ],
    ),
];

/// Bits of `v` in float dtype `d` (little-endian).
fn float_bits(d: DType, v: f64) -> Vec<u8> {
    float_tensor(d, &[1], &[v]).bytes().to_vec()
}

/// Runs every case of both tables on the GPU for dtype `d`: one output per op, in table order.
fn run_tables(h: &Harness, d: DType) -> Vec<Tensor> {
    let col = |v: Vec<f64>| float_tensor(d, &[v.len()], &v);
    let mut xs = Vec::new();
    for (_, cases) in UNARY_BITS {
        xs.push(col(cases.iter().map(|c| c.0).collect()));
    }
    for (_, cases) in BINARY_BITS {
        xs.push(col(cases.iter().map(|c| c.0).collect()));
        xs.push(col(cases.iter().map(|c| c.1).collect()));
    }
    let mut g = GraphBuilder::new();
    let names: Vec<String> = (0..xs.len()).map(|k| format!("x{k}")).collect();
    let v: Vec<Value> = xs.iter().zip(&names).map(|(t, n)| g.input(n, d, t.shape()).unwrap()).collect();
    for (k, (op, _)) in UNARY_BITS.iter().enumerate() {
        let y = g.unary(*op, v[k]).unwrap();
        g.output(y).unwrap();
    }
    let nu = UNARY_BITS.len();
    for (k, (op, _)) in BINARY_BITS.iter().enumerate() {
        let y = g.binary(*op, v[nu + 2 * k], v[nu + 2 * k + 1]).unwrap();
        g.output(y).unwrap();
    }
    let mut exe = h.gpu.compile(&g.build().unwrap(), &Default::default()).unwrap();
    let feeds: Vec<_> = names.iter().map(|n| n.as_str()).zip(xs.iter().map(|t| t.view())).collect();
    exe.run(&feeds).unwrap()
}

#[test]
fn signed_zeros_and_special_values_are_bit_exact() {
    let h = Harness::new();
    let mut failures = Vec::new();
    let wants: Vec<(&str, Vec<f64>)> = UNARY_BITS
        .iter()
        .map(|(op, c)| (op.name(), c.iter().map(|x| x.1).collect()))
        .chain(BINARY_BITS.iter().map(|(op, c)| (op.name(), c.iter().map(|x| x.2).collect())))
        .collect();
    for d in FLOATS.into_iter().filter(|&d| h.has(d)) {
        for (o, (name, cases)) in run_tables(&h, d).iter().zip(&wants) {
            for (i, (&want, got)) in cases.iter().zip(o.bytes().chunks_exact(d.size())).enumerate() {
                let g = floats_of(&Tensor::from_bytes(d, &[1], got.to_vec()).unwrap())[0];
                let ok = if want.is_nan() {
                    g.is_nan()
                } else if *name == "Atan" && want.is_finite() && want != 0.0 {
                    // ±pi/2 is not exact in any format: within the class instead
                    (g - want).abs() <= 1e-6 + if d.is_half() { 1e-2 } else { 0.0 }
                } else {
                    got == float_bits(d, want).as_slice()
                };
                if !ok {
                    failures.push(format!("{name} {d} case {i}: got {g:e} (bits {got:02x?}) want {want:e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
