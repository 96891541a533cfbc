//! Problem generators, one module per op family (named as [`backend_api::Family::module`] says).
//! Each family exposes `variants(row)`: for an op-table row it handles, one proptest strategy per
//! dtype (Cast: per dtype pair) the row allows.

pub mod attention;
pub mod backward;
pub mod control;
pub mod conv;
pub mod elementwise;
pub mod indexing;
pub mod leaf;
pub mod linalg;
pub mod movement;
pub mod norm;
pub mod random;
pub mod reduce;
pub mod region;
pub mod sequence;

use crate::problem::{Generated, LeafKind};
use crate::shapes::{leaf_kind, seed, shape, special_rate};
use crate::values::Rng;
use backend_api::spec::op_entry;
use backend_api::DType;
use proptest::prelude::*;
use std::ops::RangeInclusive;

/// The problems of one op-table row for one dtype (or dtype pair).
pub struct Variant {
    /// The dtype the row's table entry lists (for Cast: the source dtype).
    pub dtype: DType,
    /// What the report shows in its dtype column (`F32`, or `F32->I8` for Cast).
    pub label: String,
    /// The problems.
    pub strategy: BoxedStrategy<Generated>,
}

/// Every variant of `row`, or `None` when no family generates problems for it.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    leaf::variants(row)
        .or_else(|| elementwise::variants(row))
        .or_else(|| movement::variants(row))
        .or_else(|| indexing::variants(row))
        .or_else(|| reduce::variants(row))
        .or_else(|| linalg::variants(row))
        .or_else(|| norm::variants(row))
        .or_else(|| attention::variants(row))
        .or_else(|| conv::variants(row))
        .or_else(|| backward::variants(row))
        .or_else(|| random::variants(row))
        .or_else(|| region::variants(row))
        .or_else(|| control::variants(row))
        .or_else(|| sequence::variants(row))
}

/// One variant per dtype of the row's table entry, each from `strategy(dtype)`.
pub(crate) fn per_dtype(row: &str, strategy: impl Fn(DType) -> BoxedStrategy<Generated>) -> Option<Vec<Variant>> {
    let entry = op_entry(row)?;
    Some(
        entry
            .dtypes
            .iter()
            .map(|dtype| Variant { dtype, label: dtype.name().to_string(), strategy: strategy(dtype) })
            .collect(),
    )
}

/// The part of a case every generator draws the same way: a main shape, a leaf kind per
/// operand, a seed for data and unshrinkable choices, and the special-value rate.
#[derive(Clone, Debug)]
pub struct Skeleton {
    /// The main shape (the output shape for elementwise ops, the input shape for most others).
    pub shape: Vec<usize>,
    /// Leaf kind of each operand.
    pub kinds: Vec<LeafKind>,
    /// Seed of the data and of the structural choices drawn with [`Rng`].
    pub seed: u64,
    /// Probability that an element is replaced by a special value.
    pub rate: f64,
}

impl Skeleton {
    /// Leaf kind of operand `i` (`Input` past the drawn ones).
    pub fn kind(&self, i: usize) -> LeafKind {
        self.kinds.get(i).copied().unwrap_or(LeafKind::Input)
    }

    /// A fresh RNG from the seed.
    pub fn rng(&self) -> Rng {
        Rng::new(self.seed)
    }
}

/// A skeleton with a shape of rank in `ranks`, at most `cap` elements and `leaves` operands.
pub fn skeleton(ranks: RangeInclusive<usize>, cap: usize, leaves: usize) -> BoxedStrategy<Skeleton> {
    (shape(ranks, cap), proptest::collection::vec(leaf_kind(), leaves), seed(), special_rate())
        .prop_map(|(shape, kinds, seed, rate)| Skeleton { shape, kinds, seed, rate })
        .boxed()
}
