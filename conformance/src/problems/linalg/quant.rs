//! Generators for `QuantMatMul` and `QuantGroupedMatMul` (§2.6.5–2.6.7): every format, the
//! scale-tensor formats with block sizes from 1 to past K (K not a multiple of the block
//! included), F32 and F16 scales, the GGML formats with one to three blocks per row, K = 0 now
//! and then; x of rank 1 to 3 for `QuantMatMul`; experts routed as for `GroupedMatMul`. Weights
//! are drawn over the whole code space (`quant/weights.rs`).
//!
//! The magnitude `M = Σ_k |x|·|W|` needs the decoded weight: the magnitude graph gets it from
//! the op itself, as `QuantMatMul(I_K, weights) = Wᵀ` (each output one product by 1 plus products
//! by 0, so exact), then a plain matmul of `|x|` and `|Wᵀ|`. A non-finite weight makes its
//! column's `M` NaN through `0·∞`; the reference output there is non-finite too, which the
//! comparison matches exactly before it looks at `M`.

use super::super::{per_dtype, skeleton, Skeleton, Variant};
use super::grouped::expert_ids;
use super::operand_values;
use crate::problem::{nth, Generated, ProblemBuilder};
use backend_api::op::{QuantFormat, UnaryOp};
use backend_api::{DType, GraphBuilder, Result, Tensor, Value};
use proptest::prelude::*;
use proptest::sample::select;

mod weights;

/// Upper bound on multiply-adds per case, counting the magnitude graph's `K·K·N` decode.
const FLOPS_CAP: usize = 1 << 22;

/// The variants of the two rows, one per dtype of `x`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let grouped = match row {
        "QuantMatMul" => false,
        "QuantGroupedMatMul" => true,
        _ => return None,
    };
    per_dtype(row, move |dt| {
        (skeleton(0..=0, 1, 5), format(), 0usize..=3, 0usize..=24, cols(), 0usize..=100, 0usize..=5)
            .prop_map(move |(sk, f, blocks, m, n, kraw, e)| {
                case(dt, &sk, f, [m, n, depth(f, blocks, kraw)], e, grouped)
            })
            .boxed()
    })
}

/// Every format; the scale-tensor formats with block sizes 1 to 128.
fn format() -> BoxedStrategy<QuantFormat> {
    let block = select(vec![1u32, 2, 3, 5, 8, 16, 32, 33, 64, 128]);
    let fixed: Vec<QuantFormat> = QuantFormat::ALL.iter().copied().filter(|f| f.ggml_block().is_some()).collect();
    prop_oneof![
        1 => block.clone().prop_map(|block_size| QuantFormat::Int8Block { block_size }),
        1 => block.clone().prop_map(|block_size| QuantFormat::Int8BlockAsym { block_size }),
        1 => block.prop_map(|block_size| QuantFormat::Int4Block { block_size }),
        3 => select(vec![QuantFormat::Fp8E4m3, QuantFormat::Fp8E5m2, QuantFormat::Nvfp4]),
        5 => select(fixed),
    ]
    .boxed()
}

/// N: mostly small, sometimes a tile edge.
fn cols() -> BoxedStrategy<usize> {
    prop_oneof![6 => 1usize..=24, 1 => select(vec![0usize, 32, 63, 64, 65])].boxed()
}

/// K for `format`: `blocks` whole blocks for the formats that need them (K = 0 when 0), any
/// `kraw` (0 to 100) for the others.
fn depth(format: QuantFormat, blocks: usize, kraw: usize) -> usize {
    match (format.ggml_block(), format) {
        (Some((qk, _)), _) => qk * blocks,
        (None, QuantFormat::Nvfp4) => 16 * blocks * 2,
        (None, _) => kraw,
    }
}

/// Halves N, then M, until the work (with the `K·K·N` decode of the magnitude graph) fits.
fn fit(m: &mut usize, n: &mut usize, k: usize, e: usize) {
    let work = |m: usize, n: usize| k.max(1) * n.max(1) * (m.max(1) + k.max(1) * e.max(1));
    while work(*m, *n) > FLOPS_CAP && (*n > 1 || *m > 1) {
        if *n > 1 {
            *n /= 2;
        } else {
            *m /= 2;
        }
    }
}

