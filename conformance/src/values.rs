//! Test data: the value domains the generators draw elements from, and tensor constructors.
//!
//! Proptest draws shapes and attributes (which shrink meaningfully); tensor contents are drawn
//! from a per-case `u64` seed with [`Rng`]. Shrinking 70,000 floats one by one would take far
//! longer than it helps, and a seed keeps the persisted failure small.

pub use crate::rng::Rng;
use backend_api::{Complex32, DType, Result, Tensor};
use half::{bf16, f16};

/// One way to draw a finite float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Piece {
    /// Uniform in `[lo, hi]`.
    Uniform(f64, f64),
    /// Magnitude log-uniform in `[lo, hi]` (both > 0); a random sign when `signed`.
    LogMag {
        /// Smallest magnitude.
        lo: f64,
        /// Largest magnitude.
        hi: f64,
        /// Whether negative values are drawn too.
        signed: bool,
    },
    /// Multiples of 0.5 in `[-b, b]` (ties for rounding ops).
    Halves(f64),
    /// Integers in `[-n, n]`.
    Ints(i64),
    /// One of the listed values.
    OneOf(&'static [f64]),
    /// `k·2^e` with `|k| < 2^bits` and `e ∈ [lo, hi]`: values whose products are exact.
    Dyadic {
        /// Significant bits of `k`.
        bits: u32,
        /// Smallest exponent.
        lo: i64,
        /// Largest exponent.
        hi: i64,
    },
}

impl Default for Piece {
    fn default() -> Piece {
        Piece::Uniform(0.0, 0.0)
    }
}

impl Piece {
    fn draw(self, rng: &mut Rng) -> f64 {
        match self {
            Piece::Uniform(lo, hi) => rng.uniform(lo, hi),
            Piece::LogMag { lo, hi, signed } => {
                let m = (rng.uniform(lo.ln(), hi.ln())).exp();
                if signed && rng.chance(0.5) {
                    -m
                } else {
                    m
                }
            }
            Piece::Halves(b) => {
                let k = (2.0 * b) as i64;
                rng.int_in(-k, k) as f64 * 0.5
            }
            Piece::Ints(n) => rng.int_in(-n, n) as f64,
            Piece::OneOf(xs) => rng.pick(xs),
            Piece::Dyadic { bits, lo, hi } => {
                let m = (1i64 << bits.min(52)) - 1;
                rng.int_in(-m, m) as f64 * (rng.int_in(lo, hi) as f64).exp2()
            }
        }
    }
}

/// A float test domain: the pieces a regular element is drawn from (one chosen at random per
/// element), and the special values mixed in at the case's special rate.
#[derive(Clone, Debug)]
pub struct FloatDomain {
    /// Regular values; each is fitted into the dtype's normal range.
    pub pieces: Vec<Piece>,
    /// Special values (±0, ±∞, NaN, extremes, subnormals …), only rounded to the dtype.
    pub specials: Vec<f64>,
    /// A condition regular values must meet after rounding (e.g. `|cos x| ≥ 0.1` for `Tan`);
    /// values are redrawn a few times, then replaced by 0.
    pub accept: Option<fn(f64) -> bool>,
}

impl FloatDomain {
    /// A domain of the given pieces and specials.
    pub fn new(pieces: &[Piece], specials: &[f64]) -> FloatDomain {
        FloatDomain { pieces: pieces.to_vec(), specials: specials.to_vec(), accept: None }
    }

    /// Restricts regular values to those meeting `accept`.
    pub fn accepting(mut self, accept: fn(f64) -> bool) -> FloatDomain {
        self.accept = Some(accept);
        self
    }

    /// Adds special values.
    pub fn with(mut self, more: &[f64]) -> FloatDomain {
        self.specials.extend_from_slice(more);
        self
    }

    /// One value, exactly representable in `dtype`.
    pub fn draw(&self, rng: &mut Rng, dtype: DType, special_rate: f64) -> f64 {
        if !self.specials.is_empty() && rng.chance(special_rate) {
            return round_to(dtype, rng.pick(&self.specials));
        }
        for _ in 0..32 {
            let v = fit_normal(dtype, rng.pick(&self.pieces).draw(rng));
            if self.accept.is_none_or(|ok| ok(v)) {
                return v;
            }
        }
        0.0
    }

