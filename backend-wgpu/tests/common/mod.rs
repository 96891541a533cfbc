//! Test harness shared by the family tests: the two backends, deterministic data, and the §1.11
//! comparison. (Each test binary uses a different subset.)
#![allow(dead_code)]

use backend_api::{Backend, DType, Graph, Tensor};
use half::{bf16, f16};
use std::sync::OnceLock;

pub mod quant;

pub fn wgpu() -> &'static dyn Backend {
    static B: OnceLock<Box<dyn Backend>> = OnceLock::new();
    B.get_or_init(|| backend_api::create("wgpu").expect("a wgpu adapter (install mesa-vulkan-drivers)")).as_ref()
}

pub fn cpu() -> &'static dyn Backend {
    static B: OnceLock<Box<dyn Backend>> = OnceLock::new();
    B.get_or_init(|| backend_api::create("cpu-ref").unwrap()).as_ref()
}

pub fn supported(d: DType) -> bool {
    wgpu().capabilities().dtypes.contains(&d)
}

pub fn run(be: &dyn Backend, g: &Graph, inputs: &[(&str, &Tensor)]) -> Vec<Tensor> {
    let mut exe = be.compile(g, &Default::default()).unwrap_or_else(|e| panic!("{} compile: {e}", be.name()));
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap_or_else(|e| panic!("{} run: {e}", be.name()))
}

/// Small deterministic generator (xorshift64*).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A tensor of `d` from f64 values (rounded to nearest for floats, wrapped for ints).
pub fn tensor(d: DType, shape: &[usize], v: &[f64]) -> Tensor {
    let mut b = Vec::new();
    for &x in v {
        match d {
            DType::F32 => b.extend((x as f32).to_le_bytes()),
            DType::F16 => b.extend(f16::from_f64(x).to_le_bytes()),
            DType::BF16 => b.extend(bf16::from_f64(x).to_le_bytes()),
            DType::F64 => b.extend(x.to_le_bytes()),
            DType::I64 => b.extend((x as i64).to_le_bytes()),
            DType::I32 => b.extend((x as i64 as i32).to_le_bytes()),
            DType::I8 => b.extend((x as i64 as i8).to_le_bytes()),
            DType::U32 => b.extend((x as i64 as u32).to_le_bytes()),
            DType::U8 => b.extend((x as i64 as u8).to_le_bytes()),
            DType::Bool => b.push((x != 0.0) as u8),
            DType::C64 => b.extend([(x as f32).to_le_bytes(), 0f32.to_le_bytes()].concat()),
        }
    }
    Tensor::from_bytes(d, shape, b).unwrap()
}

/// Tolerance (rtol = atol) of the Approx class for a float dtype.
pub fn approx(d: DType) -> f64 {
    match d {
        DType::F16 => 2e-3,
        DType::BF16 => 1.6e-2,
        _ => 1e-4,
    }
}

pub fn smallest_normal(d: DType) -> f64 {
    match d {
        DType::F16 => 6.103515625e-5,
        DType::F64 => f64::MIN_POSITIVE,
        _ => f32::MIN_POSITIVE as f64,
    }
}

/// Compares per §1.11: ints/Bool bit-exact; floats with the equivalences, exactly when `tol` is
/// None, else `|g − w| ≤ tol·M + tol·|w|` (M = 1 when `m` is None). Returns the largest error seen
/// relative to `M + |w|`.
pub fn check(name: &str, got: &Tensor, want: &Tensor, tol: Option<f64>, m: Option<&[f64]>) -> f64 {
    assert_eq!(got.dtype(), want.dtype(), "{name}: dtype");
    assert_eq!(got.shape(), want.shape(), "{name}: shape");
    let d = got.dtype();
    if !d.is_float() {
        if d == DType::Bool {
            let g: Vec<u8> = got.bytes().to_vec();
            assert!(g.iter().all(|&b| b <= 1), "{name}: Bool output bytes must be 0/1: {g:?}");
        }
        assert_eq!(got.bytes(), want.bytes(), "{name}: bytes differ");
        return 0.0;
    }
    let (g, w) = (got.view().to_f64_lossy(), want.view().to_f64_lossy());
    let tiny = smallest_normal(d);
    let flush = |x: f64| if x.abs() < tiny { 0.0 } else { x };
    let mut worst: f64 = 0.0;
    for i in 0..g.len() {
        let (gi, wi) = (flush(g[i]), flush(w[i]));
        let mi = m.map_or(1.0, |m| m[i]);
        let ok = if wi.is_nan() || gi.is_nan() {
            wi.is_nan() && gi.is_nan()
        } else if wi.is_infinite() || gi.is_infinite() {
            gi == wi
        } else {
            match tol {
                None => gi == wi,
                Some(t) => {
                    worst = worst.max((gi - wi).abs() / (mi + wi.abs()).max(f64::MIN_POSITIVE));
                    (gi - wi).abs() <= t * mi + t * wi.abs()
                }
            }
        };
        assert!(ok, "{name}: element {i}: got {gi:e}, want {wi:e} (M = {mi:e}, tol {tol:?})");
    }
    worst
}

// ---------------------------------------------------------------- shared cases

/// The float dtypes the adapter supports.
pub fn floats() -> Vec<DType> {
    [DType::F32, DType::F16, DType::BF16, DType::F64].into_iter().filter(|&d| supported(d)).collect()
}

/// Uniform values in [lo, hi) from `seed`, rounded to `d`.
pub fn random(d: DType, shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    tensor(d, shape, &(0..n).map(|_| r.uniform(lo, hi)).collect::<Vec<_>>())
}

/// (shape, axis) of the per-axis tests (losses, arg-reductions): rows straddling 256,
/// non-trailing axes, size-0 dims outside the axis.
pub const AXIS_CASES: &[(&[usize], i64)] = &[
    (&[1], 0),
    (&[63], 0),
    (&[65], -1),
    (&[257], 0),
    (&[3, 257], 1),
    (&[257, 3], 0),
    (&[4, 5, 6], 1),
    (&[2, 3, 300], 2),
    (&[5, 1, 7], 1),
    (&[0, 4], 1),
    (&[2, 0, 3], 2),
];

/// Soft targets in [0, 1) with about a third exactly zero.
pub fn targets(d: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut r = Rng(seed | 1);
    tensor(
        d,
        shape,
        &(0..n).map(|_| if r.next().is_multiple_of(3) { 0.0 } else { r.uniform(0.0, 1.0) }).collect::<Vec<_>>(),
    )
}

/// Logits with the spec's special values, one row each: masked logits with zero targets (finite);
/// all −∞ (NaN); a +∞ (NaN); a NaN (NaN).
pub const SPECIAL_LOGITS: [[f64; 4]; 4] = [
    [1.0, f64::NEG_INFINITY, 2.0, f64::NEG_INFINITY],
    [f64::NEG_INFINITY; 4],
    [1.0, f64::INFINITY, 0.0, 0.0],
    [f64::NAN, 1.0, 2.0, 3.0],
];

/// Targets of [`SPECIAL_LOGITS`].
pub const SPECIAL_TARGETS: [[f64; 4]; 4] =
    [[0.5, 0.0, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];
