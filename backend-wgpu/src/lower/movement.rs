//! Transpose, Narrow, Concat, Expand, Reverse, Pad: each is one or more strided copies of raw
//! element bits (`shaders::movement`). A copy walks an index space whose axis k has extent
//! `dim`, writing destination element `dbase + Σ c_k·ds_k` from source element
//! `sbase + Σ q_k·ss_k`, where `q_k` is the coordinate mapped through the pad rule (the identity
//! for every op but Pad). Every op but Concat walks its output; Concat dispatches one copy per
//! input, each walking that input and writing its slice of the output.
//!
//! Mergeable axes are collapsed so common cases (contiguous slices, a transpose of two blocks)
//! run at rank 1 or 2, and a copy that turns out to be the identity becomes an alias.

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{NarrowAttrs, Op, PadAttrs, PadMode};
use backend_api::shape::{broadcast_strides, numel, strides};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::movement::{fill_module, module, Width};

/// The kernel's `mode` for positions outside the source: the constant (or no padding at all).
const MODE_CONSTANT: u32 = 0;
/// numpy `reflect`.
const MODE_REFLECT: u32 = 1;
/// Replicate the edge.
const MODE_EDGE: u32 = 2;

/// One axis of a copy's index space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Axis {
    /// Extent of the index space.
    dim: usize,
    /// Padding before the source (Pad only).
    lo: usize,
    /// Extent of the source; equal to `dim` on unpadded axes.
    sdim: usize,
    /// Source stride in elements (negative when reversed).
    ss: i64,
    /// Destination stride in elements.
    ds: i64,
}

impl Axis {
    fn plain(dim: usize, ss: i64, ds: i64) -> Axis {
        Axis { dim, lo: 0, sdim: dim, ss, ds }
    }

    fn unpadded(&self) -> bool {
        self.lo == 0 && self.sdim == self.dim
    }
}

/// One dispatch: input `input` copied through an index map into output 0.
#[derive(Clone, Debug, PartialEq)]
struct Strided {
    input: usize,
    axes: Vec<Axis>,
    sbase: i64,
    dbase: i64,
}

impl Strided {
    fn walking(input: usize, axes: Vec<Axis>) -> Strided {
        Strided { input, axes, sbase: 0, dbase: 0 }
    }

    fn numel(&self) -> usize {
        self.axes.iter().map(|a| a.dim).product()
    }

    /// Drops size-1 unpadded axes and merges an axis into its outer neighbour when both strides
    /// allow it and the pad rule survives: the inner axis must be unpadded, and the outer one too
    /// unless the mode is `Constant` (a constant border of the outer axis is a contiguous run of
    /// the merged one; a reflected or replicated one is not).
    fn collapsed(mut self, constant: bool) -> Strided {
        let mut out: Vec<Axis> = Vec::with_capacity(self.axes.len());
        for a in self.axes {
            if a.dim == 1 && a.unpadded() {
                continue;
            }
            if let Some(o) = out.last_mut() {
                let d = a.dim as i64;
                let strides_merge = o.ss == a.ss * d && o.ds == a.ds * d;
                if strides_merge && a.unpadded() && (constant || o.unpadded()) {
                    *o = Axis { dim: o.dim * a.dim, lo: o.lo * a.dim, sdim: o.sdim * a.dim, ss: a.ss, ds: a.ds };
                    continue;
                }
            }
            out.push(a);
        }
        self.axes = out;
        self
    }

    /// Whether this copy reproduces its input's memory as the whole output (`n` elements).
    fn is_identity(&self, in_numel: usize, n: usize) -> bool {
        let contiguous = match self.axes.as_slice() {
            [] => true,
            [a] => a.unpadded() && a.ss == 1 && a.ds == 1,
            _ => false,
        };
        contiguous && self.sbase == 0 && self.dbase == 0 && self.numel() == n && in_numel == n
    }
}

