//! Bodies: generated problems of other rows turned into [`Func`]s (their `Input` leaves become
//! the func's inputs, their `Param`s stay params under a fresh name, their `Constant`s stay),
//! chained into small DAGs, or a nested control op.

use super::func::{Func, FuncBuilder};
use super::glue::{adapt, small_tensor};
use super::{if_, while_, Scope};
use crate::problem::Problem;
use crate::problems::{sequence, variants, Variant};
use crate::values::Rng;
use backend_api::spec::op_entry;
use backend_api::{DType, Op, Result, TensorType, Value};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::HashMap;

/// Rows whose problems become bodies: cheap ops, Exact for most dtypes, over every dtype.
/// Which problems a body may use is decided per problem by its [`Class`](super::func::Class)
/// (loops take only exact, continuous ones).
const EXACT_ROWS: &[&str] = &[
    "Reshape",
    "Transpose",
    "Reverse",
    "Narrow",
    "Concat",
    "Expand",
    "Pad",
    "Where",
    "Cast",
    "Binary.Add",
    "Binary.Sub",
    "Binary.Max",
    "Binary.Min",
    "Binary.Xor",
    "Unary.Neg",
    "Unary.Abs",
    "Unary.Relu",
    "Unary.Floor",
    "Unary.Not",
    "Compare.Lt",
    "Reduce.Max",
    "Reduce.Min",
    "Reduce.Sum",
];

/// Rows with Approx (not magnitude-scaled) float results, drawn more often where they are
/// allowed (an `If` branch of one fragment outside loops) so that they occur at all.
const APPROX_ROWS: &[&str] = &["Unary.Exp", "Unary.Tanh", "Softmax", "RmsNorm", "ElementwiseRegion"];

/// Most elements of any tensor of a body: small enough for a software GPU to loop over, large
/// enough to straddle a 256-invocation workgroup (255, 257).
const CAP: usize = 320;

/// Most nodes of one generated problem used as a body.
const MAX_NODES: usize = 12;

/// Problems drawn before a fragment falls back to a plain `Reverse`.
const ATTEMPTS: usize = 64;

/// What a fragment must be, given where its results go.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Need {
    /// Its results feed casts, later fragments or loop iterations, or it reads values that are
    /// not its own test data.
    pub exact: bool,
    /// It consumes float results of other bodies or of earlier iterations.
    pub safe: bool,
}

/// The state of one case's generation: the RNG for choices and data, a proptest runner for
/// other rows' strategies (seeded from the case), their variants, a counter for param names.
pub(crate) struct Ctx {
    /// Structural choices and glue data.
    pub rng: Rng,
    runner: TestRunner,
    variants: HashMap<&'static str, Vec<Variant>>,
    params: usize,
}

impl Ctx {
    /// A context whose every choice follows from `seed`.
    pub fn new(seed: u64) -> Ctx {
        let mut rng = Rng::new(seed);
        let mut bytes = [0u8; 32];
        for chunk in bytes.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
        Ctx { rng, runner, variants: HashMap::new(), params: 0 }
    }

    /// A fresh param name (`b0, b1, …`; the problem's own leaves are `w0, w1, …`).
    fn param_name(&mut self) -> String {
        self.params += 1;
        format!("b{}", self.params - 1)
    }

    /// A problem of `row` for `dtype` (a random variant of that dtype), or `None`.
    fn draw(&mut self, row: &'static str, dtype: DType) -> Option<Problem> {
        let vs = self.variants.entry(row).or_insert_with(|| variants(row).unwrap_or_default());
        let of: Vec<&Variant> = vs.iter().filter(|v| v.dtype == dtype).collect();
        let v = of.get(self.rng.below(of.len()))?;
        v.strategy.new_tree(&mut self.runner).ok()?.current().ok()
    }

