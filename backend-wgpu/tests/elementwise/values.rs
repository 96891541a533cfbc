//! Test values: a seeded RNG, float domains with special values first, tensors of every dtype.

use backend_api::{DType, Tensor};
use half::{bf16, f16};

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// How regular float values are drawn.
#[derive(Clone, Copy)]
pub enum Piece {
    Uni(f64, f64),
    /// Log-uniform magnitude in [lo, hi], random sign when signed.
    Log(f64, f64, bool),
    /// Multiples of 0.5 in [-b, b].
    Halves(f64),
    /// Integers in [-n, n].
    Ints(i64),
}

impl Piece {
    pub fn draw(self, r: &mut Rng) -> f64 {
        match self {
            Piece::Uni(lo, hi) => r.uniform(lo, hi),
            Piece::Log(lo, hi, signed) => {
                let m = r.uniform(lo.ln(), hi.ln()).exp();
                if signed && r.unit() < 0.5 {
                    -m
                } else {
                    m
                }
            }
            Piece::Halves(b) => (r.uniform(-2.0 * b, 2.0 * b)).round() * 0.5,
            Piece::Ints(n) => (r.uniform(-(n as f64), n as f64)).round(),
        }
    }
}

pub const NAN: f64 = f64::NAN;
pub const INF: f64 = f64::INFINITY;
pub const IEEE: &[f64] = &[0.0, -0.0, INF, -INF, NAN];

/// A float domain: special values (placed first, each at least once) and regular pieces.
#[derive(Clone)]
pub struct Dom {
    pub specials: Vec<f64>,
    pub pieces: Vec<Piece>,
    pub accept: Option<fn(f64) -> bool>,
}

pub fn dom(pieces: &[Piece], more: &[f64]) -> Dom {
    let mut specials = IEEE.to_vec();
    specials.extend_from_slice(more);
    Dom { specials, pieces: pieces.to_vec(), accept: None }
}

/// `v` rounded into float dtype `d` (C64 components: F32).
pub fn round_to(d: DType, v: f64) -> f64 {
    match d {
        DType::F16 => f16::from_f64(v).to_f64(),
        DType::BF16 => bf16::from_f64(v).to_f64(),
        DType::F64 => v,
        _ => v as f32 as f64,
    }
}

pub fn min_normal(d: DType) -> f64 {
    match d {
        DType::F16 => f16::MIN_POSITIVE.to_f64(),
        DType::BF16 => bf16::MIN_POSITIVE.to_f64(),
        DType::F64 => f64::MIN_POSITIVE,
        _ => f32::MIN_POSITIVE as f64,
    }
}

pub fn max_finite(d: DType) -> f64 {
    match d {
        DType::F16 => f16::MAX.to_f64(),
        DType::BF16 => bf16::MAX.to_f64(),
        DType::F64 => f64::MAX,
        _ => f32::MAX as f64,
    }
}

impl Dom {
    pub fn draw(&self, r: &mut Rng, d: DType, i: usize) -> f64 {
        if i < self.specials.len() {
            return round_to(d, self.specials[i]);
        }
        if r.unit() < 0.1 {
            return round_to(d, self.specials[r.below(self.specials.len())]);
        }
        for _ in 0..32 {
            let v = round_to(d, self.pieces[r.below(self.pieces.len())].draw(r));
            if self.accept.is_none_or(|ok| ok(v)) {
                return v;
            }
        }
        0.0
    }
    pub fn draw_n(&self, r: &mut Rng, d: DType, n: usize) -> Vec<f64> {
        (0..n).map(|i| self.draw(r, d, i)).collect()
    }
}

/// Boundary values of an integer dtype, and its range.
pub fn int_range(d: DType) -> (i128, i128) {
    match d {
        DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::I8 => (-128, 127),
        DType::U32 => (0, u32::MAX as i128),
        DType::U8 => (0, 255),
        _ => (0, 1),
    }
}

pub fn wrap(d: DType, v: i128) -> i128 {
    let (lo, hi) = int_range(d);
    let span = hi - lo + 1;
    (v - lo).rem_euclid(span) + lo
}

