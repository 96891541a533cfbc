//! Generators for `Unary.*`, `Binary.*`, `Compare.*`, `Where` and `Fma` (§2.2.1–2.2.5): shapes of
//! rank 0–5 with broadcasting between operands (rank mismatch and 1-dims included), values from
//! each sub-op's test domain ([`domains`]) with its special values mixed in.

use crate::problem::{Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{broadcast_partner, numel, MAX_NUMEL};
use crate::values::{fit_normal, float_tensor, pooled, round_to, Rng, Values};
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::{DType, Result, Tensor};
use domains::{BinaryDomain, REM_A_SPECIALS, REM_B_SPECIALS};
use proptest::prelude::*;

pub mod cast;
pub mod domains;

/// Variants for the rows of this family.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if row == "Cast" {
        return cast::variants(row);
    }
    match row {
        "Where" => return per_dtype(row, |dt| strategy(dt, 3, where_case)),
        "Fma" => return per_dtype(row, |dt| strategy(dt, 3, fma_case)),
        _ => {}
    }
    let (family, name) = row.split_once('.')?;
    match family {
        "Unary" => {
            let op = *UnaryOp::ALL.iter().find(|u| u.name() == name)?;
            per_dtype(row, move |dt| skeleton(0..=5, MAX_NUMEL, 1).prop_map(move |sk| unary_case(op, dt, &sk)).boxed())
        }
        "Binary" => {
            let op = *BinaryOp::ALL.iter().find(|b| b.name() == name)?;
            per_dtype(row, move |dt| skeleton(0..=5, MAX_NUMEL, 2).prop_map(move |sk| binary_case(op, dt, &sk)).boxed())
        }
        "Compare" => {
            let op = *CompareOp::ALL.iter().find(|c| c.name() == name)?;
            per_dtype(row, move |dt| {
                skeleton(0..=5, MAX_NUMEL, 2).prop_map(move |sk| compare_case(op, dt, &sk)).boxed()
            })
        }
        _ => None,
    }
}

fn strategy(dtype: DType, leaves: usize, case: fn(DType, &Skeleton) -> Generated) -> BoxedStrategy<Generated> {
    skeleton(0..=5, MAX_NUMEL, leaves).prop_map(move |sk| case(dtype, &sk)).boxed()
}

/// Shapes of `N` operands that broadcast to (at most) `out`; often one of them is `out` itself.
pub fn operand_shapes<const N: usize>(rng: &mut Rng, out: &[usize]) -> [Vec<usize>; N] {
    let mut s: [Vec<usize>; N] = std::array::from_fn(|_| broadcast_partner(rng, out));
    if rng.chance(0.6) {
        if let Some(x) = s.get_mut(rng.below(N)) {
            *x = out.to_vec();
        }
    }
    s
}

fn unary_case(op: UnaryOp, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let x = domains::unary(op, dtype).tensor(&mut rng, dtype, &sk.shape, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), x)?;
    let y = pb.g().unary(op, x)?;
    pb.finish(&[y])
}

