//! Generators for the indexing ops (§2.4): `Gather` (every dtype), `ScatterAdd` (numeric and
//! C64), `GatherBackward` (floats). Data of rank 1–4, any axis (canonical or negative form),
//! indices of rank 0–2 (empty ones included) in a dtype drawn among I32, I64 and U32, with values
//! mixing in-range rows, negative forms, out-of-range values just past either end, the dtype's
//! extremes and values beyond 2^24 and 2^32. Scatter cases often draw their rows from a small
//! pool so that many updates collide on one row. The (M) rows carry the magnitude
//! `ScatterAdd(|data|, indices, |updates|)` (`GatherBackward(|dy|, …)`), the indices entering
//! the magnitude graph unchanged as a constant.

use super::{per_dtype, skeleton, Skeleton, Variant};
use crate::problem::{nth, Generated, ProblemBuilder};
use crate::shapes::{axis_form, numel, MAX_NUMEL};
use crate::values::{any_tensor, float_tensor, FloatDomain, Piece, Rng, Values, IEEE_SPECIALS};
use backend_api::{DType, Shape, Tensor};
use proptest::prelude::*;

type CaseFn = fn(DType, &Skeleton) -> Generated;

/// Index dims drawn for the indices tensor.
const INDEX_DIMS: &[usize] = &[0, 1, 2, 3, 5, 7, 63, 64, 65, 257];

/// Variants for the indexing rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    let case: CaseFn = match row {
        "Gather" => gather_case,
        "ScatterAdd" => scatter_add_case,
        "GatherBackward" => gather_backward_case,
        _ => return None,
    };
    per_dtype(row, move |dtype| skeleton(1..=4, MAX_NUMEL / 8, 3).prop_map(move |sk| case(dtype, &sk)).boxed())
}

/// The indexed geometry of one case: data shape, canonical axis, its builder form, index shape.
struct Geometry {
    data: Vec<usize>,
    axis: usize,
    axis_arg: i64,
    idx: Vec<usize>,
}

impl Geometry {
    /// Draws an axis of the skeleton's shape and an index shape of rank 0–2 whose gathered
    /// tensor stays under the element cap.
    fn draw(rng: &mut Rng, sk: &Skeleton) -> Geometry {
        let data = sk.shape.clone();
        let axis = rng.below(data.len());
        let axis_arg = axis_form(rng, axis, data.len());
        let rest: usize = data.iter().enumerate().filter(|(k, _)| *k != axis).map(|(_, d)| (*d).max(1)).product();
        let mut idx: Vec<usize> = (0..rng.below(3)).map(|_| rng.pick(INDEX_DIMS)).collect();
        while rest * numel(&idx) > MAX_NUMEL / 4 {
            if let Some(d) = idx.iter_mut().max() {
                *d /= 2;
            }
        }
        Geometry { data, axis, axis_arg, idx }
    }

    fn gathered(&self) -> Vec<usize> {
        let mut s = self.data[..self.axis].to_vec();
        s.extend(&self.idx);
        s.extend(&self.data[self.axis + 1..]);
        s
    }
}

/// Index values for an axis of size `a` in dtype `d`: in-range rows (positive or negative form),
/// values just out of range, extremes and values past 2^24 and 2^32. With `collide`, most
/// in-range rows come from a pool of 1–3 rows.
fn index_tensor(rng: &mut Rng, d: DType, shape: &[usize], a: usize, collide: bool) -> backend_api::Result<Tensor> {
    let a = a as i64;
    let pool: Vec<i64> = (0..3).map(|_| rng.int_in(0, (a - 1).max(0))).collect();
    let pool_len = 1 + rng.below(3);
    let signed = d != DType::U32;
    let mut extremes = vec![a, a + 3, 1 << 24, (1 << 24) + 1];
    match d {
        DType::I32 => extremes.extend([i32::MIN as i64, i32::MAX as i64, -a - 1, -a - 2]),
        DType::I64 => extremes.extend([i64::MIN, i64::MAX, 1 << 32, (1 << 32) + 1, -(1 << 32), -a - 1]),
        _ => extremes.extend([u32::MAX as i64, 1 << 31, (1 << 31) - 1]),
    }
    let miss_rate = rng.pick(&[0.0, 0.05, 0.3]);
    let mut bytes = Vec::with_capacity(numel(shape) * d.size());
    for _ in 0..numel(shape) {
        let v = if a == 0 || rng.chance(miss_rate) {
            rng.pick(&extremes)
        } else {
            let r = if collide && rng.chance(0.8) { pool[rng.below(pool_len)] } else { rng.int_in(0, a - 1) };
            // The negative form of row r is r − a.
            if signed && rng.chance(0.4) {
                r - a
            } else {
                r
            }
        };
        match d {
            DType::I64 => bytes.extend_from_slice(&v.to_le_bytes()),
            DType::I32 => bytes.extend_from_slice(&(v as i32).to_le_bytes()),
            _ => bytes.extend_from_slice(&(v as u32).to_le_bytes()),
        }
    }
    Tensor::from_bytes(d, shape, bytes)
}

