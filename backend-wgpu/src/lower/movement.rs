//! Transpose, Narrow, Concat, Expand, Reverse, Pad (§2.3): each is one or more strided copies of
//! raw element bits (`shaders::movement`). A copy walks an index space whose axis k has extent
//! `dim`, writing destination element `dbase + Σ c_k·ds_k` from source element
//! `sbase + Σ q_k·ss_k`, where `q_k` is the coordinate mapped through the pad rule (the identity
//! for every op but Pad). Every op but Concat walks its output; Concat dispatches one copy per
//! input, each walking that input and writing its slice of the output.
//!
//! Mergeable axes are collapsed so common cases (contiguous slices, a transpose of two blocks)
//! run at rank 1 or 2, and a copy that turns out to read one contiguous run of its source into
//! the whole output (the identity, a leading-axis Narrow) becomes an alias of that window.

use super::builder::{tensor_bytes, u32_of, vec4s, Buf, Kernel, Lower, Operand};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{NarrowAttrs, PadAttrs, PadMode};
use backend_api::shape::{broadcast_strides, strides};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::movement::{fill_module, module, MovementParams, Width};
use shaders::params::Params;

/// The kernel's `mode` for positions outside the source: the constant (or no padding at all).
const MODE_CONSTANT: u32 = 0;
/// numpy `reflect`.
const MODE_REFLECT: u32 = 1;
/// Replicate the edge.
const MODE_EDGE: u32 = 2;

/// Transpose of `x` by `perm` into `out`: `out.dims[i] = x.dims[perm[i]]`.
pub fn transpose(b: &mut Lower<'_>, perm: &[usize], x: &Operand, out: &Operand) -> Result<()> {
    let c = transpose_map(&x.dims, perm, &out.dims)?;
    run(b, &[x], vec![c], PadRule::NONE, out)
}

/// Narrow of `x` (`a.len` elements from `a.start` every `a.step` along `a.axis`) into `out`.
pub fn narrow(b: &mut Lower<'_>, a: &NarrowAttrs, x: &Operand, out: &Operand) -> Result<()> {
    let c = narrow_map(&x.dims, a, &out.dims)?;
    run(b, &[x], vec![c], PadRule::NONE, out)
}

/// Concat of `xs` along `axis` into `out`: one copy per non-empty input.
pub fn concat(b: &mut Lower<'_>, axis: usize, xs: &[&Operand], out: &Operand) -> Result<()> {
    let copies = concat_map(xs, axis, &out.dims)?;
    run(b, xs, copies, PadRule::NONE, out)
}

/// Expand (broadcast) of `x` to `out`'s dims.
pub fn expand(b: &mut Lower<'_>, x: &Operand, out: &Operand) -> Result<()> {
    let c = expand_map(&x.dims, &out.dims)?;
    run(b, &[x], vec![c], PadRule::NONE, out)
}

/// Reverse of `x` along `axes` into `out` (same dims).
pub fn reverse(b: &mut Lower<'_>, axes: &[usize], x: &Operand, out: &Operand) -> Result<()> {
    ensure!(x.dims == out.dims, Shape, "Reverse of {:?} cannot write {:?}", x.dims, out.dims);
    let c = reverse_map(&x.dims, axes)?;
    run(b, &[x], vec![c], PadRule::NONE, out)
}

/// Pad of `x` by `a.pads_begin` / `a.pads_end` with `a.mode` into `out`.
pub fn pad(b: &mut Lower<'_>, a: &PadAttrs, x: &Operand, out: &Operand) -> Result<()> {
    let c = pad_map(&x.dims, a, &out.dims)?;
    run(b, &[x], vec![c], pad_rule(a.mode, x.dtype), out)
}

