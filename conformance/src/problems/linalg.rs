//! Generators for `MatMul`, `DotGeneral` and `FusedMatMulBiasAct` (§2.6.1–2.6.3): M, N, K mostly
//! ≤ 70 with occasional 0/64/65/127/129 edges, broadcast batch dims (rank mismatch included),
//! DotGeneral with 0–2 batch, contracting and free axes per side at any positions. The magnitude
//! `M` of each output element is the same contraction over absolute values (plus `|bias|`).
//! `GroupedMatMul` (§2.6.4) is in `linalg/grouped.rs`, `QuantMatMul` and `QuantGroupedMatMul`
//! (§2.6.5–2.6.6) in `linalg/quant.rs`.

use super::elementwise::operand_shapes;
use super::{per_dtype, skeleton, Skeleton, Variant};
use crate::problem::{nth, Generated, ProblemBuilder};
use crate::shapes::{axis_form, broadcast_partner, smaller_dim, support, MAX_NUMEL};
use crate::values::{FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::DType;
use proptest::prelude::*;
use proptest::sample::select;

/// Upper bound on multiply-adds per case.
const FLOPS_CAP: usize = 1 << 21;

mod grouped;
mod quant;

/// Activations exercised by `FusedMatMulBiasAct`: those with a derivative bounded by about 1, so
/// that the magnitude-scaled tolerance of the pre-activation sum also bounds the output. (Exp,
/// Log, Tan, Rsqrt, … would amplify an allowed pre-activation error without bound; rounding ops
/// and Sign are discontinuous. Their own rows test them.)
pub const SMOOTH_ACTIVATIONS: &[UnaryOp] = &[
    UnaryOp::Relu,
    UnaryOp::Sigmoid,
    UnaryOp::Tanh,
    UnaryOp::Gelu,
    UnaryOp::GeluApprox,
    UnaryOp::Silu,
    UnaryOp::Softplus,
    UnaryOp::Atan,
    UnaryOp::Erf,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Neg,
    UnaryOp::Abs,
];

/// Variants for the linear-algebra rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    match row {
        "MatMul" => per_dtype(row, |dt| matmul_strategy(dt, false)),
        "FusedMatMulBiasAct" => per_dtype(row, |dt| matmul_strategy(dt, true)),
        "DotGeneral" => {
            per_dtype(row, |dt| skeleton(0..=0, 1, 2).prop_map(move |sk| dot_general_case(dt, &sk)).boxed())
        }
        "GroupedMatMul" => grouped::variants(row),
        "QuantMatMul" | "QuantGroupedMatMul" => quant::variants(row),
        _ => None,
    }
}

/// M, N or K: mostly 1..=70, sometimes an edge, sometimes a multiple of 8 (the vector-load
/// kernels: the wide skinny kernel and the vector-load cooperative-matrix kernel), sometimes a
/// multiple of 4 that is not one of 8 or 16, straddling the 64 and 128 tile edges (with K and N
/// multiples of 4, F32 products of more than 8 rows run the vector-load tiled kernel).
fn mnk() -> BoxedStrategy<usize> {
    prop_oneof![
        8 => 1usize..=70,
        1 => select(vec![0usize, 64, 65, 127, 129]),
        1 => select(vec![8usize, 16, 24, 40, 136]),
        1 => select(vec![12usize, 20, 36, 68, 132]),
    ]
    .boxed()
}

fn matmul_strategy(dtype: DType, fused: bool) -> BoxedStrategy<Generated> {
    (skeleton(0..=3, 64, 3), mnk(), mnk(), mnk())
        .prop_map(move |(sk, m, n, k)| matmul_case(dtype, &sk, [m, n, k], fused))
        .boxed()
}

/// Operand values: mostly in [−1, 1], some up to 10; IEEE specials at a tenth of the case rate.
fn operand_values() -> Values {
    Values::floats(FloatDomain::new(
        &[Piece::Uniform(-1.0, 1.0), Piece::Uniform(-1.0, 1.0), Piece::LogMag { lo: 1e-2, hi: 10.0, signed: true }],
        IEEE_SPECIALS,
    ))
}

