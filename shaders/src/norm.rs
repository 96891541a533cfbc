//! Variants of the norm kernel family (§2.7.1 Softmax, §2.7.2 LogSoftmax, §2.7.3
//! SoftmaxCrossEntropy, §2.7.4 LayerNorm, §2.7.5 RmsNorm): one workgroup per row with workgroup
//! tree reductions. Rows of at most [`MAX_HELD`] elements have a single-pass form
//! ([`module_held`]): the row is read from memory once into registers (`K` per invocation) and
//! reduced with subgroup operations where the device has them, otherwise in workgroup memory in
//! two fixed-order levels; longer rows re-read the row for each pass ([`module`]).
//!
//! The fused residual norms (§2.7.8–2.7.9) are LayerNorm and RmsNorm variants whose row element
//! is the residual sum ([`module_fused`], in `fused`).
//!
//! A variant is ([`NormKind`], dtype, has beta). `norm_float.wgsl` is filled with the float type
//! the op computes in (f32 for F32/F16/BF16, f64 for F64) and its helpers; the kind picks the
//! kernel body. F64 uses the f64 exp/log of [`crate::MATH64`] (GLSL.std.450 has none).

use crate::{render, tensor_binding, trusted, Access, COMMON, MATH, MATH64};
use backend_api::DType;

/// Params and row addressing of the row kernels.
pub const NORM_COMMON: &str = include_str!("wgsl/norm_common.wgsl");
/// The float type `F` with its helpers and the workgroup reductions (every norm kernel).
pub const NORM_FLOAT: &str = include_str!("wgsl/norm_float.wgsl");
/// Softmax / LogSoftmax body.
pub const NORM_SOFTMAX: &str = include_str!("wgsl/norm_softmax.wgsl");
/// LayerNorm body.
pub const NORM_LAYER: &str = include_str!("wgsl/norm_layer.wgsl");
/// RmsNorm body.
pub const NORM_RMS: &str = include_str!("wgsl/norm_rms.wgsl");
/// Softmax / LogSoftmax single-pass body (row in registers).
pub const NORM_SOFTMAX_HELD: &str = include_str!("wgsl/norm_softmax_held.wgsl");
/// LayerNorm single-pass body.
pub const NORM_LAYER_HELD: &str = include_str!("wgsl/norm_layer_held.wgsl");
/// RmsNorm single-pass body.
pub const NORM_RMS_HELD: &str = include_str!("wgsl/norm_rms_held.wgsl");
/// Single-pass row reductions in workgroup memory (`row_sum`, `row_max`).
pub const NORM_REDUCE_WG: &str = include_str!("wgsl/norm_reduce_wg.wgsl");
/// Single-pass row reductions with subgroup operations (needs SUBGROUP).
pub const NORM_REDUCE_SUBGROUP: &str = include_str!("wgsl/norm_reduce_subgroup.wgsl");
/// SoftmaxCrossEntropy body.
pub const NORM_CROSS_ENTROPY: &str = include_str!("wgsl/norm_cross_entropy.wgsl");

pub mod channel;
mod fused;

pub use fused::{module_fused, Fusion};

crate::params! {
    /// `NormParams` of `norm_common.wgsl` (also bound by the SoftmaxCrossEntropy kernels).
    pub struct NormParams {
        /// Rows (one workgroup each).
        pub rows: u32,
        /// Elements per row.
        pub len: u32,
        /// Stride between a row's elements.
        pub inner: u32,
        /// Padding.
        pub pad0: u32,
        /// Epsilon of LayerNorm and RmsNorm.
        pub eps: f32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
        /// Padding.
        pub pad3: u32,
        /// Fused residual norms: collapsed axes of the bias broadcast (at most 8).
        pub bias_rank: u32,
        /// Padding.
        pub pad4: u32,
        /// Padding.
        pub pad5: u32,
        /// Padding.
        pub pad6: u32,
        /// Fused residual norms: the collapsed dims of x, innermost last.
        pub bias_dims: [[u32; 4]; 2],
        /// Fused residual norms: the bias's element stride along each collapsed dim (0 where it
        /// broadcasts).
        pub bias_strides: [[u32; 4]; 2],
    }
}

