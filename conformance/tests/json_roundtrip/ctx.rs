//! The state of one random builder: a graph builder, a seeded RNG, and helpers for the random
//! choices every builder makes.

use backend_api::spec::op_entry;
use backend_api::{DType, Dim, Graph, GraphBuilder, Result, Shape, Tensor, Value};
use conformance::rng::Rng;

/// A random builder: adds leaves and ops to `b`, returns the values to output.
pub type Build = fn(&mut Ctx) -> Result<Vec<Value>>;

/// A graph under construction and the randomness that shapes it.
pub struct Ctx {
    /// The graph.
    pub b: GraphBuilder,
    /// Structural and attribute choices.
    pub rng: Rng,
    leaves: usize,
}

impl Ctx {
    /// Builds one graph with `build` from `seed`.
    pub fn run(seed: u64, build: Build) -> Result<Graph> {
        let mut c = Ctx { b: GraphBuilder::new(), rng: Rng::new(seed), leaves: 0 };
        let outs = build(&mut c)?;
        let mut b = c.b;
        for o in outs {
            b.output(o)?;
        }
        b.build()
    }

    /// A leaf of `dtype` and static `dims`: an `Input`, a `Param`, or (for small tensors) a
    /// `Constant` of random bytes, so that all three leaf kinds appear.
    pub fn leaf(&mut self, dtype: DType, dims: &[usize]) -> Result<Value> {
        self.leaves += 1;
        let numel: usize = dims.iter().product();
        match self.rng.below(3) {
            0 if numel <= 64 => {
                let mut bytes: Vec<u8> = (0..numel * dtype.size()).map(|_| self.rng.next_u64() as u8).collect();
                if dtype == DType::Bool {
                    bytes.iter_mut().for_each(|b| *b &= 1);
                }
                self.b.constant(&Tensor::from_bytes(dtype, dims, bytes)?)
            }
            1 => self.b.param(&format!("w{}", self.leaves), dtype, dims),
            _ => self.b.input(&format!("x{}", self.leaves), dtype, Shape::of(dims)),
        }
    }

    /// An `Input` with the given (possibly symbolic) dims.
    pub fn input(&mut self, dtype: DType, dims: Vec<Dim>) -> Result<Value> {
        self.leaves += 1;
        self.b.input(&format!("x{}", self.leaves), dtype, Shape(dims))
    }

    /// A uniform size in `lo..=hi`.
    pub fn size(&mut self, lo: usize, hi: usize) -> usize {
        self.rng.int_in(lo as i64, hi as i64) as usize
    }

    /// A coin flip.
    pub fn flip(&mut self) -> bool {
        self.rng.chance(0.5)
    }

    /// One of `xs` (which must not be empty).
    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.below(xs.len())].clone()
    }

    /// A dtype the op-table row `row` allows for its main input.
    pub fn dtype(&mut self, row: &str) -> DType {
        let allowed: Vec<DType> = op_entry(row).map(|e| e.dtypes.iter().collect()).unwrap_or_default();
        if allowed.is_empty() {
            DType::F32
        } else {
            self.pick(&allowed)
        }
    }

    /// Any finite f32 ≥ 0: a common value or random bits (subnormals and huge values included),
    /// to test that attribute floats are written bit-exactly.
    pub fn eps(&mut self) -> f32 {
        match self.rng.below(3) {
            0 => self.pick(&[0.0, 1e-5, 1e-6, 1e-12, 0.1]),
            _ => f32::from_bits(self.rng.next_u64() as u32 % 0x7f80_0000),
        }
    }

    /// Any finite f32 > 0.
    pub fn positive(&mut self) -> f32 {
        let v = self.eps();
        if v == 0.0 {
            f32::MIN_POSITIVE
        } else {
            v
        }
    }

    /// Any finite f32 of either sign.
    pub fn finite(&mut self) -> f32 {
        let v = self.eps();
        if self.flip() {
            -v
        } else {
            v
        }
    }

    /// `None` or `Some(make(self))`.
    pub fn maybe<T>(&mut self, make: impl FnOnce(&mut Ctx) -> T) -> Option<T> {
        if self.flip() {
            Some(make(self))
        } else {
            None
        }
    }
}
