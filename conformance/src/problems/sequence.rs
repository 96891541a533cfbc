//! Generator for `Scan` (§2.10.7), with the control-flow machinery of [`super::control`]: a
//! generated body whose inputs are each a carry, a broadcast input or a step slice of a
//! sequence input; carries passed through, replaced by a result or accumulated (an accumulator
//! carry of the row's dtype first, sometimes), no carries at all sometimes; per-step outputs
//! from the body's results and new carries; lengths 0 to 6, `reverse`, `save_trajectory`.
//! The recurrent cells are in [`recurrent`]; the state-space scans have no generator yet.

pub mod recurrent;

use super::control::{adapt, body, combine, row_variants, small_tensor, steps, Ctx, Func, FuncBuilder, Row, Scope};
use super::Variant;
use backend_api::{DType, Result, Tensor, TensorType, Value};

/// Variants for the sequence rows that have a generator.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    match row {
        "Scan" => row_variants(row, Row::Scan),
        "Rnn" | "Gru" | "Lstm" => recurrent::variants(row),
        _ => None,
    }
}

/// What a body input is to the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Carry,
    Bcast,
    Step,
}

/// How a carry changes per step.
#[derive(Clone, Copy, Debug)]
enum Update {
    Keep,
    Replace(usize),
    Accumulate(usize),
}

/// A func `(carries…, broadcast inputs…, sequence inputs…) → Scan outputs` for a problem or a
/// body of `dtype`.
pub(crate) fn scan_func(ctx: &mut Ctx, dtype: DType, scope: Scope) -> Result<Func> {
    let f = body(ctx, dtype, scope.depth, true)?;
    let outs = f.output_types();
    let Some(first) = outs.first() else { backend_api::bail!(Arity, "a body without outputs") };
    let length = match ctx.rng.below(8) {
        0 => 0,
        _ => 1 + ctx.rng.below(scope.max_trips()),
    };
    let roles: Vec<Role> = f
        .args
        .iter()
        .map(|_| match ctx.rng.below(3) {
            0 => Role::Carry,
            1 => Role::Bcast,
            _ => Role::Step,
        })
        .collect();
    let of = |r: Role| -> Vec<usize> { (0..roles.len()).filter(|&k| roles[k] == r).collect() };
    let (carried, bcast, stepped) = (of(Role::Carry), of(Role::Bcast), of(Role::Step));
    // The first carry has the row's dtype: an accumulator when no carried input has it first.
    let first_ok = carried.first().is_none_or(|&k| f.args[k].dtype() == dtype);
    let acc = (!first_ok || ctx.rng.chance(0.3)).then(|| TensorType { dtype, shape: first.shape.clone() });
    let mut carries: Vec<Tensor> = acc.iter().map(|t| small_tensor(&mut ctx.rng, t)).collect::<Result<_>>()?;
    carries.extend(carried.iter().map(|&k| f.args[k].clone()));
    let slices: Vec<Tensor> = stepped.iter().map(|&k| f.args[k].clone()).collect();
    let bcasts: Vec<Tensor> = bcast.iter().map(|&k| f.args[k].clone()).collect();
    // The body's declared inputs: carries, broadcast values, step slices.
    let mut order: Vec<usize> = carried.clone();
    order.extend(&bcast);
    order.extend(&stepped);
    let plan = BodyPlan { f: &f, acc: acc.is_some(), order: &order, dtype };
    let step_graph = body_graph(ctx, &plan, (&carries, &bcasts, &slices))?;
    let xs: Vec<Tensor> = slices.iter().map(|s| steps(&mut ctx.rng, s, length)).collect::<Result<_>>()?;
    let mut fb = FuncBuilder::new();
    let c = carries.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    let b = bcasts.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    let x = xs.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<Value>>>()?;
    for (name, t) in &f.params {
        fb.param(name, t.clone())?;
    }
    let (reverse, trajectory) = (ctx.rng.chance(0.5), ctx.rng.chance(0.5));
    let outs = fb.gb.scan(step_graph.graph, length as u64, reverse, (&c, &b, &x), trajectory)?;
    fb.finish(&outs)
}