/// The params structs of this family (see [`mod@crate::params`]).
pub const PARAMS: &[crate::params::Layout] =
    &[<NormParams as crate::params::Params>::LAYOUT, <channel::ChannelNormParams as crate::params::Params>::LAYOUT];

/// Which op a variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NormKind {
    /// `e^(x - m) / Σ e^(x - m)` along an axis.
    Softmax,
    /// `x - m - ln Σ e^(x - m)` along an axis.
    LogSoftmax,
    /// `(x - μ) / √(σ² + eps) · γ + β` over the trailing axes.
    LayerNorm,
    /// `x / √(mean(x²) + eps) · γ + β` over the trailing axes.
    RmsNorm,
}

impl NormKind {
    /// Every kind.
    pub const ALL: [NormKind; 4] = [NormKind::Softmax, NormKind::LogSoftmax, NormKind::LayerNorm, NormKind::RmsNorm];

    /// Whether the kind takes `gamma` (and optionally `beta`).
    pub fn has_gamma(self) -> bool {
        matches!(self, NormKind::LayerNorm | NormKind::RmsNorm)
    }
}

/// The float helper slots of `norm_float.wgsl` for the computation type of `d`: (F, max, exp,
/// log, is_nan, is_inf, nan, inf). `None` for a non-float dtype.
pub(crate) fn float_helpers(d: DType) -> Option<[(&'static str, &'static str); 8]> {
    Some(match d {
        DType::F32 | DType::F16 | DType::BF16 => [
            ("F", "f32"),
            ("MAX", "max_f32(a, b)"),
            ("EXP", "exp_f32(x)"),
            // log of NaN is undefined in GLSL.std.450: keep it explicit
            ("LOG", "select(log(x), x, f32_is_nan(x))"),
            ("ISNAN", "f32_is_nan(x)"),
            ("ISINF", "f32_is_inf(x)"),
            ("NAN", "f32_nan()"),
            ("INF", "f32_inf(false)"),
        ],
        DType::F64 => [
            ("F", "f64"),
            ("MAX", "max_f64(a, b)"),
            ("EXP", "exp_f64(x)"),
            ("LOG", "log_f64(x)"),
            ("ISNAN", "f64_is_nan(x)"),
            ("ISINF", "f64_is_inf(x)"),
            ("NAN", "f64_nan()"),
            ("INF", "f64_inf(false)"),
        ],
        DType::I64 | DType::I32 | DType::I8 | DType::U32 | DType::U8 | DType::Bool | DType::C64 => return None,
    })
}

// Per-element statements of the single-pass kernels, repeated for k = 0..K with `#` replaced by k
// (registers v0, v1, ... rather than an indexed array: naga bounds loops and clamps indices, which
// keeps drivers from unrolling them into registers, see docs/DECISIONS.md on matmul unrolling).
const SOFTMAX_LOAD: &str = "let i# = lid + #u * WG;
    var v# = F(0);
    if (i# < p.len) {
        v# = ld_x(base + i# * p.inner);
        m = fmax(m, v#);
    }";
// e# keeps e^(x - m) for Softmax's store (LogSoftmax leaves it unused): one exp per element.
const SOFTMAX_SUM: &str = "var e# = F(0);
    if (i# < p.len) {
        e# = fexp(v# - m);
        s = s + e#;
    }";
const SOFTMAX_STORE: &str = "if (i# < p.len) {
        st_out(base + i# * p.inner, select(row_out(v# - m, e#, c), fnan(), bad));
    }";
const LAYER_LOAD: &str = "let i# = lid + #u * WG;
    var v# = F(0);
    if (i# < p.len) {
        v# = ld_x1(base + i#) - x0;
        s = s + v#;
    }";
const LAYER_SUM: &str = "if (i# < p.len) {
        let d# = v# - m;
        q = q + d# * d#;
    }";
