//! `If` (§2.13.1): a Bool condition of shape `[]`, `[1]` or `[1, 1]` (an input, or computed in
//! the graph from an I32 input), both branches generated bodies over the captures (any count,
//! 0 included: branches closed over their data, selecting between computations on constants),
//! shared captures, one to four outputs whose types follow the then branch (the first with the
//! row's dtype); the else branch's results are fitted to them, or are constants where fitting
//! could differ between backends.

use super::bodies::Pick;
use super::glue::{adapt, close, cond_shape};
use super::{body, Ctx, Func, FuncBuilder, Scope};
use backend_api::op::CompareOp;
use backend_api::{DType, Graph, Result, Tensor, TensorType, Value};

/// A func `(cond inputs…, captures…) → If outputs` for a problem or a body of `dtype`.
pub(crate) fn func(ctx: &mut Ctx, dtype: DType, scope: Scope) -> Result<Func> {
    let mut then_f = body(ctx, dtype, scope.depth, scope.in_loop)?;
    let mut else_f = body(ctx, dtype, scope.depth, scope.in_loop)?;
    if ctx.rng.chance(0.15) {
        then_f = close(&then_f)?;
        else_f = close(&else_f)?;
    }
    let mut fb = FuncBuilder::new();
    let cond = condition(ctx, &mut fb)?;
    // Captures: the then branch's inputs, then the else branch's. An exact else branch may
    // share a then capture of its type (an Approx op's class holds only on its own data).
    let mut captures: Vec<Tensor> = then_f.args.clone();
    let then_bind: Vec<usize> = (0..captures.len()).collect();
    let mut else_bind = Vec::with_capacity(else_f.args.len());
    let share = else_f.class().exact;
    for t in &else_f.args {
        let same: Vec<usize> = (0..then_f.args.len()).filter(|&k| same_type(&captures[k], t)).collect();
        match ctx.rng.pick_from(&same) {
            Some(k) if share && ctx.rng.chance(0.5) => else_bind.push(k),
            _ => {
                else_bind.push(captures.len());
                captures.push(t.clone());
            }
        }
    }
    let targets = targets(ctx, dtype, &then_f, &captures);
    let then_g = branch(ctx, &then_f, &then_bind, &captures, &targets, true)?;
    let else_g = branch(ctx, &else_f, &else_bind, &captures, &targets, false)?;
    let caps = captures.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<_>>>()?;
    for (name, t) in then_f.params.iter().chain(&else_f.params) {
        fb.param(name, t.clone())?;
    }
    let outs = fb.gb.if_(cond, &caps, then_g, else_g)?;
    fb.finish(&outs)
}

fn same_type(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape()
}

/// The condition: a Bool input, or `Lt`/`Ge` of an I32 input and a constant, reshaped.
fn condition(ctx: &mut Ctx, fb: &mut FuncBuilder) -> Result<Value> {
    let shape = cond_shape(&mut ctx.rng);
    if ctx.rng.chance(0.3) {
        let k = fb.arg(Tensor::scalar(ctx.rng.int_in(-3, 3) as i32))?;
        let c = fb.gb.constant(&Tensor::scalar(ctx.rng.int_in(-3, 3) as i32))?;
        let op = if ctx.rng.chance(0.5) { CompareOp::Lt } else { CompareOp::Ge };
        let b = fb.gb.compare(op, k, c)?;
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        return fb.gb.reshape(b, &dims);
    }
    let flag = u8::from(ctx.rng.chance(0.5));
    fb.arg(Tensor::from_bytes(DType::Bool, &shape, vec![flag])?)
}

/// The branches' output types: the then branch's (at most three, the first with `dtype`),
/// sometimes plus a capture's type (the then branch passes that capture through).
fn targets(ctx: &mut Ctx, dtype: DType, then_f: &Func, captures: &[Tensor]) -> Vec<Target> {
    let outs = then_f.output_types();
    let mut t: Vec<Target> = outs.iter().take(3).map(|ty| Target::Result(ty.clone())).collect();
    if let Some(Target::Result(first)) = t.first_mut() {
        first.dtype = dtype;
    }
    if !captures.is_empty() && ctx.rng.chance(0.3) {
        t.push(Target::Capture(ctx.rng.below(captures.len())));
    }
    // The passed-through capture sometimes comes first among the other outputs.
    if t.len() > 2 && ctx.rng.chance(0.5) {
        t[1..].reverse();
    }
    t
}

/// One output of the branches.
#[derive(Clone, Debug)]
enum Target {
    /// A result fitted to this type.
    Result(TensorType),
    /// Capture `k`'s type: the then branch returns the capture itself.
    Capture(usize),
}

/// A branch graph: declares every capture, runs `f` on those `bind` selects, fits its results
/// to the targets (`is_then`: the branch whose types the targets follow).
fn branch(
    ctx: &mut Ctx,
    f: &Func,
    bind: &[usize],
    captures: &[Tensor],
    targets: &[Target],
    is_then: bool,
) -> Result<Graph> {
    let mut fb = FuncBuilder::new();
    let caps = captures.iter().map(|t| fb.arg(t.clone())).collect::<Result<Vec<_>>>()?;
    let ins: Vec<Value> = bind.iter().filter_map(|&k| caps.get(k).copied()).collect();
    let outs = fb.call(f, &ins)?;
    let exact = f.class().exact;
    let mut results = Vec::with_capacity(targets.len());
    for (j, target) in targets.iter().enumerate() {
        let ty = match target {
            Target::Result(ty) => ty.clone(),
            Target::Capture(k) => match captures.get(*k) {
                Some(_) if is_then => {
                    results.extend(caps.get(*k));
                    continue;
                }
                Some(t) => TensorType::new(t.dtype(), t.shape()),
                None => backend_api::bail!(Arity, "capture {k} of {}", captures.len()),
            },
        };
        let Some(&src) = outs.get(j % outs.len().max(1)) else { backend_api::bail!(Arity, "a body without outputs") };
        results.push(adapt(&mut fb, &mut ctx.rng, src, exact, &ty)?);
    }
    Ok(fb.finish(&results)?.graph)
}