    /// `n` values.
    pub fn draw_n(&self, rng: &mut Rng, dtype: DType, n: usize, rate: f64) -> Vec<f64> {
        (0..n).map(|_| self.draw(rng, dtype, rate)).collect()
    }
}

/// ±0, ±∞ and NaN: the specials every float op defines.
pub const IEEE_SPECIALS: &[f64] = &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];

/// Largest finite value of a float dtype (C64 components: F32).
pub fn max_finite(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f16::MAX.to_f64(),
        DType::BF16 => bf16::MAX.to_f64(),
        DType::F64 => f64::MAX,
        _ => f32::MAX as f64,
    }
}

/// Smallest positive normal value of a float dtype (C64 components: F32).
pub fn min_normal(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f16::MIN_POSITIVE.to_f64(),
        DType::BF16 => bf16::MIN_POSITIVE.to_f64(),
        DType::F64 => f64::MIN_POSITIVE,
        _ => f32::MIN_POSITIVE as f64,
    }
}

/// The dtype's largest magnitudes and smallest normals, both signs.
pub fn extremes(dtype: DType) -> Vec<f64> {
    let (m, n) = (max_finite(dtype), min_normal(dtype));
    vec![m, -m, n, -n]
}

/// Subnormal values of the dtype (only for ops where flushing them cannot change the verdict).
pub fn subnormals(dtype: DType) -> Vec<f64> {
    let n = min_normal(dtype);
    vec![n / 2.0, -n / 4.0, n / 1024.0]
}

/// `v` rounded to the nearest value of `dtype` (ties to even; overflow gives ±∞).
pub fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F16 => f16::from_f64(v).to_f64(),
        DType::BF16 => bf16::from_f64(v).to_f64(),
        DType::F64 => v,
        _ => v as f32 as f64,
    }
}

/// `v` clamped to the finite range, rounded, and pushed out of the subnormal range (a backend
/// may flush subnormal inputs, §1.7, which would change results outside the equivalences).
pub fn fit_normal(dtype: DType, v: f64) -> f64 {
    let m = max_finite(dtype);
    let r = round_to(dtype, v.clamp(-m, m));
    let n = min_normal(dtype);
    if r != 0.0 && r.abs() < n {
        n.copysign(r)
    } else {
        r
    }
}

/// Whether `v` (already a value of `dtype`) is nonzero and below the smallest normal.
pub fn is_subnormal(dtype: DType, v: f64) -> bool {
    v != 0.0 && v.abs() < min_normal(dtype)
}

/// Integers of `dtype` stored as i128: the minimum, maximum and a few neighbours of 0.
pub fn int_extremes(dtype: DType) -> Vec<i128> {
    let (lo, hi) = int_range(dtype);
    let mut v = vec![lo, hi, 0, 1, lo + 1, hi - 1];
    if lo < 0 {
        v.push(-1);
    }
    v
}

/// `[MIN, MAX]` of an integer dtype as i128 (Bool: `[0, 1]`).
pub fn int_range(dtype: DType) -> (i128, i128) {
    match dtype {
        DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::I8 => (i8::MIN as i128, i8::MAX as i128),
        DType::U32 => (0, u32::MAX as i128),
        DType::U8 => (0, u8::MAX as i128),
        _ => (0, 1),
    }
}

/// An integer test domain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum IntDomain {
    /// Random bits, small values and the extremes.
    Any,
    /// Values in `[lo, hi]` (clamped to the dtype), plus the extremes at the special rate.
    Range(i64, i64),
    /// Values in `[lo, hi]` only.
    Only(i64, i64),
}

