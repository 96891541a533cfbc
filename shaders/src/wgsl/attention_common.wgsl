// Params and index helpers shared by the attention kernels (§2.8.1).
//
// Every layout maps the logical Q[b, h, i, d] to `b q_sb + h q_sh + i q_si + d` (the head width is
// contiguous in all four layouts), and likewise K[b, g, j, d], V[b, g, j, e] and O[b, h, i, e];
// the keep-mask and the bias are indexed in the logical order [b, h, i, j] with their broadcast
// strides (0 on broadcast axes). The lowering checks that every index these formulas can form for
// in-range (b, h, i, j, d, e) lies inside the operand's binding.

struct AttnParams {
    sq: u32,
    sk: u32,
    d: u32,
    dv: u32,
    // query heads per key/value head (Hq / Hkv)
    grp: u32,
    hq: u32,
    // batch-head pairs B * Hq and the rows of the workgroup grid that carry them
    bh: u32,
    bh_rows: u32,
    q_sb: u32,
    q_sh: u32,
    q_si: u32,
    k_sb: u32,
    k_sg: u32,
    k_sj: u32,
    v_sb: u32,
    v_sg: u32,
    v_sj: u32,
    o_sb: u32,
    o_sh: u32,
    o_si: u32,
    m_sb: u32,
    m_sh: u32,
    m_si: u32,
    m_sj: u32,
    c_sb: u32,
    c_sh: u32,
    c_si: u32,
    c_sj: u32,
    // δ of the structural masks: Sk - Sq (mask_align End) or 0 (Start)
    delta: i32,
    // 0: no structural mask, 1: causal, 2: sliding window of `window` keys
    mask_kind: u32,
    window: u32,
    scale: f32,
    // logit soft-cap c, 0 for none
    softcap: f32,
    // keys per split of the decode kernel, and the number of splits
    chunk: u32,
    splits: u32,
    // value-column chunks of the prefill kernel
    dv_chunks: u32,
}

@group(0) @binding(0) var<uniform> p: AttnParams;

// The keys query row i may attend under the structural mask: [lo, hi) (empty when lo >= hi).
// Computed in i32: the lowering keeps Sq, Sk and the window below 2^30.
fn key_lo(i: u32) -> i32 {
    if (p.mask_kind == 2u) {
        return max(0, i32(i) + p.delta - i32(p.window) + 1);
    }
    return 0;
}

fn key_hi(i: u32) -> i32 {
    if (p.mask_kind == 0u) {
        return i32(p.sk);
    }
    return clamp(i32(i) + p.delta + 1, 0, i32(p.sk));
}

// The logit of key j for row i from the raw dot product: scale, soft-cap, bias, masks (-inf when
// the key is not allowed). `b`, `h` pick the mask and bias rows.
fn logit(dot: f32, b: u32, h: u32, i: u32, j: u32) -> f32 {
    let ji = i32(j);
    if (ji < key_lo(i) || ji >= key_hi(i)) {
        return f32_inf(true);
    }
    var x = dot * p.scale;
    if (p.softcap > 0.0) {
        x = p.softcap * tanh_f32(x / p.softcap);
    }
    x = x + {{BIAS}};
    if ({{KEEP}} == 0u) {
        return f32_inf(true);
    }
    return x;
}
