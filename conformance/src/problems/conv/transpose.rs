//! Generator for `ConvTranspose` (§2.9.2) on the geometry of `conv.rs`: `x` `[N, G·Cgi, *in]`,
//! `w` `[G·Cgi, Cgo, *k]`, output_padding below `max(stride, dilation)`, pads large enough that
//! the output loses rows at both ends, and empty inputs (`in_d = 0`, `Cin = 0`) whose output is the
//! bias. Magnitude: the same ConvTranspose of `|x|`, `|w|`, `|bias|` in F64.

use super::conv::{operand_values, Form, Geometry, WORK_CAP};
use crate::problem::{nth, Generated, ProblemBuilder};
use crate::problems::{per_dtype, skeleton, Skeleton, Variant};
use crate::shapes::{numel, MAX_NUMEL};
use crate::values::Rng;
use backend_api::op::ConvTransposeAttrs;
use backend_api::DType;
use proptest::prelude::*;

/// Variants for `ConvTranspose`.
pub fn variants(row: &str) -> Option<Vec<Variant>> {
    if row != "ConvTranspose" {
        return None;
    }
    per_dtype(row, |dt| {
        (skeleton(0..=0, 1, 3), 0..Form::ALL.len()).prop_map(move |(sk, f)| case(dt, &sk, Form::ALL[f])).boxed()
    })
}

/// `(in − 1)·stride − pads + extent + output_padding` of dim `d` (may be negative).
fn out_size(g: &Geometry, op: &[usize], d: usize) -> i64 {
    let a = &g.attrs;
    let i = |v: usize| v as i64;
    (i(g.input[d]) - 1) * i(a.stride[d]) - i(a.pads_begin[d]) - i(a.pads_end[d]) + i(g.extent(d)) + i(op[d])
}

/// The smallest input size of dim `d` with a non-negative output size.
fn floor(g: &Geometry, op: &[usize], d: usize) -> usize {
    let a = &g.attrs;
    let short = (a.pads_begin[d] + a.pads_end[d]) as i64 - (g.extent(d) + op[d]) as i64;
    // (in − 1)·stride ≥ short
    if short <= -(a.stride[d] as i64) {
        0
    } else {
        1 + (short.max(0) as usize).div_ceil(a.stride[d])
    }
}

fn geometry(rng: &mut Rng, form: Form) -> (Geometry, Vec<usize>) {
    let mut g = Geometry::draw(rng, form);
    let s = g.input.len();
    let op: Vec<usize> = (0..s)
        .map(|d| if rng.chance(0.3) { rng.below(g.attrs.stride[d].max(g.attrs.dilation[d])) } else { 0 })
        .collect();
    for d in 0..s {
        g.input[d] = rng.pick(&[0, 1, 2, 3, 5, 7, 9, 16]).max(floor(&g, &op, d));
    }
    loop {
        let out: Vec<usize> = (0..s).map(|d| out_size(&g, &op, d).max(0) as usize).collect();
        let (cin, cout) = (g.groups * g.cgi, g.groups * g.cgo);
        let work = numel(&[g.n, cin, numel(&g.input), g.cgo.max(1), numel(&g.kernel)]);
        let fits = work <= WORK_CAP
            && numel(&g.nc(cin, &g.input)) <= MAX_NUMEL
            && numel(&g.nc(cout, &out)) <= MAX_NUMEL
            && numel(&g.weight(cin, g.cgo)) <= MAX_NUMEL;
        if fits || !g.shrink(|g, d| floor(g, &op, d)) {
            return (g, op);
        }
    }
}

fn case(dtype: DType, sk: &Skeleton, form: Form) -> Generated {
    let mut rng = sk.rng();
    let (g, op) = geometry(&mut rng, form);
    let (cin, cout) = (g.groups * g.cgi, g.groups * g.cgo);
    let vals = operand_values();
    let rate = sk.rate / 10.0;
    let mut pb = ProblemBuilder::new();
    let x = pb.leaf(sk.kind(0), vals.tensor(&mut rng, dtype, &g.nc(cin, &g.input), rate)?)?;
    let w = pb.leaf(sk.kind(1), vals.tensor(&mut rng, dtype, &g.weight(cin, g.cgo), rate)?)?;
    let bias = match g.attrs.has_bias {
        true => Some(pb.leaf(sk.kind(2), vals.tensor(&mut rng, dtype, &[cout], rate)?)?),
        false => None,
    };
    let a = ConvTransposeAttrs { conv: g.attrs.clone(), output_padding: op };
    let y = pb.g().conv_transpose(x, w, bias, &a)?;
    pb.finish_with_magnitude(&[y], |gb, abs| {
        let b = if a.conv.has_bias { Some(nth(abs, 2)?) } else { None };
        Ok(vec![gb.conv_transpose(nth(abs, 0)?, nth(abs, 1)?, b, &a)?])
    })
}
