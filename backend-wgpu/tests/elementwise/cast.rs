//! Cast: every (from, to) pair with boundary values (saturation, ties, double-rounding traps).

use crate::harness::Harness;
use crate::values::*;
use backend_api::spec::Tolerance;
use backend_api::{DType, Tensor};

/// Float sources at the conversion boundaries (saturation limits, halves, overflow, ties, double
/// rounding traps), plus subnormals of every format.
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
    1.0 + 1.0 / 2048.0 + 1.0 / 1_099_511_627_776.0,
    1.0 + 1.0 / 256.0 + 1.0 / 1_099_511_627_776.0,
    1.0 + 1.0 / 2048.0 + 1.0 / 1_048_576.0,
    1e-40,
    -1e-40,
    3e-39,
    1e-45,
    6e-8,
    -6e-8,
    3e-5,
    1e-310,
    -1e-320,
    1e300,
    -1e300,
    9223372036854775807.0,
    -9223372036854775808.0,
    0.99999999,
    -0.99999999,
];

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
    -9_007_199_254_740_993,
    300,
    -300,
    128,
    255,
    256,
    -129,
    257,
    16_842_753,
    16_908_288 + 65_537,
    2_147_483_647,
    -2_147_483_648,
    4_294_967_295,
    0x7fff_ffff_ffff_fdff,
    0x4000_0000_0000_0401,
    -0x4000_0000_0000_0401,
];

fn cast_source(d: DType, r: &mut Rng) -> Tensor {
    let mut fd = dom(
        &[
            Piece::Uni(-300.0, 300.0),
            Piece::Log(1e-3, 1e20, true),
            Piece::Log(1e-45, 1e-3, true),
            Piece::Ints(300),
            Piece::Halves(300.0),
        ],
        FLOAT_BOUNDARIES,
    );
    fd.specials.extend_from_slice(&[max_finite(d), -max_finite(d), min_normal(d), -min_normal(d)]);
    tensor_of(r, d, &[N + FLOAT_BOUNDARIES.len()], &fd, (-300, 300), INT_BOUNDARIES)
}

#[test]
fn cast_matches_cpu_ref_for_every_pair() {
    let mut h = Harness::new();
    let dts: Vec<DType> = DType::ALL.iter().copied().filter(|&d| h.has(d)).collect();
    for &from in &dts {
        let mut r = Rng::new(from as u64 * 7 + 1);
        let x = cast_source(from, &mut r);
        let e = Tensor::from_bytes(from, &[3, 0], Vec::new()).unwrap();
        for &to in &dts {
            h.check(&format!("Cast {from}->{to}"), &[x.clone(), e.clone()], Tolerance::Exact, |g, v| {
                vec![g.cast(v[0], to).unwrap(), g.cast(v[1], to).unwrap()]
            });
        }
    }
    h.finish("cast");
}