fn case(dtype: DType, sk: &Skeleton, format: QuantFormat, [m, n, k]: [usize; 3], e: usize, grouped: bool) -> Generated {
    let mut rng = sk.rng();
    let (mut m, mut n) = (m, n);
    let experts = if grouped { e } else { 1 };
    fit(&mut m, &mut n, k, experts);
    let rate = sk.rate / 5.0;
    let lead: Vec<usize> = if grouped { vec![e] } else { vec![] };
    let ws = weights::weights(&mut rng, format, &lead, [n, k], rate)?;
    // x: [M, K] for the grouped op; rank 1 to 3 for the other.
    let xshape = match (grouped, rng.below(4)) {
        (false, 0) => vec![k],
        (false, 1) => vec![2, m, k],
        _ => vec![m, k],
    };
    let rows: usize = xshape[..xshape.len() - 1].iter().product();
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), operand_values().tensor(&mut rng, dtype, &xshape, sk.rate / 10.0)?)?;
    let mut wv = Vec::with_capacity(ws.len());
    for (i, t) in ws.iter().enumerate() {
        wv.push(pb.leaf(sk.kind(1 + i), t.clone())?);
    }
    if !grouped {
        let y = pb.g().quant_matmul(x, &wv, format)?;
        return pb.finish_with_magnitude(&[y], move |g, abs| {
            let wt = decoded_abs(g, format, &ws, None, [n, k])?;
            let ax = g.reshape(nth(abs, 0)?, &[rows as i64, k as i64])?;
            let mg = g.matmul(ax, wt)?;
            let out: Vec<i64> = xshape[..xshape.len() - 1].iter().chain([&n]).map(|&d| d as i64).collect();
            Ok(vec![g.reshape(mg, &out)?])
        });
    }
    let id_dtype = [DType::I32, DType::I64, DType::U32][rng.below(3)];
    let ids = expert_ids(&mut rng, id_dtype, rows, e)?;
    let ex = pb.leaf(sk.kind(1 + ws.len()), ids.clone())?;
    let y = pb.g().quant_grouped_matmul(x, &wv, ex, format)?;
    pb.finish_with_magnitude(&[y], move |g, abs| {
        let wt = decoded_abs(g, format, &ws, Some(e), [n, k])?;
        let c = g.constant(&ids)?;
        Ok(vec![g.grouped_matmul(nth(abs, 0)?, wt, c)?])
    })
}

/// `|Wᵀ|` in F64: `[K, N]`, or `[E, K, N]` when `experts` is `Some(E)`, decoded by the op under
/// test from identity rows (one block of `K` rows per expert).
fn decoded_abs(
    g: &mut GraphBuilder,
    format: QuantFormat,
    ws: &[Tensor],
    experts: Option<usize>,
    [n, k]: [usize; 2],
) -> Result<Value> {
    let e = experts.unwrap_or(1);
    let eye: Vec<f32> = (0..e * k * k).map(|i| if i % k == (i / k) % k { 1.0 } else { 0.0 }).collect();
    let eye = g.constant(&Tensor::from_slice(&[e * k, k], &eye)?)?;
    let mut wv = Vec::with_capacity(ws.len());
    for t in ws {
        wv.push(g.constant(t)?);
    }
    let wt = match experts {
        None => g.quant_matmul(eye, &wv, format)?,
        Some(e) => {
            let ids: Vec<i32> = (0..e * k).map(|i| (i / k.max(1)) as i32).collect();
            let ids = g.constant(&Tensor::from_slice(&[e * k], &ids)?)?;
            let flat = g.quant_grouped_matmul(eye, &wv, ids, format)?;
            g.reshape(flat, &[e as i64, k as i64, n as i64])?
        }
    };
    let wt = g.cast(wt, DType::F64)?;
    g.unary(UnaryOp::Abs, wt)
}