/// `x`'s element bits into `out` (same dtype and element count, any dims): an alias where `out`
/// can be `x`'s memory, else one copy kernel. Other families use it for identities (a Cast to the
/// same dtype).
pub fn copy(b: &mut Lower<'_>, x: &Operand, out: &Operand) -> Result<()> {
    let n = x.numel();
    ensure!(n == out.numel(), Shape, "a copy of {:?} cannot fill {:?}", x.dims, out.dims);
    run(b, &[x], vec![Strided::walking(0, vec![Axis::plain(n, 1, 1)])], PadRule::NONE, out)
}

/// What a copy writes where its coordinate falls outside the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PadRule {
    /// The kernel's mode (`MODE_*`).
    mode: u32,
    /// The pad constant's bits (`MODE_CONSTANT`).
    fill: [u32; 2],
}

impl PadRule {
    /// No padding (every coordinate is inside the source).
    const NONE: PadRule = PadRule { mode: MODE_CONSTANT, fill: [0, 0] };
}

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

/// One dispatch: source `input` (of the builder's sources) copied through an index map into the
/// output.
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

    /// The axes' dims are an operand's (checked when it was made); saturating so nothing wraps.
    fn numel(&self) -> usize {
        self.axes.iter().fold(1usize, |n, a| n.saturating_mul(a.dim))
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
                let scaled = |s: i64| i64::try_from(a.dim).ok().and_then(|d| s.checked_mul(d));
                let strides_merge = scaled(a.ss) == Some(o.ss) && scaled(a.ds) == Some(o.ds);
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

    /// The source element this copy starts at when it reads consecutive source elements, in
    /// order, into the whole `n`-element output: its output is then that window of the source.
    fn contiguous_start(&self, n: usize) -> Option<usize> {
        let contiguous = match self.axes.as_slice() {
            [] => true,
            [a] => a.unpadded() && a.ss == 1 && a.ds == 1,
            _ => false,
        };
        if !contiguous || self.dbase != 0 || self.numel() != n {
            return None;
        }
        usize::try_from(self.sbase).ok()
    }
}

/// (Zero +) one strided copy per non-empty copy of `srcs` into `out`, or an alias.
fn run(b: &mut Lower<'_>, srcs: &[&Operand], copies: Vec<Strided>, rule: PadRule, out: &Operand) -> Result<()> {
    let d = out.dtype;
    if out.numel() == 0 {
        return Ok(());
    }
    for x in srcs.iter().copied().chain([out]) {
        ensure!(x.dtype == d, DType, "movement input {} differs from output dtype {d}", x.dtype);
        u32_of(x.numel(), "elements")?;
    }
    let copies: Vec<Strided> =
        copies.into_iter().filter(|c| c.numel() > 0).map(|c| c.collapsed(rule.mode == MODE_CONSTANT)).collect();
    if let [c] = copies.as_slice() {
        if alias_run(b, c, srcs, out)? {
            return Ok(());
        }
    }
    if Width::of(d).is_packed() {
        b.zero(out)?;
    }
    let device = |e: String| Error::new(ErrorKind::Device, format!("movement shader: {e}"));
    for c in &copies {
        let Some(x) = srcs.get(c.input) else { bail!(Arity, "a copy reads source {}, of {}", c.input, srcs.len()) };
        // Only Pad reaches here with an empty source: then every element is the constant.
        let (source, mut bindings) = if x.numel() == 0 {
            (fill_module(d).map_err(device)?, vec![])
        } else {
            (module(d).map_err(device)?, vec![(x.window, BindKind::Read)])
        };
        bindings.push((out.window, BindKind::Write));
        let p = params(c, rule)?;
        b.push(Kernel { source, bindings, params: p.to_bytes(), grid: Grid::Threads(u64::from(p.n)), flops: None });
    }
    Ok(())
}

