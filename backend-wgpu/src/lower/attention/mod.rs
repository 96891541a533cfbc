//! Attention (§2.8.1) with the fused kernels of `shaders::attention::flash`: the score matrix
//! never leaves workgroup memory. Every layout becomes one set of strides over the logical
//! Q[b, h, i, d], K[b, g, j, d], V[b, g, j, e] and O[b, h, i, e] (the head width is contiguous
//! in all four), and the keep-mask and bias become broadcast strides over [b, h, i, j], so one
//! kernel family serves every layout, head grouping and mask without copies.
//!
//! Few query rows per key/value head (decoding) use the split kernel in [`flash`], which spreads
//! the key range over workgroups; every other shape uses the blocked kernel, on tensor cores for
//! F16 where the device has them ([`coop`]).
//!
//! Rope and RopeBackward (§2.8.3–2.8.4) are in [`rope`].

mod coop;
mod decode;
mod flash;
mod rope;
#[cfg(test)]
mod tests;

pub use rope::{rope, rope_backward};

use super::builder::{tensor_bytes, u32_of, Lower, Operand};
use super::NodeIo;
use backend_api::op::{AttentionAttrs, AttnLayout, MaskAlign, MaskKind};
use backend_api::shape::broadcast_strides;
use backend_api::{bail, ensure, Result};
use shaders::attention::flash::AttnParams;

/// Sizes and sequence positions the kernels compute in i32 stay below this.
const MAX_LEN: usize = 1 << 29;
/// Every element index the kernels form is a u32 below this.
const MAX_INDEX: usize = 1 << 31;

/// The operands of one Attention node.
struct Operands<'a> {
    q: &'a Operand,
    k: &'a Operand,
    v: &'a Operand,
    mask: Option<&'a Operand>,
    bias: Option<&'a Operand>,
    out: &'a Operand,
}

/// The logical sizes of a problem and its strides.
#[derive(Debug)]
struct Geometry {
    b: usize,
    hq: usize,
    hkv: usize,
    sq: usize,
    sk: usize,
    d: usize,
    dv: usize,
    params: AttnParams,
}

/// Lowers one Attention node.
pub fn attention(b: &mut Lower<'_>, a: &AttentionAttrs, io: &NodeIo<'_>) -> Result<()> {
    let mut next = 3;
    let mut optional = |present: bool| {
        let o = present.then(|| io.opt_input(next)).flatten();
        next += usize::from(present);
        o
    };
    let mask = optional(a.has_keep_mask);
    let bias = optional(a.has_bias);
    ensure!(
        mask.is_some() == a.has_keep_mask && bias.is_some() == a.has_bias,
        Arity,
        "Attention has {} inputs but its attributes name keep_mask {} and bias {}",
        io.inputs.len(),
        a.has_keep_mask,
        a.has_bias
    );
    let ops = Operands { q: io.input(0)?, k: io.input(1)?, v: io.input(2)?, mask, bias, out: io.output(0)? };
    let g = geometry(a, &ops)?;
    if g.sq == 0 || g.dv == 0 || g.b == 0 {
        return Ok(());
    }
    if decode::fits(&g) {
        decode::run(b, &g, &ops)
    } else {
        flash::run(b, &g, &ops)
    }
}

/// (batch, head, row) strides of a `Bhsd`-like (`heads_first`) or `Bshd`-like operand with
/// `heads` heads of width `w` over `len` rows.
fn strides3(heads_first: bool, heads: usize, len: usize, w: usize) -> Option<[usize; 3]> {
    let row = heads.checked_mul(w)?;
    let batch = row.checked_mul(len)?;
    Some(if heads_first { [batch, len.checked_mul(w)?, w] } else { [batch, w, row] })
}