fn index_dtype(rng: &mut Rng) -> DType {
    [DType::I32, DType::I64, DType::U32][rng.below(3)]
}

/// Summands: moderate magnitudes and the IEEE specials, but no huge finite values (an f32
/// accumulation order could overflow where the exact sum does not).
fn summands() -> Values {
    Values::floats(FloatDomain::new(
        &[Piece::Uniform(-10.0, 10.0), Piece::LogMag { lo: 1e-3, hi: 1e3, signed: true }, Piece::Ints(4)],
        IEEE_SPECIALS,
    ))
}

fn gather_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let g = Geometry::draw(&mut rng, sk);
    let data = any_tensor(&mut rng, dtype, &g.data, sk.rate, true)?;
    let id = index_dtype(&mut rng);
    let collide = rng.chance(0.3);
    let idx = index_tensor(&mut rng, id, &g.idx, g.data[g.axis], collide)?;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), data)?;
    let i = pb.leaf(sk.kind(1), idx)?;
    let y = pb.g().gather(x, i, g.axis_arg)?;
    pb.finish(&[y])
}

fn scatter_add_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let g = Geometry::draw(&mut rng, sk);
    let v = summands();
    let data = v.tensor(&mut rng, dtype, &g.data, sk.rate)?;
    let id = index_dtype(&mut rng);
    let collide = rng.chance(0.6);
    let idx = index_tensor(&mut rng, id, &g.idx, g.data[g.axis], collide)?;
    let upd = v.tensor(&mut rng, dtype, &g.gathered(), sk.rate)?;
    // Cast(C64 → F64) keeps only the real part: C64 magnitudes enter as constants instead.
    let c64 = if dtype == DType::C64 { Some((c64_magnitude(&data)?, c64_magnitude(&upd)?)) } else { None };
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), data)?;
    let i = pb.leaf(sk.kind(1), idx.clone())?;
    let u = pb.leaf(sk.kind(2), upd)?;
    let axis = g.axis_arg;
    let y = pb.g().scatter_add(x, i, u, axis)?;
    pb.finish_with_magnitude(&[y], move |gb, abs| {
        // Leaves arrive as |Cast(leaf, F64)|: the indices must enter unchanged.
        let i = gb.constant(&idx)?;
        let (x, u) = match &c64 {
            Some((x, u)) => (gb.constant(x)?, gb.constant(u)?),
            None => (nth(abs, 0)?, nth(abs, 2)?),
        };
        Ok(vec![gb.scatter_add(x, i, u, axis)?])
    })
}

/// `|re| + |im|` of every element of a C64 tensor, as F64: a bound on both components' terms.
fn c64_magnitude(t: &Tensor) -> backend_api::Result<Tensor> {
    let v: Vec<f64> = t
        .bytes()
        .chunks_exact(8)
        .map(|c| {
            let re = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let im = f32::from_le_bytes([c[4], c[5], c[6], c[7]]);
            f64::from(re.abs()) + f64::from(im.abs())
        })
        .collect();
    float_tensor(DType::F64, t.shape(), &v)
}

fn gather_backward_case(dtype: DType, sk: &Skeleton) -> Generated {
    let mut rng = sk.rng();
    let g = Geometry::draw(&mut rng, sk);
    let id = index_dtype(&mut rng);
    let collide = rng.chance(0.6);
    let idx = index_tensor(&mut rng, id, &g.idx, g.data[g.axis], collide)?;
    let dy = summands().tensor(&mut rng, dtype, &g.gathered(), sk.rate)?;
    let mut pb = ProblemBuilder::new();
    let d = pb.leaf(sk.kind(0), dy)?;
    let i = pb.leaf(sk.kind(1), idx.clone())?;
    let (axis, shape) = (g.axis_arg, Shape::of(&g.data));
    let y = pb.g().gather_backward(d, i, axis, shape.clone())?;
    pb.finish_with_magnitude(&[y], move |gb, abs| {
        let i = gb.constant(&idx)?;
        Ok(vec![gb.gather_backward(nth(abs, 0)?, i, axis, shape)?])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_values_cover_every_kind() {
        let mut rng = Rng::new(7);
        let mut v: Vec<i64> = Vec::new();
        for _ in 0..20 {
            let t = index_tensor(&mut rng, DType::I64, &[200], 5, true).unwrap();
            v.extend(t.bytes().chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())));
        }
        assert!(v.iter().any(|&x| (0..5).contains(&x)));
        assert!(v.iter().any(|&x| (-5..0).contains(&x)));
        assert!(v.iter().any(|&x| x >= 5));
        assert!(v.iter().any(|&x| x > 1 << 32));
    }
}