/// Lowers a movement node to (zero +) one strided copy per non-empty source, or an alias.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    let Some((dtype, out_dims)) = ctx.outputs.first().cloned() else { bail!(Arity, "movement op without output") };
    let n = numel(&out_dims);
    let empty = Lowered::Kernels { temps: vec![], kernels: vec![] };
    if n == 0 {
        return Ok(empty);
    }
    for (d, dims) in ctx.inputs.iter().chain(&ctx.outputs) {
        ensure!(*d == dtype, DType, "movement input {d} differs from output dtype {dtype}");
        u32_of(numel(dims), "element count")?;
    }
    let (copies, mode, fill) = plan(ctx, &out_dims)?;
    let copies: Vec<Strided> =
        copies.into_iter().filter(|c| c.numel() > 0).map(|c| c.collapsed(mode == MODE_CONSTANT)).collect();
    if let [c] = copies.as_slice() {
        let in_numel = ctx.inputs.get(c.input).map_or(0, |(_, d)| numel(d));
        if c.is_identity(in_numel, n) {
            return Ok(Lowered::Alias(c.input));
        }
    }
    let device = |e: String| Error::new(ErrorKind::Device, e);
    let mut kernels = Vec::with_capacity(copies.len() + 1);
    if Width::of(dtype).is_packed() {
        kernels.push(zero_kernel(Buf::Out(0), words(dtype, n)));
    }
    for c in &copies {
        // Only Pad reaches here with an empty source: then every element is the constant.
        let source_empty = ctx.inputs.get(c.input).is_none_or(|(_, d)| numel(d) == 0);
        let (source, mut bindings) = if source_empty {
            (fill_module(dtype).map_err(device)?, vec![])
        } else {
            (module(dtype).map_err(device)?, vec![(Buf::In(c.input), BindKind::Read)])
        };
        bindings.push((Buf::Out(0), BindKind::Write));
        kernels.push(Kernel {
            source,
            bindings,
            params: params(c, mode, fill)?,
            grid: Grid::Threads(c.numel() as u64),
        });
    }
    Ok(Lowered::Kernels { temps: vec![], kernels })
}

/// The copies of the node, its pad mode and the pad constant's bits.
fn plan(ctx: &LowerCtx<'_>, out: &[usize]) -> Result<(Vec<Strided>, u32, [u32; 2])> {
    let Some((dtype, x)) = ctx.inputs.first() else { bail!(Arity, "movement op without inputs") };
    let none = (MODE_CONSTANT, [0, 0]);
    let (copies, (mode, fill)) = match &ctx.node.op {
        Op::Transpose { perm } => (vec![transpose(x, perm, out)?], none),
        Op::Narrow(a) => (vec![narrow(x, a, out)?], none),
        Op::Concat { axis } => (concat(ctx, *axis, out)?, none),
        Op::Expand { .. } => (vec![expand(x, out)?], none),
        Op::Reverse { axes } => (vec![reverse(x, axes)?], none),
        Op::Pad(a) => (vec![pad(x, a, out)?], pad_mode(a.mode, *dtype)),
        other => bail!(Unsupported, "{} is not a movement op", backend_api::spec::op_label(other)),
    };
    Ok((copies, mode, fill))
}

/// Signed element stride.
fn st(s: usize) -> i64 {
    s as i64
}

fn transpose(x: &[usize], perm: &[usize], out: &[usize]) -> Result<Strided> {
    let r = x.len();
    let mut seen = vec![false; r];
    for &p in perm {
        ensure!(p < r && !seen[p], Axis, "Transpose perm {perm:?} is not a permutation of 0..{r}");
        seen[p] = true;
    }
    ensure!(perm.len() == r && out.len() == r, Axis, "Transpose perm {perm:?} does not fit {x:?} -> {out:?}");
    let (xs, os) = (strides(x), strides(out));
    Ok(Strided::walking(0, (0..r).map(|i| Axis::plain(out[i], st(xs[perm[i]]), st(os[i]))).collect()))
}

fn narrow(x: &[usize], a: &NarrowAttrs, out: &[usize]) -> Result<Strided> {
    let r = x.len();
    ensure!(a.axis < r && out.len() == r, Axis, "Narrow axis {} does not fit {x:?} -> {out:?}", a.axis);
    let (xs, os) = (strides(x), strides(out));
    // With fewer than two elements the step is never applied (and may be huge).
    let step = if a.len > 1 { a.step } else { 1 };
    let axes = (0..r)
        .map(|i| {
            let ss = if i == a.axis { xs[i].checked_mul(step) } else { Some(xs[i]) };
            Ok(Axis::plain(out[i], st(ss.ok_or_else(|| limit("Narrow stride"))?), st(os[i])))
        })
        .collect::<Result<Vec<_>>>()?;
    let sbase = a.start.checked_mul(xs[a.axis]).ok_or_else(|| limit("Narrow start"))?;
    Ok(Strided { sbase: st(sbase), ..Strided::walking(0, axes) })
}