/// Declares `out` an alias of the window of its source that `c` copies whole, when `c` is such a
/// copy and the window may be aliased: `out` is a node output, the source is not scratch (freed
/// with the node), and the window starts on the device's storage offset alignment (later kernels
/// bind it). Returns whether it did.
fn alias_run(b: &mut Lower<'_>, c: &Strided, srcs: &[&Operand], out: &Operand) -> Result<bool> {
    let (Some(x), Some(start)) = (srcs.get(c.input), c.contiguous_start(out.numel())) else { return Ok(false) };
    if !matches!(out.window.buf, Buf::Out(_)) || out.window.offset != 0 || matches!(x.window.buf, Buf::Temp(_)) {
        return Ok(false);
    }
    let align = u64::from(b.caps().limits.min_storage_buffer_offset_alignment.max(4));
    let offset = x.window.offset.checked_add(tensor_bytes(x.dtype, &[start])?);
    if offset.is_none_or(|o| !o.is_multiple_of(align)) {
        return Ok(false);
    }
    b.alias(out, &x.slice(start, out.dims.clone())?)?;
    Ok(true)
}

/// A stride or extent as a signed element count. Every tensor has fewer than 2^32 elements
/// (checked before any kernel is made), so the saturation never happens.
fn st(s: usize) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}

fn transpose_map(x: &[usize], perm: &[usize], out: &[usize]) -> Result<Strided> {
    let r = x.len();
    let mut seen = vec![false; r];
    for &p in perm {
        ensure!(p < r && !seen[p], Axis, "Transpose perm {perm:?} is not a permutation of 0..{r}");
        seen[p] = true;
    }
    ensure!(perm.len() == r && out.len() == r, Axis, "Transpose perm {perm:?} does not fit {x:?} -> {out:?}");
    let fits = perm.iter().zip(out).all(|(&p, &o)| x[p] == o);
    ensure!(fits, Shape, "Transpose of {x:?} by {perm:?} cannot write {out:?}");
    let (xs, os) = (strides(x), strides(out));
    Ok(Strided::walking(0, (0..r).map(|i| Axis::plain(out[i], st(xs[perm[i]]), st(os[i]))).collect()))
}

