//! `While` (§2.13.2): an I32 counter `i` with `i < limit` (written three ways; the limit a
//! constant of the condition graph or a loop value), a condition of shape `[]`, `[1]` or
//! `[1, 1]`, trip counts from 0 (false at the start) to 6, `max_iterations` 0, below the trip
//! count (the bound stops the loop), at it, or a little above it. The other loop values: an
//! accumulator of the row's dtype first (`acc = acc ∘ f(x…)`, `∘` an exact binary op),
//! sometimes a second one, and the body's inputs `x…`, each passed through (a capture, since
//! While has none) or replaced by a result of the body fitted to its type.

use super::bodies::Pick;
use super::glue::cond_shape;
use super::{body, combine, small_tensor, Ctx, Func, FuncBuilder, Scope};
use backend_api::op::{BinaryOp, CompareOp, UnaryOp};
use backend_api::{DType, Result, Tensor, TensorType, Value};

/// How the condition compares the counter with the limit.
#[derive(Clone, Copy, Debug)]
enum Test {
    /// `i < limit`
    Lt,
    /// `limit > i`
    Gt,
    /// `!(i >= limit)`
    NotGe,
}

/// The loop's plan: counter start, limit, where the limit lives, the bound, the test.
#[derive(Clone, Copy, Debug)]
struct Counter {
    start: i32,
    limit: i32,
    limit_is_value: bool,
    max_iterations: u64,
    test: Test,
}

impl Counter {
    fn draw(ctx: &mut Ctx, scope: Scope) -> Counter {
        let rng = &mut ctx.rng;
        let most = scope.max_trips() as i64;
        let start = rng.int_in(-2, 4);
        let trips = rng.int_in(-2, most);
        let t = trips.max(0) as u64;
        // A backend may record `max_iterations` iterations whatever the trips (the GPU's
        // gated loops do): the bound stays near the trip count.
        let max_iterations = match rng.below(5) {
            0 => 0,
            1 => t.saturating_sub(1 + rng.below(2) as u64),
            2 => t,
            _ => t + 1 + rng.below(3) as u64,
        };
        // A nested loop's counter may be a value an enclosing loop changes: the bound keeps
        // its trips (which multiply with the enclosing ones) small whatever it starts at.
        let max_iterations = if scope.top { max_iterations } else { max_iterations.min(most as u64) };
        let test = match rng.below(3) {
            0 => Test::Lt,
            1 => Test::Gt,
            _ => Test::NotGe,
        };
        Counter {
            start: start as i32,
            limit: (start + trips) as i32,
            limit_is_value: rng.chance(0.5),
            max_iterations,
            test,
        }
    }
}

/// A func `(loop values…) → While outputs` for a problem or a body of `dtype`.
pub(crate) fn func(ctx: &mut Ctx, dtype: DType, scope: Scope) -> Result<Func> {
    let f = body(ctx, dtype, scope.depth, true)?;
    let counter = Counter::draw(ctx, scope);
    let outs = f.output_types();
    let Some(first) = outs.first() else { backend_api::bail!(Arity, "a body without outputs") };
    // Loop values: accumulators, the body's inputs, the counter, the limit if it is one.
    let mut accs = vec![TensorType { dtype, shape: first.shape.clone() }];
    if ctx.rng.chance(0.3) {
        accs.extend(ctx.rng.pick_from(&outs.iter().collect::<Vec<_>>()).cloned());
    }
    let mut init: Vec<Tensor> = accs.iter().map(|t| small_tensor(&mut ctx.rng, t)).collect::<Result<_>>()?;
    init.extend(f.args.iter().cloned());
    init.push(Tensor::scalar(counter.start));
    if counter.limit_is_value {
        init.push(Tensor::scalar(counter.limit));
    }
    let cond = cond_graph(ctx, &init, counter)?;
    let step = body_graph(ctx, &f, &init, accs.len())?;
    let mut fb = FuncBuilder::new();
    let vals = init.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    for (name, t) in &f.params {
        fb.param(name, t.clone())?;
    }
    let outs = fb.gb.while_(&vals, cond.graph, step.graph, counter.max_iterations)?;
    fb.finish(&outs)
}

/// The condition over the loop values `init` (counter after the body's inputs, limit last).
fn cond_graph(ctx: &mut Ctx, init: &[Tensor], c: Counter) -> Result<Func> {
    let mut fb = FuncBuilder::new();
    let vals = init.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    let (i, limit) = match (c.limit_is_value, vals.as_slice()) {
        (true, [.., i, l]) => (*i, *l),
        (false, [.., i]) => (*i, fb.gb.constant(&Tensor::scalar(c.limit))?),
        _ => backend_api::bail!(Arity, "While loop values without a counter"),
    };
    let b = match c.test {
        Test::Lt => fb.gb.compare(CompareOp::Lt, i, limit)?,
        Test::Gt => fb.gb.compare(CompareOp::Gt, limit, i)?,
        Test::NotGe => {
            let ge = fb.gb.compare(CompareOp::Ge, i, limit)?;
            fb.gb.unary(UnaryOp::Not, ge)?
        }
    };
    let dims: Vec<i64> = cond_shape(&mut ctx.rng).iter().map(|&d| d as i64).collect();
    let b = fb.gb.reshape(b, &dims)?;
    fb.finish(&[b])
}

/// The body over the loop values: `n_acc` accumulators combined with the body's results, the
/// body's inputs passed through or replaced, the counter incremented, the limit kept.
fn body_graph(ctx: &mut Ctx, f: &Func, init: &[Tensor], n_acc: usize) -> Result<Func> {
    let mut fb = FuncBuilder::new();
    let vals = init.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    let n_x = f.args.len();
    let (accs, rest) = vals.split_at(n_acc.min(vals.len()));
    let (xs, tail) = rest.split_at(n_x.min(rest.len()));
    let ys = fb.call(f, xs)?;
    let mut next = Vec::with_capacity(vals.len());
    for (k, &acc) in accs.iter().enumerate() {
        let ty = fb.ty(acc)?;
        let y = fit_result(ctx, &mut fb, &ys, k, &ty)?;
        next.push(combine(&mut fb, &mut ctx.rng, acc, y)?);
    }
    for &x in xs {
        if ctx.rng.chance(0.6) {
            next.push(x);
        } else {
            let (k, ty) = (ctx.rng.below(ys.len()), fb.ty(x)?);
            next.push(fit_result(ctx, &mut fb, &ys, k, &ty)?);
        }
    }
    let Some((&i, limit)) = tail.split_first() else {
        backend_api::bail!(Arity, "While loop values without a counter")
    };
    let one = fb.gb.constant(&Tensor::scalar(1i32))?;
    next.push(fb.gb.binary(BinaryOp::Add, i, one)?);
    next.extend(limit);
    fb.finish(&next)
}

/// Result `k` (modulo their count) of the body fitted to `ty` (loop bodies are exact, so only
/// a float-to-integer cast is replaced by a constant).
fn fit_result(ctx: &mut Ctx, fb: &mut FuncBuilder, ys: &[Value], k: usize, ty: &TensorType) -> Result<Value> {
    let Some(&y) = ys.get(k % ys.len().max(1)) else { backend_api::bail!(Arity, "a body without outputs") };
    super::adapt(fb, &mut ctx.rng, y, true, ty)
}