fn concat(ctx: &LowerCtx<'_>, axis: usize, out: &[usize]) -> Result<Vec<Strided>> {
    ensure!(axis < out.len(), Axis, "Concat axis {axis} does not fit output {out:?}");
    let os = strides(out);
    let mut offset = 0usize;
    let mut copies = Vec::with_capacity(ctx.inputs.len());
    for (k, (_, x)) in ctx.inputs.iter().enumerate() {
        ensure!(x.len() == out.len(), Shape, "Concat input {k} {x:?} does not fit output {out:?}");
        let xs = strides(x);
        let axes = (0..x.len()).map(|i| Axis::plain(x[i], st(xs[i]), st(os[i]))).collect();
        copies.push(Strided { dbase: st(offset * os[axis]), ..Strided::walking(k, axes) });
        offset += x[axis];
    }
    ensure!(offset == out[axis], Shape, "Concat inputs sum to {offset} on axis {axis}, output has {}", out[axis]);
    Ok(copies)
}

fn expand(x: &[usize], out: &[usize]) -> Result<Strided> {
    let fits = x.len() <= out.len() && x.iter().rev().zip(out.iter().rev()).all(|(&a, &b)| a == b || a == 1);
    ensure!(fits, Shape, "Expand of {x:?} to {out:?}: not broadcastable");
    let (bs, os) = (broadcast_strides(x, out), strides(out));
    Ok(Strided::walking(0, (0..out.len()).map(|i| Axis::plain(out[i], st(bs[i]), st(os[i]))).collect()))
}

fn reverse(x: &[usize], axes: &[usize]) -> Result<Strided> {
    ensure!(axes.iter().all(|&a| a < x.len()), Axis, "Reverse axes {axes:?} out of range for {x:?}");
    let (xs, mut sbase) = (strides(x), 0i64);
    let mut map: Vec<Axis> = (0..x.len()).map(|i| Axis::plain(x[i], st(xs[i]), st(xs[i]))).collect();
    for &a in axes {
        if x[a] > 0 {
            sbase += st(x[a] - 1) * st(xs[a]);
        }
        map[a].ss = -st(xs[a]);
    }
    Ok(Strided { sbase, ..Strided::walking(0, map) })
}

fn pad(x: &[usize], a: &PadAttrs, out: &[usize]) -> Result<Strided> {
    let r = x.len();
    let fits = a.pads_begin.len() == r && a.pads_end.len() == r && out.len() == r;
    ensure!(fits, Attribute, "Pad of {x:?} to {out:?}: pads {:?} / {:?} need {r} entries", a.pads_begin, a.pads_end);
    let (xs, os) = (strides(x), strides(out));
    let axes =
        (0..r).map(|i| Axis { dim: out[i], lo: a.pads_begin[i], sdim: x[i], ss: st(xs[i]), ds: st(os[i]) }).collect();
    Ok(Strided::walking(0, axes))
}

/// The kernel mode of `m` and, for `Constant`, the value's bits in `d` (Cast rules from F64).
fn pad_mode(m: PadMode, d: DType) -> (u32, [u32; 2]) {
    match m {
        PadMode::Constant { value } => (MODE_CONSTANT, fill_bits(value, d)),
        PadMode::Reflect => (MODE_REFLECT, [0, 0]),
        PadMode::Edge => (MODE_EDGE, [0, 0]),
    }
}

