//! The channel norms (§2.7.6 GroupNorm, §2.7.7 LayerNorm2d) on `x` viewed as `[N, C, S]`.
//!
//! GroupNorm has two forms. Where a group fits a workgroup's registers (at most
//! [`super::MAX_HELD`] elements) one workgroup per group reads it once ([`group_norm_held`]).
//! Larger groups are split over many workgroups so that a few large groups still fill the GPU:
//! [`group_norm_stats`] writes each chunk's (mean, M2), [`group_norm_apply`] merges a group's
//! chunks and normalises one chunk per workgroup. LayerNorm2d ([`layer_norm_2d`]) runs one
//! invocation per `(n, s)` column, so neighbouring invocations read neighbouring positions.
//!
//! Every module computes in `F` of `norm_float.wgsl` (f32 for F32/F16/BF16, f64 for F64); all
//! moments are pivot-shifted two-pass moments or Chan merges of them, never `E[x²] − μ²`.

use super::{float_part, unrolled};
use crate::{render, tensor_binding, Access, COMMON, MATH, MATH64};
use backend_api::DType;

/// Params and gamma/beta helpers of the channel norms.
pub const NORM_CHANNEL_COMMON: &str = include_str!("../wgsl/norm_channel_common.wgsl");
/// GroupNorm, one workgroup per group, single pass.
pub const NORM_GROUP_HELD: &str = include_str!("../wgsl/norm_group_held.wgsl");
/// GroupNorm split, pass 1: partial moments per chunk.
pub const NORM_GROUP_STATS: &str = include_str!("../wgsl/norm_group_stats.wgsl");
/// GroupNorm split, pass 2: merge the partials, normalise a chunk.
pub const NORM_GROUP_APPLY: &str = include_str!("../wgsl/norm_group_apply.wgsl");
/// LayerNorm2d, one invocation per column.
pub const NORM_LAYER2D: &str = include_str!("../wgsl/norm_layer2d.wgsl");

crate::params! {
    /// `ChannelNormParams` of `norm_channel_common.wgsl`.
    pub struct ChannelNormParams {
        /// GroupNorm: groups `N·G`; LayerNorm2d: columns `N·S`.
        pub rows: u32,
        /// GroupNorm: elements per group `(C/G)·S`; LayerNorm2d: `C`.
        pub len: u32,
        /// `S`, the product of the spatial dims (1 for rank 2).
        pub spatial: u32,
        /// GroupNorm: `G` (groups per batch item); LayerNorm2d: 1.
        pub groups: u32,
        /// Epsilon.
        pub eps: f32,
        /// Split GroupNorm: workgroups (chunks) per group; 1 otherwise.
        pub chunks: u32,
        /// Split GroupNorm: elements per chunk; `len` otherwise.
        pub span: u32,
        /// Padding.
        pub pad0: u32,
    }
}

/// The most chunks a split group has: the apply pass merges one partial per invocation.
pub const MAX_CHUNKS: usize = 256;

/// Channels per register block of the LayerNorm2d kernel.
const LN2D_BLOCK: u32 = 8;

const HELD_LOAD: &str = "let i# = lid + #u * WG;
    var v# = F(0);
    if (i# < p.len) {
        v# = ld_x(base + i#) - x0;
        s = s + v#;
    }";
const HELD_SUM: &str = "if (i# < p.len) {
        let d# = v# - m;
        q = q + d# * d#;
    }";
const HELD_STORE: &str = "if (i# < p.len) {
        let c# = c0 + i# / p.spatial;
        st_out(base + i#, (v# - m) * inv * ld_g(c#) + chan_beta(c#));
    }";
const STATS_LOAD: &str = "let i# = lid + #u * WG;
        var v# = F(0);
        if (i# < cnt) {
            v# = ld_x(base + at + i#) - x0;
            s = s + v#;
        }";
const STATS_SUM: &str = "if (i# < cnt) {
            let d# = v# - mb;
            q = q + d# * d#;
        }";
// The apply pass loads all K elements before storing any: x and out may share a buffer, so the
// compiler could not move a load above an earlier store.
const APPLY_LOAD: &str = "let i# = at + lid + #u * WG;
        var v# = F(0);
        if (i# < end) {
            v# = ld_x(base + i#);
        }";
const APPLY_STORE: &str = "if (i# < end) {
            let c# = c0 + i# / p.spatial;
            st_out(base + i#, ((v# - x0) - m) * inv * ld_g(c#) + chan_beta(c#));
        }";
const LN2D_LOAD: &str = "var v# = F(0);
        if (c + #u < p.len) {
            v# = ld_x(base + (c + #u) * p.spatial) - x0;
            s = s + v#;
        }";
const LN2D_SUM: &str = "if (c + #u < p.len) {
            let d# = v# - mb;
            q = q + d# * d#;
        }";
const LN2D_RELOAD: &str = "var v# = F(0);
        if (c + #u < p.len) {
            v# = ld_x(base + (c + #u) * p.spatial);
        }";