fn narrow_map(x: &[usize], a: &NarrowAttrs, out: &[usize]) -> Result<Strided> {
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

fn concat_map(xs: &[&Operand], axis: usize, out: &[usize]) -> Result<Vec<Strided>> {
    ensure!(axis < out.len(), Axis, "Concat axis {axis} does not fit output {out:?}");
    let os = strides(out);
    let mut offset = 0usize;
    let mut copies = Vec::with_capacity(xs.len());
    for (k, x) in xs.iter().map(|x| &x.dims).enumerate() {
        ensure!(x.len() == out.len(), Shape, "Concat input {k} {x:?} does not fit output {out:?}");
        let xst = strides(x);
        let axes = (0..x.len()).map(|i| Axis::plain(x[i], st(xst[i]), st(os[i]))).collect();
        copies.push(Strided { dbase: st(offset * os[axis]), ..Strided::walking(k, axes) });
        offset += x[axis];
    }
    ensure!(offset == out[axis], Shape, "Concat inputs sum to {offset} on axis {axis}, output has {}", out[axis]);
    Ok(copies)
}

fn expand_map(x: &[usize], out: &[usize]) -> Result<Strided> {
    let fits = x.len() <= out.len() && x.iter().rev().zip(out.iter().rev()).all(|(&a, &b)| a == b || a == 1);
    ensure!(fits, Shape, "Expand of {x:?} to {out:?}: not broadcastable");
    let (bs, os) = (broadcast_strides(x, out), strides(out));
    Ok(Strided::walking(0, (0..out.len()).map(|i| Axis::plain(out[i], st(bs[i]), st(os[i]))).collect()))
}

fn reverse_map(x: &[usize], axes: &[usize]) -> Result<Strided> {
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

fn pad_map(x: &[usize], a: &PadAttrs, out: &[usize]) -> Result<Strided> {
    let r = x.len();
    let fits = a.pads_begin.len() == r && a.pads_end.len() == r && out.len() == r;
    ensure!(fits, Attribute, "Pad of {x:?} to {out:?}: pads {:?} / {:?} need {r} entries", a.pads_begin, a.pads_end);
    let (xs, os) = (strides(x), strides(out));
    let axes =
        (0..r).map(|i| Axis { dim: out[i], lo: a.pads_begin[i], sdim: x[i], ss: st(xs[i]), ds: st(os[i]) }).collect();
    Ok(Strided::walking(0, axes))
}

/// The pad rule of `m`: for `Constant`, the value's bits in `d` (Cast rules from F64).
fn pad_rule(m: PadMode, d: DType) -> PadRule {
    match m {
        PadMode::Constant { value } => PadRule { mode: MODE_CONSTANT, fill: fill_bits(value, d) },
        PadMode::Reflect => PadRule { mode: MODE_REFLECT, fill: [0, 0] },
        PadMode::Edge => PadRule { mode: MODE_EDGE, fill: [0, 0] },
    }
}

/// `value` converted to `d` by the Cast rules (§2.2.6) from F64, as little-endian words (the low
/// bits of word 0 for narrower dtypes). Rust's float→int `as` truncates toward zero, saturates and
/// maps NaN to 0, which is exactly the Cast rule; f64→f32 `as` rounds to nearest even.
fn fill_bits(value: f64, d: DType) -> [u32; 2] {
    match d {
        DType::F32 => [(value as f32).to_bits(), 0],
        DType::F16 => [round_to_small_float(value, 10, 5), 0],
        DType::BF16 => [round_to_small_float(value, 7, 8), 0],
        DType::F64 => words64(value.to_bits()),
        DType::I64 => words64(value as i64 as u64),
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

/// `x` as little-endian (low, high) u32 words.
fn words64(x: u64) -> [u32; 2] {
    let [a, b, c, d, e, f, g, h] = x.to_le_bytes();
    [u32::from_le_bytes([a, b, c, d]), u32::from_le_bytes([e, f, g, h])]
}

fn limit(what: &str) -> Error {
    Error::new(ErrorKind::DeviceLimit, format!("{what} does not fit 32-bit indexing"))
}

/// `v` as the kernel's two's-complement u32: every tensor has fewer than 2^32 elements (checked),
/// so the kernel's wrapping sums land on the true index.
fn wrap(v: i64) -> u32 {
    // rem_euclid lands in [0, 2^32), which always fits.
    u32::try_from(v.rem_euclid(1 << 32)).unwrap_or(0)
}

/// The uniform of one copy.
fn params(c: &Strided, rule: PadRule) -> Result<MovementParams> {
    let rank = c.axes.len();
    ensure!(rank <= 8, DeviceLimit, "copy of rank {rank} exceeds the kernel's 8 dims");
    let field = |f: fn(&Axis) -> usize, what: &str| vec4s::<2>(&c.axes.iter().map(f).collect::<Vec<_>>(), what);
    let signed = |f: fn(&Axis) -> i64| {
        let mut v = [[0u32; 4]; 2];
        for (slot, a) in v.as_flattened_mut().iter_mut().zip(&c.axes) {
            *slot = wrap(f(a));
        }
        v
    };
    Ok(MovementParams {
        n: u32_of(c.numel(), "elements")?,
        rank: u32_of(rank, "axes")?,
        mode: rule.mode,
        sbase: wrap(c.sbase),
        dbase: wrap(c.dbase),
        fill: [rule.fill[0], rule.fill[1], 0, 0],
        dims: field(|a| a.dim, "dims")?,
        lo: field(|a| a.lo, "pads")?,
        sdim: field(|a| a.sdim, "source dims")?,
        ss: signed(|a| a.ss),
        ds: signed(|a| a.ds),
        ..MovementParams::default()
    })
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
        assert_eq!(c.collapsed(true).contiguous_start(24), Some(0));
        // Constant: a padded outer axis merges with an unpadded inner one.
        let padded = Axis { dim: 4, lo: 1, sdim: 2, ss: 3, ds: 3 };
        let c = Strided::walking(0, vec![padded, Axis::plain(3, 1, 1)]);
        assert_eq!(c.clone().collapsed(true).axes, vec![Axis { dim: 12, lo: 3, sdim: 6, ss: 1, ds: 1 }]);
        assert_eq!(c.collapsed(false).axes.len(), 2);
        // A size-1 axis made of padding only is kept.
        let c = Strided::walking(0, vec![Axis { dim: 1, lo: 1, sdim: 0, ss: 1, ds: 1 }]);
        assert_eq!(c.collapsed(true).axes.len(), 1);
    }

    fn lowered(f: impl FnOnce(&mut Lower<'_>) -> Result<()>) -> crate::lower::Lowering {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        f(&mut b).unwrap();
        b.finish()
    }

    fn operand(buf: Buf, dims: &[usize]) -> Operand {
        Operand::whole(buf, DType::F32, dims.to_vec()).unwrap()
    }

    #[test]
    fn leading_axis_narrows_alias_aligned_windows() {
        let x = operand(Buf::In(0), &[4, 64]);
        let out = operand(Buf::Out(0), &[1, 64]);
        // Row 2 starts at byte 512: a multiple of the 256-byte alignment.
        let a = NarrowAttrs { axis: 0, start: 2, len: 1, step: 1 };
        let l = lowered(|b| narrow(b, &a, &x, &out));
        assert!(l.kernels().is_empty());
        assert_eq!(l.aliases, vec![Some(x.slice(128, vec![1, 64]).unwrap().window)]);
        // Row 1 of a [4, 32] tensor starts at byte 128, off the alignment: it is copied.
        let (x, out) = (operand(Buf::In(0), &[4, 32]), operand(Buf::Out(0), &[1, 32]));
        let a = NarrowAttrs { axis: 0, start: 1, len: 1, step: 1 };
        let l = lowered(|b| narrow(b, &a, &x, &out));
        assert_eq!((l.kernels().len(), l.aliases.clone()), (1, vec![None]));
    }

    #[test]
    fn identities_alias_inputs_but_copy_into_scratch() {
        let x = operand(Buf::In(0), &[3, 5]);
        let l = lowered(|b| transpose(b, &[0, 1], &x, &operand(Buf::Out(0), &[3, 5])));
        assert_eq!((l.kernels().len(), l.aliases), (0, vec![Some(x.window)]));
        let l = lowered(|b| {
            let t = b.temp(DType::F32, vec![3, 5])?;
            transpose(b, &[0, 1], &x, &t)
        });
        assert_eq!((l.kernels().len(), l.aliases), (1, vec![None]));
    }

    #[test]
    fn reversed_strides_wrap_in_the_params() {
        let (x, out) = (operand(Buf::In(0), &[3, 5]), operand(Buf::Out(0), &[3, 5]));
        let l = lowered(|b| reverse(b, &[1], &x, &out));
        let ks = l.kernels();
        let [k] = ks.as_slice() else { panic!("one copy expected") };
        let p: MovementParams = bytemuck::pod_read_unaligned(&k.params);
        assert_eq!((p.n, p.rank, p.sbase), (15, 2, 4));
        assert_eq!(p.ss[0][..2], [5, u32::MAX]);
        assert_eq!(p.ds[0][..2], [5, 1]);
    }

    #[test]
    fn mismatched_shapes_are_refused() {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let x = operand(Buf::In(0), &[3, 5]);
        assert!(transpose(&mut b, &[1, 0], &x, &operand(Buf::Out(0), &[3, 5])).is_err());
        assert!(reverse(&mut b, &[0], &x, &operand(Buf::Out(0), &[5, 3])).is_err());
        assert!(copy(&mut b, &x, &operand(Buf::Out(0), &[14])).is_err());
    }
}