/// `value` converted to `d` by the Cast rules (§2.2.6) from F64, as little-endian words (the low
/// bits of word 0 for narrower dtypes). Rust's float→int `as` truncates toward zero, saturates and
/// maps NaN to 0, which is exactly the Cast rule; f64→f32 `as` rounds to nearest even.
fn fill_bits(value: f64, d: DType) -> [u32; 2] {
    let split = |b: u64| [b as u32, (b >> 32) as u32];
    match d {
        DType::F32 => [(value as f32).to_bits(), 0],
        DType::F16 => [round_to_small_float(value, 10, 5), 0],
        DType::BF16 => [round_to_small_float(value, 7, 8), 0],
        DType::F64 => split(value.to_bits()),
        DType::I64 => split(value as i64 as u64),
        DType::I32 => [value as i32 as u32, 0],
        DType::I8 => [value as i8 as u8 as u32, 0],
        DType::U32 => [value as u32, 0],
        DType::U8 => [value as u8 as u32, 0],
        DType::Bool => [u32::from(value != 0.0), 0],
        DType::C64 => [(value as f32).to_bits(), 0.0f32.to_bits()],
    }
}

/// The bits of `x` rounded once (nearest, ties to even) to a binary format with `mbits` mantissa
/// and `ebits` exponent bits (F16: 10/5, BF16: 7/8); overflow gives ±∞, NaN a quiet NaN.
/// (Going through f32 would round twice.)
fn round_to_small_float(x: f64, mbits: u32, ebits: u32) -> u32 {
    let sign = if x.is_sign_negative() { 1u32 << (mbits + ebits) } else { 0 };
    let inf = ((1u32 << ebits) - 1) << mbits;
    if x.is_nan() {
        return sign | inf | (1 << (mbits - 1));
    }
    let a = x.abs();
    if a.is_infinite() {
        return sign | inf;
    }
    if a == 0.0 {
        return sign;
    }
    let bias = (1i32 << (ebits - 1)) - 1;
    // floor(log2 a) for normal f64s; f64 subnormals are far below every small format's range.
    let e = ((a.to_bits() >> 52) as i32).max(1) - 1023;
    // Exponent of one unit in the last place of the result (fixed in the subnormal range).
    let q = e.max(1 - bias) - mbits as i32;
    // Scaling by a power of two is exact, so this is the single rounding.
    let units = (a * pow2(-q)).round_ties_even() as i64;
    // Normal: (biased exponent − 1)·2^mbits + units, where units ∈ [2^mbits, 2^(mbits+1)]
    // (a carry bumps the exponent); subnormal: units alone (q fixed gives a zero prefix).
    let bits = (i64::from(q + mbits as i32 + bias - 1) << mbits) + units;
    if bits >= i64::from(inf) {
        return sign | inf;
    }
    sign | bits as u32
}

/// 2^k for k in the normal f64 exponent range, built from its bits.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023).clamp(1, 2046) as u64) << 52)
}

fn limit(what: &str) -> Error {
    Error::new(ErrorKind::DeviceLimit, format!("{what} does not fit 32-bit indexing"))
}

fn u32_of(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::new(ErrorKind::DeviceLimit, format!("{what} {v} does not fit 32 bits")))
}