/// Shrinks batch dims, then M/N/K, until every tensor and the work fit the caps.
fn fit_matmul(batch: &mut [usize], mnk: &mut [usize; 3]) {
    loop {
        let b = support(batch);
        let [m, n, k] = mnk.map(|d| d.max(1));
        let sizes = [b.saturating_mul(m * k), b.saturating_mul(k * n), b.saturating_mul(m * n)];
        if sizes.iter().all(|&s| s <= MAX_NUMEL) && b.saturating_mul(m * n * k) <= FLOPS_CAP {
            return;
        }
        if let Some(d) = batch.iter_mut().filter(|d| **d > 1).max_by_key(|d| **d) {
            *d = smaller_dim(*d);
        } else if let Some(d) = mnk.iter_mut().max_by_key(|d| **d) {
            *d = (*d / 2).max(1);
        }
    }
}

/// numpy broadcast of two shapes that are known to broadcast (partners of one shape).
fn broadcast_dims(a: &[usize], b: &[usize]) -> Vec<usize> {
    let r = a.len().max(b.len());
    let get = |s: &[usize], i: usize| if i + s.len() >= r { s[i + s.len() - r] } else { 1 };
    (0..r).map(|i| if get(a, i) == 1 { get(b, i) } else { get(a, i) }).collect()
}

fn matmul_case(dtype: DType, sk: &Skeleton, mnk: [usize; 3], fused: bool) -> Generated {
    let mut rng = sk.rng();
    let mut batch = sk.shape.clone();
    let mut d = mnk;
    fit_matmul(&mut batch, &mut d);
    let [m, n, k] = d;
    let [a_batch, b_batch] = operand_shapes(&mut rng, &batch);
    let a_shape: Vec<usize> = a_batch.iter().copied().chain([m, k]).collect();
    let b_shape: Vec<usize> = b_batch.iter().copied().chain([k, n]).collect();
    let vals = operand_values();
    let rate = sk.rate / 10.0;
    let mut pb = ProblemBuilder::new();
    let a = pb.leaf(sk.kind(0), vals.tensor(&mut rng, dtype, &a_shape, rate)?)?;
    let b = pb.leaf(sk.kind(1), vals.tensor(&mut rng, dtype, &b_shape, rate)?)?;
    if !fused {
        let y = pb.g().matmul(a, b)?;
        return pb.finish_with_magnitude(&[y], |g, abs| Ok(vec![g.matmul(nth(abs, 0)?, nth(abs, 1)?)?]));
    }
    let out: Vec<usize> = broadcast_dims(&a_batch, &b_batch).into_iter().chain([m, n]).collect();
    let bias_shape = match rng.below(4) {
        0 => vec![n],
        1 => broadcast_partner(&mut rng, &out),
        2 => Vec::new(),
        _ => out.clone(),
    };
    let act = if rng.chance(0.4) { None } else { SMOOTH_ACTIVATIONS.get(rng.below(SMOOTH_ACTIVATIONS.len())).copied() };
    let bias = pb.leaf(sk.kind(2), vals.tensor(&mut rng, dtype, &bias_shape, rate)?)?;
    let y = pb.g().fused_matmul_bias_act(a, b, bias, act)?;
    pb.finish_with_magnitude(&[y], |g, abs| {
        let mm = g.matmul(nth(abs, 0)?, nth(abs, 1)?)?;
        Ok(vec![g.binary(BinaryOp::Add, mm, nth(abs, 2)?)?])
    })
}

/// Dims of one DotGeneral case by role.
struct DotDims {
    batch: Vec<usize>,
    contract: Vec<usize>,
    free_l: Vec<usize>,
    free_r: Vec<usize>,
}

