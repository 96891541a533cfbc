//! Generators for the control-flow rows `If` and `While` (§2.13), and the machinery the `Scan`
//! generator (§2.10.7, in `sequence`) shares: bodies made of other rows' generated problems,
//! nested control ops, and [`unroll()`], which rewrites a problem without control flow so that
//! `tests/control_unrolled.rs` can check the reference against it.
//!
//! A case is built from a seed (bodies are problems of other rows drawn with a proptest runner
//! seeded from it, like tensor data elsewhere) and a nesting depth (1–3, shrinking to 1): the
//! op under test's bodies may hold another control op, whose bodies may hold a third.
//!
//! Results must be reproducible on every conforming backend under the rows' class (Approx, not
//! magnitude-scaled), so bodies are chosen by their class (`func::Class`): loop bodies (While,
//! Scan, and everything nested in them) use only Exact ops that are continuous in float
//! inputs, since their results feed back; outside loops an `If` branch may be one Approx op on
//! its own test data (an Approx class assumes the op's domain). The glue ops around bodies
//! (`glue`) are Exact and never cast a float to an integer or a Bool.

mod bodies;
mod func;
mod glue;
mod if_;
pub mod unroll;
mod while_;

pub(crate) use bodies::{body, Ctx};
pub(crate) use func::{Func, FuncBuilder};
pub(crate) use glue::{adapt, combine, small_tensor, steps};
pub use unroll::{unroll, Trace, Unrolled};

use crate::problem::{Generated, LeafKind, ProblemBuilder};
use crate::problems::{per_dtype, Variant};
use crate::shapes::seed;
use backend_api::DType;
use proptest::prelude::*;

/// Where a control op sits: how many more may nest in its bodies, whether it runs in a loop,
/// whether it is the problem's op.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scope {
    /// Control ops that may still nest inside this one's bodies.
    pub depth: usize,
    /// The op runs inside a loop body: its bodies' results feed back.
    pub in_loop: bool,
    /// The op is the problem's op: its first output has the row's dtype, its loops may run the
    /// most iterations (nested ones multiply).
    pub top: bool,
}

impl Scope {
    /// Most iterations of a loop here (a `While`'s trips, a `Scan`'s length).
    pub fn max_trips(self) -> usize {
        if self.top {
            6
        } else {
            3
        }
    }
}

/// The op rows this module generates (`Scan` is in `sequence`, its family's module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Row {
    If,
    While,
    Scan,
}

/// Variants for the control-flow rows.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    match row {
        "If" => row_variants(row, Row::If),
        "While" => row_variants(row, Row::While),
        _ => None,
    }
}

/// One variant per dtype of `row`: a nesting depth and a seed per case.
pub(crate) fn row_variants(name: &str, row: Row) -> Option<Vec<Variant>> {
    per_dtype(name, move |dtype| (depth(), seed()).prop_map(move |(depth, seed)| case(row, dtype, depth, seed)).boxed())
}

/// Levels of control ops, the problem's included: mostly 1, sometimes 2 or 3.
fn depth() -> BoxedStrategy<usize> {
    prop_oneof![5 => Just(1usize), 3 => Just(2usize), 2 => Just(3usize)].boxed()
}

fn case(row: Row, dtype: DType, depth: usize, seed: u64) -> Generated {
    let mut ctx = Ctx::new(seed);
    let scope = Scope { depth: depth.saturating_sub(1), in_loop: false, top: true };
    let f = match row {
        Row::If => if_::func(&mut ctx, dtype, scope)?,
        Row::While => while_::func(&mut ctx, dtype, scope)?,
        Row::Scan => crate::problems::sequence::scan_func(&mut ctx, dtype, scope)?,
    };
    problem(&mut ctx, &f)
}

/// The problem of a func holding the op under test: each input becomes a leaf of a random kind,
/// and the params of its bodies are the problem's params too (§2.13).
fn problem(ctx: &mut Ctx, f: &Func) -> Generated {
    let mut pb = ProblemBuilder::new();
    let mut leaves = Vec::with_capacity(f.args.len());
    for t in &f.args {
        let kind = match ctx.rng.below(10) {
            0..=5 => LeafKind::Input,
            6 | 7 => LeafKind::Param,
            _ => LeafKind::Constant,
        };
        leaves.push(pb.leaf(kind, t.clone())?);
    }
    let outs = func::inline(pb.g(), &f.graph, &leaves)?;
    let mut p = pb.finish(&outs)?;
    p.params.extend(f.params.iter().cloned());
    Ok(p)
}