const LN2D_STORE: &str = "if (c + #u < p.len) {
            st_out(base + (c + #u) * p.spatial, ((v# - x0) - mean) * inv * ld_g(c + #u) + chan_beta(c + #u));
        }";

/// GroupNorm for groups of at most `k` · 256 elements (`k` from [`super::held_per_thread`]), one
/// workgroup per group. Bindings: 1 `x`, 2 `gamma`, with `beta` 3 `beta`, then `out`. `None`
/// for a non-float dtype or `k` outside 1..=[`super::MAX_HELD_PER_THREAD`].
pub fn group_norm_held(d: DType, beta: bool, k: u32) -> Option<Result<String, String>> {
    if !(1..=super::MAX_HELD_PER_THREAD).contains(&k) {
        return None;
    }
    let (load, sum, store) = (unrolled(HELD_LOAD, k), unrolled(HELD_SUM, k), unrolled(HELD_STORE, k));
    let body = render(NORM_GROUP_HELD, &[("LOAD", &load), ("SUM", &sum), ("STORE", &store)]);
    let tensors = tensor_binding("x", 1, d, Access::Read) + &gamma_tensors(d, beta, 2);
    assemble(d, beta, &tensors, body)
}

/// Split GroupNorm, pass 1, in tiles of `k` · 256 elements: bindings 1 `x`, 2 `part` (two `F`
/// per workgroup: the chunk's mean and M2 of the pivot-shifted values). `None` for a non-float
/// dtype or `k` outside 1..=[`super::MAX_HELD_PER_THREAD`].
pub fn group_norm_stats(d: DType, k: u32) -> Option<Result<String, String>> {
    if !(1..=super::MAX_HELD_PER_THREAD).contains(&k) {
        return None;
    }
    let tile = (k * 256).to_string();
    let (load, sum) = (unrolled(STATS_LOAD, k), unrolled(STATS_SUM, k));
    let body = render(NORM_GROUP_STATS, &[("TILE", &tile), ("LOAD", &load), ("SUM", &sum)]);
    let tensors = tensor_binding("x", 1, d, Access::Read) + &part_binding(2);
    assemble(d, false, &tensors, body)
}

/// Split GroupNorm, pass 2, `k` elements per invocation in flight: bindings 1 `x`, 2 `part`
/// (from [`group_norm_stats`]), 3 `gamma`, with `beta` 4 `beta`, then `out`. `None` as
/// [`group_norm_stats`].
pub fn group_norm_apply(d: DType, beta: bool, k: u32) -> Option<Result<String, String>> {
    if !(1..=super::MAX_HELD_PER_THREAD).contains(&k) {
        return None;
    }
    let tile = (k * 256).to_string();
    let (load, store) = (unrolled(APPLY_LOAD, k), unrolled(APPLY_STORE, k));
    let body = render(NORM_GROUP_APPLY, &[("TILE", &tile), ("LOAD", &load), ("STORE", &store)]);
    let tensors = tensor_binding("x", 1, d, Access::Read) + &part_binding(2) + &gamma_tensors(d, beta, 3);
    assemble(d, beta, &tensors, body)
}

/// LayerNorm2d: bindings 1 `x`, 2 `gamma`, with `beta` 3 `beta`, then `out`. `None` for a
/// non-float dtype.
pub fn layer_norm_2d(d: DType, beta: bool) -> Option<Result<String, String>> {
    let b = LN2D_BLOCK;
    let (load, sum) = (unrolled(LN2D_LOAD, b), unrolled(LN2D_SUM, b));
    let (reload, store) = (unrolled(LN2D_RELOAD, b), unrolled(LN2D_STORE, b));
    let block = b.to_string();
    let slots = [("B", block.as_str()), ("LOAD", &load), ("SUM", &sum), ("RELOAD", &reload), ("STORE", &store)];
    let body = render(NORM_LAYER2D, &slots);
    let tensors = tensor_binding("x", 1, d, Access::Read) + &gamma_tensors(d, beta, 2);
    assemble(d, beta, &tensors, body)
}

/// `gamma` at binding `first`, `beta` after it when present, then `out`.
fn gamma_tensors(d: DType, beta: bool, first: u32) -> String {
    let mut t = tensor_binding("g", first, d, Access::Read);
    let mut next = first + 1;
    if beta {
        t += &tensor_binding("b", next, d, Access::Read);
        next += 1;
    }
    t + &tensor_binding("out", next, d, Access::Write)
}

/// The partial-moments scratch, in the computation type `F`.
fn part_binding(k: u32) -> String {
    format!("@group(0) @binding({k}) var<storage, read_write> part: array<F>;\n")
}

/// The complete module: common helpers, maths (f64's for F64), `norm_float.wgsl`, the channel
/// params with `tensors`, and `body`.
fn assemble(d: DType, beta: bool, tensors: &str, body: Result<String, String>) -> Option<Result<String, String>> {
    let float = float_part(d)?;
    let beta_expr = if beta { "ld_b(c)" } else { "F(0)" };
    let math64 = if d == DType::F64 { MATH64 } else { "" };
    Some(float.and_then(|f| {
        let common = render(NORM_CHANNEL_COMMON, &[("TENSORS", tensors), ("BETA", beta_expr)])?;
        Ok(crate::module(&[COMMON, MATH, math64, &f, &common, &body?]))
    }))
}