impl DotDims {
    fn draw(rng: &mut Rng) -> DotDims {
        let nb = rng.below(3);
        let nc = rng.below(3);
        let fl = rng.below(3).min(5 - nb - nc);
        let fr = rng.below(3).min(5 - nb - nc);
        let mut pick = |n: usize, from: &[usize]| (0..n).map(|_| rng.pick(from)).collect::<Vec<_>>();
        let mut d = DotDims {
            batch: pick(nb, &[1, 2, 3, 5, 2, 0]),
            // Multiples of 8: with the contracting axes last on the rhs and few lhs rows, the
            // K-contiguous GEMV kernel (`x · Wᵀ`, 16-byte loads along K).
            contract: pick(nc, &[0, 1, 2, 3, 5, 8, 16, 17, 24, 33, 40, 64, 65]),
            free_l: pick(fl, &[1, 2, 3, 5, 17, 33, 64, 65]),
            free_r: pick(fr, &[1, 2, 3, 5, 8, 17, 33, 64, 65]),
        };
        d.fit();
        d
    }

    fn fit(&mut self) {
        loop {
            let (b, c, l, r) =
                (support(&self.batch), support(&self.contract), support(&self.free_l), support(&self.free_r));
            let m = |x: usize, y: usize, z: usize| x.saturating_mul(y).saturating_mul(z);
            let sizes = [m(b, c, l), m(b, c, r), m(b, l, r)];
            if sizes.iter().all(|&s| s <= MAX_NUMEL) && m(b, c, l).saturating_mul(r) <= FLOPS_CAP {
                return;
            }
            let all = self.batch.iter_mut().chain(&mut self.contract).chain(&mut self.free_l).chain(&mut self.free_r);
            match all.max_by_key(|d| **d) {
                Some(d) if *d > 1 => *d = smaller_dim(*d),
                _ => return,
            }
        }
    }
}

/// Places the roles `[batch…, contract…, free…]` at random axes; returns the shape and the axis
/// of each role.
fn place(rng: &mut Rng, roles: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let pos = rng.permutation(roles.len());
    let mut shape = vec![0; roles.len()];
    for (role, &p) in pos.iter().enumerate() {
        shape[p] = roles[role];
    }
    (shape, pos)
}

fn dot_general_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let d = DotDims::draw(&mut rng);
    let (nb, nc) = (d.batch.len(), d.contract.len());
    let lroles: Vec<usize> = d.batch.iter().chain(&d.contract).chain(&d.free_l).copied().collect();
    let rroles: Vec<usize> = d.batch.iter().chain(&d.contract).chain(&d.free_r).copied().collect();
    let (lshape, lpos) = place(&mut rng, &lroles);
    let (rshape, rpos) = place(&mut rng, &rroles);
    let (bo, co) = (rng.permutation(nb), rng.permutation(nc));
    let (lr, rr) = (lshape.len(), rshape.len());
    let mut axes = |idx: &[usize], pos: &[usize], off: usize, rank: usize| -> Vec<i64> {
        idx.iter().map(|&i| axis_form(&mut rng, pos[off + i], rank)).collect()
    };
    let (lb, rb) = (axes(&bo, &lpos, 0, lr), axes(&bo, &rpos, 0, rr));
    let (lc, rc) = (axes(&co, &lpos, nb, lr), axes(&co, &rpos, nb, rr));
    let vals = operand_values();
    let rate = sk.rate / 10.0;
    let mut pb = ProblemBuilder::new();
    let l = pb.leaf(sk.kind(0), vals.tensor(&mut rng, dtype, &lshape, rate)?)?;
    let r = pb.leaf(sk.kind(1), vals.tensor(&mut rng, dtype, &rshape, rate)?)?;
    let y = pb.g().dot_general(l, r, (&lb, &rb), (&lc, &rc))?;
    pb.finish_with_magnitude(&[y], |g, abs| {
        Ok(vec![g.dot_general(nth(abs, 0)?, nth(abs, 1)?, (&lb, &rb), (&lc, &rc))?])
    })
}