const LAYER_STORE: &str = "if (i# < p.len) {
        st_out(base + i#, (v# - m) * inv * ld_g(i#) + row_beta(i#));
    }";
const RMS_LOAD: &str = "let i# = lid + #u * WG;
    var v# = F(0);
    if (i# < p.len) {
        v# = ld_x1(base + i#);
        s = s + v# * v#;
    }";
const RMS_STORE: &str = "if (i# < p.len) {
        st_out(base + i#, v# * rho * ld_g(i#) + row_beta(i#));
    }";

// The four-wide single-pass forms (F32 rows of a multiple of 4 elements starting 16-byte aligned):
// register v# holds vector lid + # WG of the row (elements 4 i# .. 4 i# + 3); per-lane arithmetic
// is the scalar form's, the four lanes are combined pairwise before the row reduction.
const SOFTMAX_LOAD4: &str = "let i# = lid + #u * WG;
    var v# = vec4<F>(F(0));
    if (i# < len4) {
        v# = x[base4 + i#];
        m = fmax(m, fmax(fmax(v#.x, v#.y), fmax(v#.z, v#.w)));
    }";
const SOFTMAX_SUM4: &str = "var e# = vec4<F>(F(0));
    if (i# < len4) {
        e# = vec4<F>(fexp(v#.x - m), fexp(v#.y - m), fexp(v#.z - m), fexp(v#.w - m));
        s = s + ((e#.x + e#.y) + (e#.z + e#.w));
    }";
const SOFTMAX_STORE4: &str = "if (i# < len4) {
        let d# = v# - m;
        let y# = vec4<F>(row_out(d#.x, e#.x, c), row_out(d#.y, e#.y, c), row_out(d#.z, e#.z, c), row_out(d#.w, e#.w, c));
        out[base4 + i#] = select(y#, vec4<F>(fnan()), bad);
    }";
const LAYER_LOAD4: &str = "let i# = lid + #u * WG;
    var v# = vec4<F>(F(0));
    if (i# < len4) {
        v# = ld4_x1(base4 + i#) - x0;
        s = s + ((v#.x + v#.y) + (v#.z + v#.w));
    }";
const LAYER_SUM4: &str = "if (i# < len4) {
        let d# = v# - m;
        let q# = d# * d#;
        q = q + ((q#.x + q#.y) + (q#.z + q#.w));
    }";
const LAYER_STORE4: &str = "if (i# < len4) {
        out[base4 + i#] = (v# - m) * inv * g[i#] + row_beta(i#);
    }";
const RMS_LOAD4: &str = "let i# = lid + #u * WG;
    var v# = vec4<F>(F(0));
    if (i# < len4) {
        v# = ld4_x1(base4 + i#);
        let q# = v# * v#;
        s = s + ((q#.x + q#.y) + (q#.z + q#.w));
    }";
const RMS_STORE4: &str = "if (i# < len4) {
        out[base4 + i#] = v# * rho * g[i#] + row_beta(i#);
    }";
// Prepended to the first load: the row in vectors (`base` is a multiple of 4: inner = 1 and
// len mod 4 = 0).
const VEC4_ROW: &str = "let len4 = p.len / 4u;
    let base4 = base / 4u;
    ";

/// `snippet` once per k in 0..`k`, `#` replaced by k.
fn unrolled(snippet: &str, k: u32) -> String {
    (0..k).map(|j| snippet.replace('#', &j.to_string())).collect::<Vec<_>>().join("\n    ")
}

/// Invocations of a row kernel's workgroup (`WG` of `common.wgsl`).
const WG: usize = 256;

/// The most elements per invocation the single-pass form holds in registers.
pub const MAX_HELD_PER_THREAD: u32 = 32;

/// The longest row the single-pass form takes: [`MAX_HELD_PER_THREAD`] per invocation.
pub const MAX_HELD: usize = WG * MAX_HELD_PER_THREAD as usize;

/// Elements per invocation (`K`, a power of two) of the single-pass form for rows of `len`
/// elements; `None` above [`MAX_HELD`] (those rows take the multi-pass [`module`]). Powers of two
/// keep the number of distinct pipelines small.
pub fn held_per_thread(len: usize) -> Option<u32> {
    if len > MAX_HELD {
        return None;
    }
    u32::try_from(len.div_ceil(WG).max(1).next_power_of_two()).ok()
}

/// Renders the complete module of one variant. Bindings: 1 `x`, then for the norms 2 `gamma`
/// (`ld_g`) and, with `beta`, 3 `beta` (`ld_b`), then the output `out`. `None` for a non-float
/// dtype (or `beta` on Softmax/LogSoftmax).
pub fn module(kind: NormKind, d: DType, beta: bool) -> Option<Result<String, String>> {
    render_kind(kind, d, beta, None, &plain_tensors(kind, d, beta, false), true)
}

/// The single-pass module of one variant for rows of at most `k` · 256 elements (`k` from
/// [`held_per_thread`]), reducing with subgroup operations when `subgroups` (the module then needs
/// the SUBGROUP feature); bindings as [`module`]. `None` as [`module`], for `k` outside
/// 1..=[`MAX_HELD_PER_THREAD`], and for `subgroups` on F64 (subgroup arithmetic is f32 only here).
pub fn module_held(kind: NormKind, d: DType, beta: bool, k: u32, subgroups: bool) -> Option<Result<String, String>> {
    if !(1..=MAX_HELD_PER_THREAD).contains(&k) || (subgroups && d == DType::F64) {
        return None;
    }
    render_kind(kind, d, beta, Some(Held { k, subgroups, vec4: false }), &plain_tensors(kind, d, beta, false), true)
}

/// Vectors per invocation (`K`, a power of two) of the four-wide single-pass form for rows of
/// `len` elements: `None` unless `len` is a multiple of 4 and at most [`MAX_HELD`] (the same
/// registers as the scalar form, 4 · K per invocation).
pub fn held4_per_thread(len: usize) -> Option<u32> {
    if !len.is_multiple_of(4) || len > MAX_HELD {
        return None;
    }
    u32::try_from((len / 4).div_ceil(WG).max(1).next_power_of_two()).ok()
}

/// The four-wide single-pass module (F32 only) for contiguous rows (`inner` = 1) of a multiple of
/// 4 elements whose windows start 16-byte aligned, at most `k` · 1024 elements (`k` from
/// [`held4_per_thread`]); x, gamma, beta and out are bound as arrays of `vec4<f32>` (bindings as
/// [`module`]). `None` for another dtype, for `beta` on Softmax/LogSoftmax and for `k` outside
/// 1..=[`MAX_HELD_PER_THREAD`] / 4.
pub fn module_held4(kind: NormKind, d: DType, beta: bool, k: u32, subgroups: bool) -> Option<Result<String, String>> {
    if d != DType::F32 || !(1..=MAX_HELD_PER_THREAD / 4).contains(&k) {
        return None;
    }
    render_kind(kind, d, beta, Some(Held { k, subgroups, vec4: true }), &plain_tensors(kind, d, beta, true), true)
}

/// The single-pass shape of a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// Registers (scalars, or vectors with `vec4`) per invocation.
    pub k: u32,
    /// Whether the reductions use subgroup operations.
    pub subgroups: bool,
    /// Whether the row is read and written as `vec4<f32>`.
    pub vec4: bool,
}

impl Held {
    /// Whether this form exists for dtype `d`: `k` in 1..=[`MAX_HELD_PER_THREAD`] (a quarter of
    /// that four-wide), four-wide only on F32, subgroup reductions not on F64.
    pub fn valid_for(self, d: DType) -> bool {
        let max = if self.vec4 { MAX_HELD_PER_THREAD / 4 } else { MAX_HELD_PER_THREAD };
        (1..=max).contains(&self.k) && !(self.vec4 && d != DType::F32) && !(self.subgroups && d == DType::F64)
    }
}

/// The bindings of a plain (unfused) variant and, for the norms, the first-pass reader `ld_x1`
/// (`ld4_x1` four-wide) their bodies call: the element itself.
fn plain_tensors(kind: NormKind, d: DType, beta: bool, vec4: bool) -> String {
    if vec4 {
        let first = if kind.has_gamma() { "fn ld4_x1(j: u32) -> vec4<f32> { return x[j]; }\n" } else { "" };
        return vec4_tensors(kind, beta) + first;
    }
    let mut tensors = tensor_binding("x", 1, d, Access::Read);
    let mut next = 2;
    if kind.has_gamma() {
        tensors += "fn ld_x1(i: u32) -> F { return ld_x(i); }\n";
        tensors += &tensor_binding("g", 2, d, Access::Read);
        next = 3;
        if beta {
            tensors += &tensor_binding("b", 3, d, Access::Read);
            next = 4;
        }
    }
    tensors + &tensor_binding("out", next, d, Access::Write)
}

/// Bindings of the four-wide form: 4-vector arrays, plus the scalar `ld_x` LayerNorm's pivot uses.
fn vec4_tensors(kind: NormKind, beta: bool) -> String {
    let bind =
        |name: &str, k: u32| format!("@group(0) @binding({k}) var<storage, read_write> {name}: array<vec4<f32>>;\n");
    let mut t = bind("x", 1);
    t += "fn ld_x(i: u32) -> f32 { return x[i / 4u][i % 4u]; }\n";
    let mut next = 2;
    if kind.has_gamma() {
        t += &bind("g", 2);
        next = 3;
        if beta {
            t += &bind("b", 3);
            next = 4;
        }
    }
    t + &bind("out", next)
}

/// [`module`] (`held` None) or [`module_held`] (`held`: K and whether subgroups reduce) with the
/// bindings and accessors `tensors` (`x` or the fused sum, gamma, beta, out); a single-pass form
/// is marked trusted when `may_trust` (its accessors keep the argument of the held kernels).
fn render_kind(
    kind: NormKind,
    d: DType,
    beta: bool,
    held: Option<Held>,
    tensors: &str,
    may_trust: bool,
) -> Option<Result<String, String>> {
    if beta && !kind.has_gamma() {
        return None;
    }
    let common = match common_part(d, tensors)? {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    let beta_expr = if beta { "ld_b(i)" } else { "F(0)" };
    let body = match held {
        None => match kind {
            NormKind::Softmax => render(NORM_SOFTMAX, &[("ROW", "s"), ("OUT", "fexp(d) / c")]),
            NormKind::LogSoftmax => render(NORM_SOFTMAX, &[("ROW", "flog(s)"), ("OUT", "d - c")]),
            NormKind::LayerNorm => render(NORM_LAYER, &[("BETA", beta_expr)]),
            NormKind::RmsNorm => render(NORM_RMS, &[("BETA", beta_expr)]),
        },
        Some(Held { k, vec4, .. }) => {
            let per_k = |scalar: &str, four: &str| {
                if vec4 {
                    format!("{VEC4_ROW}{}", unrolled(four, k))
                } else {
                    unrolled(scalar, k)
                }
            };
            // the four-wide stores leave prefixing to the loads
            let per_k_body = |scalar: &str, four: &str| unrolled(if vec4 { four } else { scalar }, k);
            let beta_expr = match (vec4, beta) {
                (false, _) => beta_expr,
                (true, true) => "b[i]",
                (true, false) => "vec4<F>(F(0))",
            };
            let bt = if vec4 { "vec4<F>" } else { "F" };
            match kind {
                NormKind::Softmax | NormKind::LogSoftmax => {
                    let (row, out) = if kind == NormKind::Softmax { ("s", "e / c") } else { ("flog(s)", "d - c") };
                    let load = per_k(SOFTMAX_LOAD, SOFTMAX_LOAD4);
                    let (sum, store) =
                        (per_k_body(SOFTMAX_SUM, SOFTMAX_SUM4), per_k_body(SOFTMAX_STORE, SOFTMAX_STORE4));
                    let slots = [("OUT", out), ("LOAD", &load), ("SUM", &sum), ("ROW", row), ("STORE", &store)];
                    render(NORM_SOFTMAX_HELD, &slots)
                }
                NormKind::LayerNorm => {
                    let load = per_k(LAYER_LOAD, LAYER_LOAD4);
                    let (sum, store) = (per_k_body(LAYER_SUM, LAYER_SUM4), per_k_body(LAYER_STORE, LAYER_STORE4));
                    let slots = [("BT", bt), ("BETA", beta_expr), ("LOAD", &load), ("SUM", &sum), ("STORE", &store)];
                    render(NORM_LAYER_HELD, &slots)
                }
                NormKind::RmsNorm => {
                    let (load, store) = (per_k(RMS_LOAD, RMS_LOAD4), per_k_body(RMS_STORE, RMS_STORE4));
                    render(NORM_RMS_HELD, &[("BT", bt), ("BETA", beta_expr), ("LOAD", &load), ("STORE", &store)])
                }
            }
        }
    };
    let math64 = if d == DType::F64 { MATH64 } else { "" };
    let reduce = match held {
        None => "",
        Some(Held { subgroups: false, .. }) => NORM_REDUCE_WG,
        Some(Held { subgroups: true, .. }) => NORM_REDUCE_SUBGROUP,
    };
    // The single-pass kernels are trusted on the f32 family (the argument is at the top of each
    // `norm_*_held.wgsl`); f64 calls `math64.wgsl`'s table-driven helpers, not reviewed.
    let trust = may_trust && held.is_some() && d != DType::F64;
    Some(body.map(|b| {
        let m = crate::module(&[COMMON, MATH, math64, &common, reduce, &b]);
        if trust {
            trusted(&m)
        } else {
            m
        }
    }))
}

/// SoftmaxCrossEntropy on float `d`: bindings 1 `x` (logits), 2 `t` (targets), 3 `out` (one loss
/// per slice). `None` for other dtypes.
pub fn cross_entropy_module(d: DType) -> Option<Result<String, String>> {
    let tensors = tensor_binding("x", 1, d, Access::Read)
        + &tensor_binding("t", 2, d, Access::Read)
        + &tensor_binding("out", 3, d, Access::Write);
    with_common(d, &tensors, NORM_CROSS_ENTROPY)
}

/// `body` on `norm_common.wgsl` filled for float `d` with `tensors`: a complete module (also the
/// backward family's loss gradient). `None` for a non-float dtype.
pub(crate) fn with_common(d: DType, tensors: &str, body: &str) -> Option<Result<String, String>> {
    let math64 = if d == DType::F64 { MATH64 } else { "" };
    Some(common_part(d, tensors)?.map(|c| crate::module(&[COMMON, MATH, math64, &c, body])))
}

/// `norm_common.wgsl` with `tensors` after `norm_float.wgsl` filled for float `d`. `None` for a
/// non-float dtype.
fn common_part(d: DType, tensors: &str) -> Option<Result<String, String>> {
    let float = float_part(d)?;
    Some(float.and_then(|f| render(NORM_COMMON, &[("TENSORS", tensors)]).map(|c| format!("{c}\n{f}"))))
}

/// `norm_float.wgsl` filled for float `d` (F, its helpers, the workgroup reductions). `None` for
/// a non-float dtype.
pub(crate) fn float_part(d: DType) -> Option<Result<String, String>> {
    Some(render(NORM_FLOAT, &float_helpers(d)?))
}