/// Integers: boundaries first, then a mix of small and full-range values.
pub fn ints(r: &mut Rng, d: DType, n: usize, small: (i128, i128), extra: &[i128]) -> Vec<i128> {
    let (lo, hi) = int_range(d);
    let mut first = vec![0, 1, -1, lo, hi, lo + 1, hi - 1, 2, -2];
    first.extend_from_slice(extra);
    (0..n)
        .map(|i| {
            if i < first.len() {
                return wrap(d, first[i]);
            }
            let v = if r.unit() < 0.5 {
                small.0 + (r.next() as u128 % (small.1 - small.0 + 1) as u128) as i128
            } else {
                lo + (r.next() as u128 % (hi - lo + 1) as u128) as i128
            };
            wrap(d, v)
        })
        .collect()
}

/// Builds a tensor of `d` from floats (float dtypes, C64 real parts with im from `im`), ints or
/// bools (as 0/1 in `ints`).
pub fn float_tensor(d: DType, shape: &[usize], v: &[f64]) -> Tensor {
    let mut b = Vec::new();
    for &x in v {
        match d {
            DType::F32 => b.extend_from_slice(&(x as f32).to_le_bytes()),
            DType::F16 => b.extend_from_slice(&f16::from_f64(x).to_bits().to_le_bytes()),
            DType::BF16 => b.extend_from_slice(&bf16::from_f64(x).to_bits().to_le_bytes()),
            DType::F64 => b.extend_from_slice(&x.to_le_bytes()),
            _ => panic!("{d} is not float"),
        }
    }
    Tensor::from_bytes(d, shape, b).unwrap()
}

pub fn c64_tensor(shape: &[usize], v: &[(f64, f64)]) -> Tensor {
    let mut b = Vec::new();
    for &(re, im) in v {
        b.extend_from_slice(&(re as f32).to_le_bytes());
        b.extend_from_slice(&(im as f32).to_le_bytes());
    }
    Tensor::from_bytes(DType::C64, shape, b).unwrap()
}

pub fn int_tensor(d: DType, shape: &[usize], v: &[i128]) -> Tensor {
    let mut b = Vec::new();
    for &x in v {
        let x = wrap(d, x);
        match d {
            DType::I64 => b.extend_from_slice(&(x as i64).to_le_bytes()),
            DType::I32 => b.extend_from_slice(&(x as i32).to_le_bytes()),
            DType::U32 => b.extend_from_slice(&(x as u32).to_le_bytes()),
            DType::I8 | DType::U8 | DType::Bool => b.push(x as u8),
            _ => panic!("{d} is not an integer"),
        }
    }
    Tensor::from_bytes(d, shape, b).unwrap()
}

/// A tensor of any dtype with `n = numel(shape)` values: floats from `fd`, C64 components from
/// `fd` (F32), integers from [`ints`] with the `small` range, Bool random.
pub fn tensor_of(r: &mut Rng, d: DType, shape: &[usize], fd: &Dom, small: (i128, i128), extra: &[i128]) -> Tensor {
    let n: usize = shape.iter().product();
    match d {
        DType::F32 | DType::F16 | DType::BF16 | DType::F64 => float_tensor(d, shape, &fd.draw_n(r, d, n)),
        DType::C64 => {
            let re = fd.draw_n(r, DType::F32, n);
            let mut im = fd.draw_n(r, DType::F32, n + 3);
            im.rotate_left(3); // pair specials with other specials
            c64_tensor(shape, &re.iter().zip(&im).map(|(&a, &b)| (a, b)).collect::<Vec<_>>())
        }
        DType::Bool => int_tensor(d, shape, &(0..n).map(|_| (r.next() & 1) as i128).collect::<Vec<_>>()),
        _ => int_tensor(d, shape, &ints(r, d, n, small, extra)),
    }
}

/// Length of the main test vectors: straddles a 256-thread workgroup.
pub const N: usize = 257;

/// The float dtypes.
pub const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::BF16, DType::F64];