/// Appends `v` as an `array<vec4<u32>, 2>` (8 entries, zero-padded).
fn push8(out: &mut Vec<u8>, v: impl Iterator<Item = u32>) {
    let mut vals: Vec<u32> = v.collect();
    vals.resize(8, 0);
    for x in vals {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// The uniform of one copy (layout of `Params` in `movement.wgsl`). Strides and bases are
/// written as two's-complement u32: every tensor has fewer than 2^32 elements (checked), so the
/// kernel's wrapping sums land on the true index.
fn params(c: &Strided, mode: u32, fill: [u32; 2]) -> Result<Vec<u8>> {
    ensure!(c.axes.len() <= 8, DeviceLimit, "copy of rank {} exceeds the kernel's 8 dims", c.axes.len());
    let mut p = Vec::with_capacity(176);
    let n = u32_of(c.numel(), "element count")?;
    let rank = c.axes.len() as u32;
    let wrap = |v: i64| v as u32;
    for w in [n, rank, mode, wrap(c.sbase), wrap(c.dbase), 0, 0, 0, fill[0], fill[1], 0, 0] {
        p.extend_from_slice(&w.to_le_bytes());
    }
    let field = |f: fn(&Axis) -> usize| c.axes.iter().map(|a| u32_of(f(a), "dim")).collect::<Result<Vec<_>>>();
    push8(&mut p, field(|a| a.dim)?.into_iter());
    push8(&mut p, field(|a| a.lo)?.into_iter());
    push8(&mut p, field(|a| a.sdim)?.into_iter());
    push8(&mut p, c.axes.iter().map(|a| wrap(a.ss)));
    push8(&mut p, c.axes.iter().map(|a| wrap(a.ds)));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_float_rounding_is_single() {
        // 1 + 2^-11 + 2^-40: f32 rounding first would land on the tie 1 + 2^-11 and then round
        // to even (1.0); the single rounding goes up to 1 + 2^-10.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(round_to_small_float(x, 10, 5), 0x3c01);
        assert_eq!(round_to_small_float(1.0 + 2f64.powi(-11), 10, 5), 0x3c00);
        assert_eq!(round_to_small_float(-1.5, 10, 5), 0xbe00);
        assert_eq!(round_to_small_float(65504.0, 10, 5), 0x7bff);
        assert_eq!(round_to_small_float(65520.0, 10, 5), 0x7c00);
        assert_eq!(round_to_small_float(-1e300, 10, 5), 0xfc00);
        assert_eq!(round_to_small_float(2f64.powi(-24), 10, 5), 0x0001);
        assert_eq!(round_to_small_float(2f64.powi(-25), 10, 5), 0x0000);
        assert_eq!(round_to_small_float(2f64.powi(-25) * 1.5, 10, 5), 0x0001);
        assert_eq!(round_to_small_float(2f64.powi(-14) * (1.0 - 2f64.powi(-11)), 10, 5), 0x0400);
        assert_eq!(round_to_small_float(-0.0, 10, 5), 0x8000);
        assert_eq!(round_to_small_float(3.0, 7, 8), 0x4040);
        assert_eq!(round_to_small_float(1e-300, 7, 8), 0);
        assert_eq!(round_to_small_float(f64::MAX, 7, 8), 0x7f80);
        assert_eq!(round_to_small_float(3.4e38, 7, 8), 0x7f80);
        assert_eq!(round_to_small_float(1.0 + 2f64.powi(-8), 7, 8), 0x3f80);
        assert_eq!(round_to_small_float(1.0 + 3.0 * 2f64.powi(-8), 7, 8), 0x3f82);
    }

    #[test]
    fn fill_bits_follow_cast_rules() {
        assert_eq!(fill_bits(-1.5, DType::I32), [(-1i32) as u32, 0]);
        assert_eq!(fill_bits(300.0, DType::U8), [255, 0]);
        assert_eq!(fill_bits(-3.0, DType::U32), [0, 0]);
        assert_eq!(fill_bits(-200.0, DType::I8), [0x80, 0]);
        assert_eq!(fill_bits(-2.0, DType::I64), [u32::MAX - 1, u32::MAX]);
        assert_eq!(fill_bits(0.5, DType::Bool), [1, 0]);
        assert_eq!(fill_bits(-0.0, DType::Bool), [0, 0]);
        assert_eq!(fill_bits(2.5, DType::C64), [2.5f32.to_bits(), 0]);
        let b = 0.1f64.to_bits();
        assert_eq!(fill_bits(0.1, DType::F64), [b as u32, (b >> 32) as u32]);
    }

    #[test]
    fn collapse_merges_contiguous_and_keeps_pads() {
        let c = Strided::walking(0, vec![Axis::plain(2, 12, 12), Axis::plain(3, 4, 4), Axis::plain(4, 1, 1)]);
        assert!(c.collapsed(true).is_identity(24, 24));
        // Constant: a padded outer axis merges with an unpadded inner one.
        let padded = Axis { dim: 4, lo: 1, sdim: 2, ss: 3, ds: 3 };
        let c = Strided::walking(0, vec![padded, Axis::plain(3, 1, 1)]);
        assert_eq!(c.clone().collapsed(true).axes, vec![Axis { dim: 12, lo: 3, sdim: 6, ss: 1, ds: 1 }]);
        assert_eq!(c.collapsed(false).axes.len(), 2);
        // A size-1 axis made of padding only is kept.
        let c = Strided::walking(0, vec![Axis { dim: 1, lo: 1, sdim: 0, ss: 1, ds: 1 }]);
        assert_eq!(c.collapsed(true).axes.len(), 1);
    }
}