impl IntDomain {
    /// One value of `dtype` as i128.
    pub fn draw(self, rng: &mut Rng, dtype: DType, special_rate: f64) -> i128 {
        let (lo, hi) = int_range(dtype);
        let clamp = |a: i64, b: i64| (rng_bounds(a, lo, hi), rng_bounds(b, lo, hi));
        match self {
            IntDomain::Any => match rng.below(3) {
                0 => wrap_int(dtype, rng.next_u64() as i64 as i128),
                1 => {
                    let (a, b) = clamp(-10, 10);
                    rng.int_in(a, b) as i128
                }
                _ => rng.pick(&int_extremes(dtype)),
            },
            IntDomain::Range(a, b) => {
                if rng.chance(special_rate) {
                    rng.pick(&int_extremes(dtype))
                } else {
                    let (a, b) = clamp(a, b);
                    rng.int_in(a, b) as i128
                }
            }
            IntDomain::Only(a, b) => {
                let (a, b) = clamp(a, b);
                rng.int_in(a, b) as i128
            }
        }
    }

    /// `n` values.
    pub fn draw_n(self, rng: &mut Rng, dtype: DType, n: usize, rate: f64) -> Vec<i128> {
        (0..n).map(|_| self.draw(rng, dtype, rate)).collect()
    }
}

fn rng_bounds(v: i64, lo: i128, hi: i128) -> i64 {
    (v as i128).clamp(lo, hi) as i64
}

/// Wraps an i128 into the dtype's range (two's complement, as an int → int cast does).
pub fn wrap_int(dtype: DType, v: i128) -> i128 {
    match dtype {
        DType::I64 => v as i64 as i128,
        DType::I32 => v as i32 as i128,
        DType::I8 => v as i8 as i128,
        DType::U32 => v as u32 as i128,
        DType::U8 => v as u8 as i128,
        _ => (v != 0) as i128,
    }
}

