//! Generators for `Cast` (§2.2.6): every (from, to) pair of dtypes, one variant each, with source
//! values at the boundaries the conversion rules care about: saturation limits of every integer
//! target, halves (truncation), float overflow, ties of narrowing roundings and values that a
//! double rounding (F64 → F32 → F16) gets wrong.

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{skeleton, Skeleton, Variant};
use crate::shapes::SMALL_NUMEL;
use crate::values::{
    bool_tensor, c64_tensor, component, extremes, float_tensor, int_tensor, wrap_int, FloatDomain, IntDomain, Piece,
    Rng, IEEE_SPECIALS,
};
use backend_api::spec::op_entry;
use backend_api::{DType, Result, Tensor};
use proptest::prelude::*;

/// Float source values at conversion boundaries.
const FLOAT_BOUNDARIES: &[f64] = &[
    0.5,
    -0.5,
    0.9,
    -0.9,
    1.5,
    2.5,
    -2.5,
    127.5,
    127.9,
    128.0,
    -128.5,
    -128.9,
    -129.0,
    255.5,
    255.9,
    256.0,
    2147483647.0,
    2147483648.0,
    -2147483648.0,
    -2147483649.0,
    4294967295.0,
    4294967296.0,
    9.2e18,
    9.3e18,
    -9.3e18,
    1.8e19,
    16777217.0,
    65504.0,
    65519.0,
    65520.0,
    1e5,
    -1e5,
    3.3895e38,
    3.4e38,
    1e39,
    -1e39,
    // Above a tie of F16 (BF16) by less than F32 can hold: a double rounding lands on the tie.
    1.0 + 1.0 / 2048.0 + 1.0 / 1_099_511_627_776.0,
    1.0 + 1.0 / 256.0 + 1.0 / 1_099_511_627_776.0,
    1.0 + 1.0 / 2048.0 + 1.0 / 1_048_576.0,
];

/// Integer source values at float rounding and overflow boundaries.
const INT_BOUNDARIES: &[i128] = &[
    16_777_217,
    16_777_219,
    -16_777_217,
    2049,
    2051,
    65504,
    65519,
    65520,
    65536,
    70_000,
    -70_000,
    9_007_199_254_740_993,
    300,
    -300,
    128,
    255,
    256,
    -129,
    257,
];

/// Variants: one per (from, to) pair of the dtypes `Cast` allows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if row != "Cast" {
        return None;
    }
    let dtypes: Vec<DType> = op_entry(row)?.dtypes.iter().collect();
    let mut out = Vec::with_capacity(dtypes.len() * dtypes.len());
    for &from in &dtypes {
        for &to in &dtypes {
            let strategy = skeleton(0..=5, SMALL_NUMEL, 1).prop_map(move |sk| cast_case(from, to, &sk)).boxed();
            out.push(Variant { dtype: from, label: format!("{}->{}", from.name(), to.name()), strategy });
        }
    }
    Some(out)
}

fn cast_case(from: DType, to: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let x = source(&mut rng, from, &sk.shape, (sk.rate + 0.1).min(1.0))?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = pb.g().cast(x, to)?;
    pb.finish(&[y])
}

/// The source domain: regular values over many magnitudes plus the boundary values. Subnormal
/// sources are left out: a backend may flush them (§1.7), which changes e.g. `x != 0`.
fn float_domain(dtype: DType) -> FloatDomain {
    FloatDomain::new(
        &[
            Piece::Uniform(-300.0, 300.0),
            Piece::LogMag { lo: 1e-3, hi: 1e20, signed: true },
            Piece::LogMag { lo: 1e-45, hi: 1e-3, signed: true },
            Piece::Ints(300),
            Piece::Halves(300.0),
        ],
        IEEE_SPECIALS,
    )
    .with(FLOAT_BOUNDARIES)
    .with(&extremes(component(dtype)))
}

fn source(rng: &mut Rng, from: DType, shape: &[usize], rate: f64) -> Result<Tensor> {
    let n = backend_api::shape::numel(shape);
    match from {
        DType::F32 | DType::F16 | DType::BF16 | DType::F64 => {
            float_tensor(from, shape, &float_domain(from).draw_n(rng, from, n, rate))
        }
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 => {
            let v: Vec<i128> = (0..n)
                .map(|_| {
                    if rng.chance(rate) {
                        wrap_int(from, rng.pick(INT_BOUNDARIES))
                    } else {
                        IntDomain::Any.draw(rng, from, rate)
                    }
                })
                .collect();
            int_tensor(from, shape, &v)
        }
        DType::Bool => {
            let p = rng.unit();
            bool_tensor(rng, shape, p)
        }
        DType::C64 => {
            let d = float_domain(DType::F32);
            let v: Vec<(f64, f64)> =
                (0..n).map(|_| (d.draw(rng, DType::F32, rate), d.draw(rng, DType::F32, rate))).collect();
            c64_tensor(shape, &v)
        }
    }
}