fn geometry(a: &AttentionAttrs, o: &Operands<'_>) -> Result<Geometry> {
    let (hq, hkv) = (a.num_heads as usize, a.num_kv_heads as usize);
    ensure!(hkv > 0 && hq % hkv == 0, Attribute, "Attention num_heads {hq} is not a multiple of num_kv_heads {hkv}");
    let (q, k, v) = (&o.q.dims, &o.k.dims, &o.v.dims);
    let dim = |t: &[usize], i: usize| t.get(i).copied().unwrap_or(0);
    // (B, Sq, Sk, D, Dv, heads first)
    let (bsz, sq, sk, d, dv, heads_first) = match a.layout {
        AttnLayout::Bhsd => (dim(q, 0), dim(q, 2), dim(k, 2), dim(q, 3), dim(v, 3), true),
        AttnLayout::Bshd => (dim(q, 0), dim(q, 1), dim(k, 1), dim(q, 3), dim(v, 3), false),
        AttnLayout::BsPacked => (dim(q, 0), dim(q, 1), dim(k, 1), dim(q, 2) / hq, dim(v, 2) / hkv, false),
        AttnLayout::FlatHeads => (dim(q, 0) / hq, dim(q, 1), dim(k, 1), dim(q, 2), dim(v, 2), true),
    };
    let rank = if matches!(a.layout, AttnLayout::Bhsd | AttnLayout::Bshd) { 4 } else { 3 };
    for (n, t) in [("q", o.q), ("k", o.k), ("v", o.v), ("output", o.out)] {
        ensure!(t.dims.len() == rank, Shape, "Attention ({:?}) {n} {:?} must have rank {rank}", a.layout, t.dims);
        ensure!(t.numel() < MAX_INDEX, DeviceLimit, "Attention {n} {:?} has 2^31 elements or more", t.dims);
        ensure!(
            t.window.bytes >= tensor_bytes(t.dtype, &t.dims)?,
            Shape,
            "Attention {n} {:?}: window of {} bytes",
            t.dims,
            t.window.bytes
        );
    }
    ensure!(sq < MAX_LEN && sk < MAX_LEN, DeviceLimit, "Attention Sq {sq} or Sk {sk} is 2^29 or more");
    let bad = || backend_api::Error::new(backend_api::ErrorKind::DeviceLimit, "Attention strides overflow");
    let qs = strides3(heads_first, hq, sq, d).ok_or_else(bad)?;
    let ks = strides3(heads_first, hkv, sk, d).ok_or_else(bad)?;
    let vs = strides3(heads_first, hkv, sk, dv).ok_or_else(bad)?;
    let os = strides3(heads_first, hq, sq, dv).ok_or_else(bad)?;
    let full = [bsz, hq, sq, sk];
    let mask_strides = |t: Option<&Operand>| -> Result<[u32; 4]> {
        let Some(t) = t else { return Ok([0; 4]) };
        ensure!(t.numel() < MAX_INDEX, DeviceLimit, "Attention mask or bias {:?} has 2^31 elements or more", t.dims);
        ensure!(
            t.dims.len() <= 4 && t.dims.iter().rev().zip(full.iter().rev()).all(|(&m, &f)| m == f || m == 1),
            Shape,
            "Attention mask or bias {:?} does not broadcast to [B, Hq, Sq, Sk] = {full:?}",
            t.dims
        );
        let s = broadcast_strides(&t.dims, &full);
        Ok([u32_of(s[0], "stride")?, u32_of(s[1], "stride")?, u32_of(s[2], "stride")?, u32_of(s[3], "stride")?])
    };
    let m = mask_strides(o.mask)?;
    let c = mask_strides(o.bias)?;
    let delta = match a.mask_align {
        MaskAlign::End => sk as i64 - sq as i64,
        MaskAlign::Start => 0,
    };
    let (mask_kind, window) = match a.mask {
        MaskKind::None => (0, 0),
        MaskKind::Causal => (1, 0),
        // A window longer than every reachable key range is the causal mask's range: clamp it
        // into i32 without changing which keys it allows.
        MaskKind::SlidingWindow { window } => (2, window.min((sq + sk + 1) as u64) as u32),
    };
    let scale = a.scale.unwrap_or(1.0 / (d as f32).sqrt());
    let bh = bsz.checked_mul(hq).ok_or_else(bad)?;
    let params = AttnParams {
        sq: u32_of(sq, "Sq")?,
        sk: u32_of(sk, "Sk")?,
        d: u32_of(d, "D")?,
        dv: u32_of(dv, "Dv")?,
        grp: u32_of(hq / hkv, "heads per group")?,
        hq: u32_of(hq, "Hq")?,
        bh: u32_of(bh, "B·Hq")?,
        q_sb: u32_of(qs[0], "stride")?,
        q_sh: u32_of(qs[1], "stride")?,
        q_si: u32_of(qs[2], "stride")?,
        k_sb: u32_of(ks[0], "stride")?,
        k_sg: u32_of(ks[1], "stride")?,
        k_sj: u32_of(ks[2], "stride")?,
        v_sb: u32_of(vs[0], "stride")?,
        v_sg: u32_of(vs[1], "stride")?,
        v_sj: u32_of(vs[2], "stride")?,
        o_sb: u32_of(os[0], "stride")?,
        o_sh: u32_of(os[1], "stride")?,
        o_si: u32_of(os[2], "stride")?,
        m_sb: m[0],
        m_sh: m[1],
        m_si: m[2],
        m_sj: m[3],
        c_sb: c[0],
        c_sh: c[1],
        c_si: c[2],
        c_sj: c[3],
        delta: i32::try_from(delta).map_err(|_| bad())?,
        mask_kind,
        window,
        scale,
        softcap: a.softcap.unwrap_or(0.0),
        ..AttnParams::default()
    };
    if d == 0 {
        bail!(Shape, "Attention q {:?}: head width D must be >= 1", o.q.dims);
    }
    Ok(Geometry { b: bsz, hq, hkv, sq, sk, d, dv, params })
}