/// A float tensor from f64 values (each rounded to `dtype`).
pub fn float_tensor(dtype: DType, shape: &[usize], v: &[f64]) -> Result<Tensor> {
    match dtype {
        DType::F32 => Tensor::from_slice(shape, &v.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        DType::F16 => Tensor::from_slice(shape, &v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>()),
        DType::BF16 => Tensor::from_slice(shape, &v.iter().map(|&x| bf16::from_f64(x)).collect::<Vec<_>>()),
        DType::F64 => Tensor::from_slice(shape, v),
        _ => backend_api::bail!(DType, "float_tensor called for {dtype}"),
    }
}

/// An integer or Bool tensor from i128 values (wrapped into the dtype).
pub fn int_tensor(dtype: DType, shape: &[usize], v: &[i128]) -> Result<Tensor> {
    let mut data = Vec::with_capacity(v.len() * dtype.size());
    for &x in v {
        let x = wrap_int(dtype, x);
        match dtype {
            DType::I64 => data.extend_from_slice(&(x as i64).to_le_bytes()),
            DType::I32 => data.extend_from_slice(&(x as i32).to_le_bytes()),
            DType::I8 => data.extend_from_slice(&(x as i8).to_le_bytes()),
            DType::U32 => data.extend_from_slice(&(x as u32).to_le_bytes()),
            DType::U8 | DType::Bool => data.push(x as u8),
            _ => backend_api::bail!(DType, "int_tensor called for {dtype}"),
        }
    }
    Tensor::from_bytes(dtype, shape, data)
}

/// A C64 tensor from (re, im) pairs.
pub fn c64_tensor(shape: &[usize], v: &[(f64, f64)]) -> Result<Tensor> {
    let c: Vec<Complex32> = v.iter().map(|&(re, im)| Complex32 { re: re as f32, im: im as f32 }).collect();
    Tensor::from_slice(shape, &c)
}

/// The "any value" float domain: moderate and huge magnitudes, IEEE specials and the extremes.
pub fn any_float(dtype: DType) -> FloatDomain {
    FloatDomain::new(
        &[Piece::Uniform(-100.0, 100.0), Piece::LogMag { lo: 1e-20, hi: 1e20, signed: true }, Piece::Ints(5)],
        IEEE_SPECIALS,
    )
    .with(&extremes(component(dtype)))
}

/// The dtype of a component: F32 for C64, else the dtype itself.
pub fn component(dtype: DType) -> DType {
    if dtype == DType::C64 {
        DType::F32
    } else {
        dtype
    }
}

/// The test domain of one operand, for whichever dtype the case uses: floats and C64 components
/// from `float`, integers from `int`, Bool with a per-tensor random rate of `true`.
#[derive(Clone, Debug)]
pub struct Values {
    /// Domain of float elements and of C64 components.
    pub float: FloatDomain,
    /// Domain of integer elements.
    pub int: IntDomain,
}

impl Values {
    /// Any value of the dtype; `subnormal` adds subnormal floats to the specials (only for ops
    /// that move, select or compare-and-pick values, where flushing cannot change the verdict).
    pub fn any(dtype: DType, subnormal: bool) -> Values {
        let mut float = any_float(dtype);
        if subnormal {
            float = float.with(&subnormals(component(dtype)));
        }
        Values { float, int: IntDomain::Any }
    }

    /// Floats from `float`, integers from anywhere.
    pub fn floats(float: FloatDomain) -> Values {
        Values { float, int: IntDomain::Any }
    }

    /// A tensor of `dtype` and `shape` drawn from this domain.
    pub fn tensor(&self, rng: &mut Rng, dtype: DType, shape: &[usize], rate: f64) -> Result<Tensor> {
        let n = backend_api::shape::numel(shape);
        match dtype {
            DType::F32 | DType::F16 | DType::BF16 | DType::F64 => {
                float_tensor(dtype, shape, &self.float.draw_n(rng, dtype, n, rate))
            }
            DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 => {
                int_tensor(dtype, shape, &self.int.draw_n(rng, dtype, n, rate))
            }
            DType::Bool => {
                // Nearly-all-false and nearly-all-true tensors make any/all reductions meaningful.
                let p = match rng.below(4) {
                    0 => 0.02,
                    1 => 0.98,
                    _ => rng.unit(),
                };
                bool_tensor(rng, shape, p)
            }
            DType::C64 => {
                let v: Vec<(f64, f64)> = (0..n)
                    .map(|_| (self.float.draw(rng, DType::F32, rate), self.float.draw(rng, DType::F32, rate)))
                    .collect();
                c64_tensor(shape, &v)
            }
        }
    }
}

/// A tensor of any dtype with values from its "any" domain (see [`Values::any`]).
pub fn any_tensor(rng: &mut Rng, dtype: DType, shape: &[usize], rate: f64, subnormal: bool) -> Result<Tensor> {
    Values::any(dtype, subnormal).tensor(rng, dtype, shape, rate)
}

/// A tensor of `shape` whose elements are copies of random elements of `pool` (which must be
/// non-empty): operands drawn from one small pool are often equal, which comparisons and
/// min/max need to be tested at all.
pub fn pooled(rng: &mut Rng, pool: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let size = pool.dtype().size();
    let k = pool.numel();
    let n = backend_api::shape::numel(shape);
    let mut data = Vec::with_capacity(n * size);
    for _ in 0..n {
        let i = rng.below(k);
        match pool.bytes().get(i * size..(i + 1) * size) {
            Some(b) => data.extend_from_slice(b),
            None => backend_api::bail!(Shape, "empty pool for a tensor of {n} elements"),
        }
    }
    Tensor::from_bytes(pool.dtype(), shape, data)
}

/// A Bool tensor with each element true with probability `p_true`.
pub fn bool_tensor(rng: &mut Rng, shape: &[usize], p_true: f64) -> Result<Tensor> {
    let n = backend_api::shape::numel(shape);
    let v: Vec<i128> = (0..n).map(|_| rng.chance(p_true) as i128).collect();
    int_tensor(DType::Bool, shape, &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_values_are_normal_and_finite() {
        let mut rng = Rng::new(1);
        let dom = FloatDomain::new(&[Piece::LogMag { lo: 1e-30, hi: 1e30, signed: true }], &[]);
        for dt in [DType::F16, DType::BF16, DType::F32] {
            for _ in 0..1000 {
                let v = dom.draw(&mut rng, dt, 0.0);
                assert!(v.is_finite() && !is_subnormal(dt, v) && round_to(dt, v) == v, "{dt} {v}");
            }
        }
    }

    #[test]
    fn wrap_matches_casts() {
        assert_eq!(wrap_int(DType::I8, 200), -56);
        assert_eq!(wrap_int(DType::U8, -1), 255);
        assert_eq!(wrap_int(DType::U32, -1), u32::MAX as i128);
    }
}