/// What the step graph is made of: the body, whether an accumulator carry comes first, the
/// body inputs in declaration order (carried, broadcast, stepped), the row's dtype.
struct BodyPlan<'a> {
    f: &'a Func,
    acc: bool,
    order: &'a [usize],
    dtype: DType,
}

/// The step graph: the body on its inputs, new carries, per-step values.
fn body_graph(
    ctx: &mut Ctx,
    plan: &BodyPlan<'_>,
    (carries, bcasts, slices): (&[Tensor], &[Tensor], &[Tensor]),
) -> Result<Func> {
    let mut fb = FuncBuilder::new();
    let declared = carries.iter().chain(bcasts).chain(slices).map(|t| fb.arg(t.clone())).collect::<Result<Vec<_>>>()?;
    let skip = usize::from(plan.acc);
    // Body input k is declared at position skip + (its index in `order`).
    let mut ins = vec![None; plan.f.args.len()];
    for (pos, &k) in plan.order.iter().enumerate() {
        ins[k] = declared.get(skip + pos).copied();
    }
    let Some(ins) = ins.into_iter().collect::<Option<Vec<Value>>>() else {
        backend_api::bail!(Arity, "a body input without a scan input")
    };
    let ys = fb.call(plan.f, &ins)?;
    let mut next = Vec::with_capacity(carries.len());
    for &c in &declared[..carries.len()] {
        let update = match ctx.rng.below(10) {
            _ if skip == 1 && next.is_empty() => Update::Accumulate(0),
            0..=2 => Update::Keep,
            3..=5 => Update::Replace(ctx.rng.below(ys.len())),
            _ => Update::Accumulate(ctx.rng.below(ys.len())),
        };
        next.push(apply(ctx, &mut fb, c, &ys, update)?);
    }
    let per_step = per_step(ctx, &mut fb, &ys, &next, plan.dtype)?;
    next.extend(per_step);
    fb.finish(&next)
}

/// A carry's new value.
fn apply(ctx: &mut Ctx, fb: &mut FuncBuilder, c: Value, ys: &[Value], u: Update) -> Result<Value> {
    let ty = fb.ty(c)?;
    let result = |ctx: &mut Ctx, fb: &mut FuncBuilder, k: usize| -> Result<Value> {
        let Some(&y) = ys.get(k) else { backend_api::bail!(Arity, "body result {k} of {}", ys.len()) };
        adapt(fb, &mut ctx.rng, y, true, &ty)
    };
    match u {
        Update::Keep => Ok(c),
        Update::Replace(k) => result(ctx, fb, k),
        Update::Accumulate(k) => {
            let y = result(ctx, fb, k)?;
            combine(fb, &mut ctx.rng, c, y)
        }
    }
}

/// Per-step values: some of the body's results and new carries; with no carries at least one,
/// the first of the row's dtype (it is then the scan's first output).
fn per_step(ctx: &mut Ctx, fb: &mut FuncBuilder, ys: &[Value], carries: &[Value], dtype: DType) -> Result<Vec<Value>> {
    let mut out: Vec<Value> = ys.iter().copied().filter(|_| ctx.rng.chance(0.5)).take(2).collect();
    if ctx.rng.chance(0.2) {
        out.extend(carries.get(ctx.rng.below(carries.len())));
    }
    if carries.is_empty() {
        let Some(&y) = ys.first() else { backend_api::bail!(Arity, "a body without outputs") };
        let ty = fb.ty(y)?;
        let y = adapt(fb, &mut ctx.rng, y, true, &TensorType { dtype, shape: ty.shape })?;
        out.insert(0, y);
    }
    Ok(out)
}