    /// A fragment: a small problem of a pool row for `dtype` that meets `need`.
    pub fn fragment(&mut self, dtype: DType, need: Need) -> Result<Func> {
        let of = |list: &[&'static str]| -> Vec<&'static str> {
            list.iter().copied().filter(|r| op_entry(r).is_some_and(|e| e.dtypes.contains(dtype))).collect()
        };
        let (all, approx) = ([EXACT_ROWS, APPROX_ROWS].concat(), of(APPROX_ROWS));
        let rows = if !need.exact && !approx.is_empty() && self.rng.chance(0.4) { approx } else { of(&all) };
        for _ in 0..ATTEMPTS {
            let row = self.rng.pick(&rows);
            let Some(p) = self.draw(row, dtype).filter(small) else { continue };
            let f = self.func_of(&p)?;
            let c = f.class();
            if c.tolerable && (c.exact || !need.exact) && (c.safe || !need.safe) {
                return Ok(f);
            }
        }
        self.fallback(dtype)
    }

    /// The problem's graph as a func: inputs in declaration order, params renamed.
    fn func_of(&mut self, p: &Problem) -> Result<Func> {
        let mut fb = FuncBuilder::new();
        let mut renamed: HashMap<String, String> = HashMap::new();
        let mut values: Vec<Vec<Value>> = Vec::with_capacity(p.graph.nodes().len());
        for node in p.graph.nodes() {
            let outs = match &node.op {
                Op::Input(a) => vec![fb.arg(tensor_of(&p.inputs, &a.name)?)?],
                Op::Param(a) => {
                    let name = match renamed.get(&a.name) {
                        Some(n) => n.clone(),
                        None => self.param_name(),
                    };
                    renamed.insert(a.name.clone(), name.clone());
                    vec![fb.param(&name, tensor_of(&p.params, &a.name)?)?]
                }
                op => {
                    let ins = super::func::lookup(&values, &node.inputs)?;
                    fb.gb.add(op.clone(), &ins)?
                }
            };
            values.push(outs);
        }
        let outs = super::func::lookup(&values, p.graph.outputs())?;
        fb.finish(&outs)
    }

    /// A `Reverse` of a small tensor: the fragment when no drawn problem fits.
    fn fallback(&mut self, dtype: DType) -> Result<Func> {
        let t = small_tensor(&mut self.rng, &TensorType::new(dtype, &[3]))?;
        let mut fb = FuncBuilder::new();
        let x = fb.arg(t)?;
        let y = fb.gb.reverse(x, &[0])?;
        fb.finish(&[y])
    }
}

/// The named tensor of a problem's input or param list.
fn tensor_of(list: &[(String, backend_api::Tensor)], name: &str) -> Result<backend_api::Tensor> {
    match list.iter().find(|(n, _)| n == name) {
        Some((_, t)) => Ok(t.clone()),
        None => backend_api::bail!(Input, "the generated problem has no data for {name:?}"),
    }
}

/// Whether a problem is small enough for a body: few nodes, static shapes, small tensors.
fn small(p: &Problem) -> bool {
    let nodes = p.graph.nodes();
    let sizes_ok = nodes.iter().flat_map(|n| &n.outputs).all(|t| t.dims().is_ok_and(|d| numel(&d) <= CAP));
    nodes.len() <= MAX_NODES && sizes_ok
}

fn numel(d: &[usize]) -> usize {
    backend_api::shape::numel(d)
}

/// A body for a control op of `dtype`: with `nest` levels left, mostly a nested control op
/// (whose own bodies get one level less), else a chain of fragments. `in_loop`: the body runs
/// in a loop (its results feed back), so everything in it must be exact and continuous.
pub(crate) fn body(ctx: &mut Ctx, dtype: DType, nest: usize, in_loop: bool) -> Result<Func> {
    if nest > 0 && ctx.rng.chance(0.8) {
        let scope = Scope { depth: nest - 1, in_loop, top: false };
        return match ctx.rng.below(3) {
            0 => if_::func(ctx, dtype, scope),
            1 => while_::func(ctx, dtype, scope),
            _ => sequence::scan_func(ctx, dtype, scope),
        };
    }
    chain(ctx, dtype, in_loop)
}

/// One to three fragments, each later one reading some results of the one before. A later
/// fragment sees values outside its row's test domain, which only Exact ops are sure to
/// compute alike everywhere (an Approx op's class assumes its domain: an F32 sum of squares of
/// BF16 extremes overflows where an F64 one does not), so only a single fragment may be
/// Approx.
fn chain(ctx: &mut Ctx, dtype: DType, in_loop: bool) -> Result<Func> {
    let stages = match ctx.rng.below(10) {
        0..=4 => 1,
        5..=7 => 2,
        _ => 3,
    };
    let mut f = ctx.fragment(dtype, Need { exact: in_loop || stages > 1, safe: in_loop })?;
    for _ in 1..stages {
        let g = ctx.fragment(dtype, Need { exact: true, safe: true })?;
        f = compose(ctx, &f, &g)?;
    }
    Ok(f)
}

/// `g` after `f`: some inputs of `g` (at least one) read a result of `f` fitted to their type,
/// the others stay inputs; the outputs are `g`'s, sometimes (always when `g` has no inputs)
/// with one of `f`'s.
fn compose(ctx: &mut Ctx, f: &Func, g: &Func) -> Result<Func> {
    let mut fb = FuncBuilder::new();
    let f_in = f.args.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<_>>>()?;
    let f_out = fb.call(f, &f_in)?;
    let exact = f.class().exact;
    let forced = ctx.rng.below(g.args.len());
    let mut g_in = Vec::with_capacity(g.args.len());
    for (k, (t, ty)) in g.args.iter().zip(g.input_types()).enumerate() {
        let wire = k == forced || ctx.rng.chance(0.5);
        g_in.push(match ctx.rng.pick_from(&f_out) {
            Some(src) if wire => adapt(&mut fb, &mut ctx.rng, src, exact, &ty)?,
            _ => fb.arg(t.clone())?,
        });
    }
    let mut outs = fb.call(g, &g_in)?;
    // A `g` without inputs (all its leaves params or constants) reads nothing of `f`.
    if g.args.is_empty() || ctx.rng.chance(0.3) {
        outs.extend(ctx.rng.pick_from(&f_out));
    }
    fb.finish(&outs)
}

/// Random choice helpers on the shared RNG.
pub(crate) trait Pick {
    /// A random element of `xs`, `None` when empty.
    fn pick_from<T: Copy>(&mut self, xs: &[T]) -> Option<T>;
}

impl Pick for Rng {
    fn pick_from<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        xs.get(self.below(xs.len())).copied()
    }
}