fn binary_case(op: BinaryOp, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let [sa, sb] = operand_shapes(&mut rng, &sk.shape);
    let (a, b) = binary_data(op, dtype, &mut rng, &sa, &sb, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let a = pb.leaf(sk.kind(0), a)?;
    let b = pb.leaf(sk.kind(1), b)?;
    let y = pb.g().binary(op, a, b)?;
    pb.finish(&[y])
}

fn compare_case(op: CompareOp, dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let [sa, sb] = operand_shapes(&mut rng, &sk.shape);
    let (a, b) = pooled_pair(&mut rng, &domains::compare(dtype), dtype, &sa, &sb, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let a = pb.leaf(sk.kind(0), a)?;
    let b = pb.leaf(sk.kind(1), b)?;
    let y = pb.g().compare(op, a, b)?;
    pb.finish(&[y])
}

fn where_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let [sc, sx, sy] = operand_shapes(&mut rng, &sk.shape);
    let p_true = rng.unit();
    let cond = crate::values::bool_tensor(&mut rng, &sc, p_true)?;
    let x = Values::any(dtype, true).tensor(&mut rng, dtype, &sx, sk.rate)?;
    let y = Values::any(dtype, true).tensor(&mut rng, dtype, &sy, sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let c = pb.leaf(sk.kind(0), cond)?;
    let x = pb.leaf(sk.kind(1), x)?;
    let y = pb.leaf(sk.kind(2), y)?;
    let out = pb.g().where_(c, x, y)?;
    pb.finish(&[out])
}

fn fma_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let [sa, sb, sc] = operand_shapes(&mut rng, &sk.shape);
    let (va, vb, vc) = domains::fma();
    let mut pb = ProblemBuilder::new();
    let a = pb.leaf(sk.kind(0), va.tensor(&mut rng, dtype, &sa, sk.rate)?)?;
    let b = pb.leaf(sk.kind(1), vb.tensor(&mut rng, dtype, &sb, sk.rate)?)?;
    let c = pb.leaf(sk.kind(2), vc.tensor(&mut rng, dtype, &sc, sk.rate)?)?;
    let out = pb.g().fma(a, b, c)?;
    pb.finish(&[out])
}

fn binary_data(
    op: BinaryOp,
    dtype: DType,
    rng: &mut Rng,
    sa: &[usize],
    sb: &[usize],
    rate: f64,
) -> Result<(Tensor, Tensor)> {
    match domains::binary(op, dtype) {
        BinaryDomain::Independent(va, vb) => Ok((va.tensor(rng, dtype, sa, rate)?, vb.tensor(rng, dtype, sb, rate)?)),
        BinaryDomain::Pooled(v) => pooled_pair(rng, &v, dtype, sa, sb, rate),
        BinaryDomain::FloatRemainder => remainder_pair(rng, dtype, sa, sb, rate),
        BinaryDomain::FloatPow => {
            let (va, vb) = domains::pow(dtype, rng.chance(0.4));
            Ok((va.tensor(rng, dtype, sa, rate)?, vb.tensor(rng, dtype, sb, rate)?))
        }
    }
}

/// Half of the cases draw both operands from one pool of 6 values (ties, equal operands, ±0
/// pairs); the other half draw them independently.
fn pooled_pair(
    rng: &mut Rng,
    v: &Values,
    dtype: DType,
    sa: &[usize],
    sb: &[usize],
    rate: f64,
) -> Result<(Tensor, Tensor)> {
    if rng.chance(0.5) {
        return Ok((v.tensor(rng, dtype, sa, rate)?, v.tensor(rng, dtype, sb, rate)?));
    }
    let pool = v.tensor(rng, dtype, &[6], rate.max(0.1))?;
    Ok((pooled(rng, &pool, sa)?, pooled(rng, &pool, sb)?))
}

/// Float `Rem`/`Mod` operands inside the test domain (`|a/b| ≤ 1000`, `a/b` at least 1e−3 from an
/// integer). Element-paired operands (equal shapes) use general values; broadcast operands use
/// dyadic values (`b = ±2^k`, `a = ±odd·2^−4`) that meet the condition against every partner.
fn remainder_pair(rng: &mut Rng, dtype: DType, sa: &[usize], sb: &[usize], rate: f64) -> Result<(Tensor, Tensor)> {
    let (mut a, mut b): (Vec<f64>, Vec<f64>);
    if sa == sb {
        (a, b) = (0..numel(sa)).map(|_| general_remainder_pair(rng, dtype)).unzip();
    } else {
        a = (0..numel(sa)).map(|_| dyadic_dividend(rng, dtype)).collect();
        b = (0..numel(sb)).map(|_| dyadic_divisor(rng)).collect();
    }
    for x in a.iter_mut() {
        if rng.chance(rate) {
            *x = round_to(dtype, rng.pick(REM_A_SPECIALS));
        }
    }
    for y in b.iter_mut() {
        if rng.chance(rate) {
            *y = round_to(dtype, rng.pick(REM_B_SPECIALS));
        }
    }
    Ok((float_tensor(dtype, sa, &a)?, float_tensor(dtype, sb, &b)?))
}

fn general_remainder_pair(rng: &mut Rng, dtype: DType) -> (f64, f64) {
    for _ in 0..16 {
        let sign_b = if rng.chance(0.5) { -1.0 } else { 1.0 };
        let b = fit_normal(dtype, sign_b * rng.uniform(0.01f64.ln(), 100f64.ln()).exp());
        let sign_q = if rng.chance(0.5) { -1.0 } else { 1.0 };
        let q = sign_q * (rng.int_in(0, 999) as f64 + rng.uniform(0.002, 0.998));
        let a = fit_normal(dtype, q * b);
        let r = a / b;
        if r.abs() <= 1000.0 && (r - r.round()).abs() >= 1e-3 {
            return (a, b);
        }
    }
    (dyadic_dividend(rng, dtype), dyadic_divisor(rng))
}

fn dyadic_divisor(rng: &mut Rng) -> f64 {
    let v = (rng.int_in(-3, 3) as f64).exp2();
    if rng.chance(0.5) {
        -v
    } else {
        v
    }
}

fn dyadic_dividend(rng: &mut Rng, dtype: DType) -> f64 {
    let bits: i64 = match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        _ => 24,
    };
    let max_odd = ((1i64 << bits) - 1).min(1999);
    let odd = 2 * rng.int_in(0, (max_odd - 1) / 2) + 1;
    let v = odd as f64 / 16.0;
    if rng.chance(0.5) {
        -v
    } else {
        v
    }
}
