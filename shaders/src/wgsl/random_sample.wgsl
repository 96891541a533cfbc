// Sample (§2.12.4): one workgroup per row of V logits. Every invocation owns a contiguous index
// segment of the row, so that the final inverse-CDF walk (ascending index order) is a scan of
// the per-invocation segment sums followed by one sequential walk per segment.
//
// Probabilities are recomputed from the logits whenever a pass needs them (the same expression
// gives the same bits every time), so any V works without scratch memory. The top-k and top-p
// cuts are found without sorting: a bitwise search over the order-preserving bits of p (p ≥ 0,
// so its f32 bits order like its values) finds the probability of the cut, and a second search
// over indices splits ties at the cut by smaller index (the spec's order).

struct RandomSampleParams {
    rows: u32,
    v: u32,
    temperature: f32,
    top_k: u32,
    top_p: f32,
    greedy: u32,
    seed_lo: u32,
    seed_hi: u32,
    // 64-bit stream position of row 0
    base_lo: u32,
    base_hi: u32,
    // always 0, unknown to the driver (see scaled_logit)
    opaque_zero: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: RandomSampleParams;
{{TENSORS}}

const NONE: u32 = 0xffffffffu;

var<workgroup> rf: array<f32, 256>;
var<workgroup> ru: array<u32, 256>;

// Per-row state every pass needs (workgroup-uniform values).
struct Row {
    base: u32,
    m: f32,
    s: f32,
    ninf: f32,
    inf_mode: bool,
    // top-k cut: kept when pb > tk, or pb == tk and i <= ck
    tk: u32,
    ck: u32,
    // top-p cut within the top-k set
    tp: u32,
    cp: u32,
}

fn logit(r: Row, i: u32) -> f32 {
    let x = ld_x(r.base + i);
    return select(x, f32_inf(true), f32_is_nan(x));
}

// p_i of step 2 (the +∞ limit when the maximum is +∞).
// z_i = x_i / temperature, rounded to f32 before any later use. Without the opaque OR, NVIDIA
// computes the division as x·rcp(t) and contracts `z − m` into fma(x, rcp(t), −m), whose unrounded
// product leaves a huge residual for the maximum itself (seen at t = 1e−10 and 1e−30), so tied
// maxima got probabilities 0 or ∞ in some passes and not in others.
fn scaled_logit(r: Row, i: u32) -> f32 {
    return bitcast<f32>(bitcast<u32>(logit(r, i) / p.temperature) | p.opaque_zero);
}

fn prob(r: Row, i: u32) -> f32 {
    let z = scaled_logit(r, i);
    if (r.inf_mode) {
        return select(0.0, 1.0 / r.ninf, z == f32_inf(false));
    }
    return exp_f32(z - r.m) / r.s;
}

fn kept_k(r: Row, i: u32, pb: u32) -> bool {
    return pb > r.tk || (pb == r.tk && i <= r.ck);
}

fn kept(r: Row, i: u32, pb: u32) -> bool {
    return kept_k(r, i, pb) && (pb > r.tp || (pb == r.tp && i <= r.cp));
}

// This invocation's index segment [lo, hi).
fn segment(lid: u32) -> vec2<u32> {
    let len = (p.v + WG - 1u) / WG;
    let lo = min(lid * len, p.v);
    return vec2<u32>(lo, min(lo + len, p.v));
}

// Workgroup reductions: op 0 sum, 1 min, 2 max. Results are workgroup-uniform.
fn red_u(lid: u32, v: u32, op: u32) -> u32 {
    ru[lid] = v;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s) {
            let a = ru[lid];
            let b = ru[lid + s];
            ru[lid] = select(select(a + b, min(a, b), op == 1u), max(a, b), op == 2u);
        }
    }
    let r = workgroupUniformLoad(&ru[0]);
    workgroupBarrier();
    return r;
}

// op 0 sum (pairwise tree), 2 max.
fn red_f(lid: u32, v: f32, op: u32) -> f32 {
    rf[lid] = v;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s) {
            let a = rf[lid];
            let b = rf[lid + s];
            rf[lid] = select(a + b, max(a, b), op == 2u);
        }
    }
    let r = workgroupUniformLoad(&rf[0]);
    workgroupBarrier();
    return r;
}

// #{i : bits(p_i) >= t}.
fn count_ge(lid: u32, r: Row, t: u32) -> u32 {
    let sg = segment(lid);
    var c = 0u;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        c = c + select(0u, 1u, bitcast<u32>(prob(r, i)) >= t);
    }
    return red_u(lid, c, 0u);
}

// #{i < c : bits(p_i) == t}, among the top-k survivors when `in_k`.
fn count_tied(lid: u32, r: Row, t: u32, c: u32, in_k: bool) -> u32 {
    let sg = segment(lid);
    var n = 0u;
    for (var i = sg.x; i < min(sg.y, c); i = i + 1u) {
        let pb = bitcast<u32>(prob(r, i));
        n = n + select(0u, 1u, pb == t && (!in_k || kept_k(r, i, pb)));
    }
    return red_u(lid, n, 0u);
}

// Σ p_i over the top-k survivors with bits(p_i) >= t.
fn sum_ge(lid: u32, r: Row, t: u32) -> f32 {
    let sg = segment(lid);
    var s = 0.0;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        let q = prob(r, i);
        let pb = bitcast<u32>(q);
        s = s + select(0.0, q, pb >= t && kept_k(r, i, pb));
    }
    return red_f(lid, s, 0u);
}

// Σ p_i over the top-k survivors with i < c and bits(p_i) == t.
fn sum_tied(lid: u32, r: Row, t: u32, c: u32) -> f32 {
    let sg = segment(lid);
    var s = 0.0;
    for (var i = sg.x; i < min(sg.y, c); i = i + 1u) {
        let q = prob(r, i);
        let pb = bitcast<u32>(q);
        s = s + select(0.0, q, pb == t && kept_k(r, i, pb));
    }
    return red_f(lid, s, 0u);
}

// Highest bit worth searching for an index in [0, V].
fn index_bits() -> u32 {
    return 32u - countLeadingZeros(p.v);
}

// Top-k (step 4): the k-th largest probability bits t, then the last kept index among ties.
fn top_k_cut(lid: u32, r: Row) -> vec2<u32> {
    let k = p.top_k;
    var t = 0u;
    for (var b = 31u; b > 0u; b = b - 1u) {
        let cand = t | (1u << (b - 1u));
        if (count_ge(lid, r, cand) >= k) {
            t = cand;
        }
    }
    let need = k - count_ge(lid, r, t + 1u);
    if (count_tied(lid, r, t, p.v, false) == need) {
        return vec2<u32>(t, NONE);
    }
    // largest c with #{tied, i < c} < need: index c is the need-th tied token
    var c = 0u;
    for (var b = index_bits(); b > 0u; b = b - 1u) {
        let cand = c | (1u << (b - 1u));
        if (cand <= p.v && count_tied(lid, r, t, cand, false) < need) {
            c = cand;
        }
    }
    return vec2<u32>(t, c);
}

// Top-p (step 5) over the top-k survivors: the shortest probability-ordered prefix whose sum
// reaches top_p · K, as (cut bits, last kept index among ties).
fn top_p_cut(lid: u32, r: Row) -> vec2<u32> {
    let goal = p.top_p * sum_ge(lid, r, 0u);
    var t = 0u;
    for (var b = 31u; b > 0u; b = b - 1u) {
        let cand = t | (1u << (b - 1u));
        if (sum_ge(lid, r, cand) >= goal) {
            t = cand;
        }
    }
    if (count_tied(lid, r, t, p.v, true) <= 1u) {
        return vec2<u32>(t, NONE);
    }
    let above = sum_ge(lid, r, t + 1u);
    var c = 0u;
    for (var b = index_bits(); b > 0u; b = b - 1u) {
        let cand = c | (1u << (b - 1u));
        if (cand <= p.v && above + sum_tied(lid, r, t, cand) < goal) {
            c = cand;
        }
    }
    return vec2<u32>(t, c);
}

// Exclusive prefix sum of `v` over invocations (index order); rf[WG - 1] holds the total after.
fn scan_excl(lid: u32, v: f32) -> f32 {
    rf[lid] = v;
    for (var off = 1u; off < WG; off = off << 1u) {
        workgroupBarrier();
        let t = select(0.0, rf[max(lid, off) - off], lid >= off);
        workgroupBarrier();
        rf[lid] = rf[lid] + t;
    }
    workgroupBarrier();
    return select(0.0, rf[max(lid, 1u) - 1u], lid > 0u);
}

// Step 6: inverse CDF over the kept tokens in ascending index order with uniform u.
fn draw(lid: u32, r: Row, u: f32) -> u32 {
    let sg = segment(lid);
    var own = 0.0;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        let q = prob(r, i);
        own = own + select(0.0, q, kept(r, i, bitcast<u32>(q)));
    }
    let before = scan_excl(lid, own);
    let total = workgroupUniformLoad(&rf[WG - 1u]);
    workgroupBarrier();
    let goal = u * total;
    var run = before;
    var found = NONE;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        let q = prob(r, i);
        if (kept(r, i, bitcast<u32>(q))) {
            run = run + q;
            if (run > goal) {
                found = i;
                break;
            }
        }
    }
    let first = red_u(lid, found, 1u);
    if (first != NONE) {
        return first;
    }
    // u · T rounded up to T: the largest kept index with p > 0
    var last = 0u;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        let q = prob(r, i);
        last = select(last, i + 1u, q > 0.0 && kept(r, i, bitcast<u32>(q)));
    }
    let l = red_u(lid, last, 2u);
    return select(0u, l - 1u, l > 0u);
}

// Step 1: the smallest index of the maximum logit (0 when all are −∞).
fn greedy(lid: u32, r: Row) -> u32 {
    let sg = segment(lid);
    var m = f32_inf(true);
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        m = max(m, logit(r, i));
    }
    m = red_f(lid, m, 2u);
    var first = NONE;
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        if (logit(r, i) == m) {
            first = i;
            break;
        }
    }
    return min(red_u(lid, first, 1u), p.v - 1u);
}

// The row's uniform: stream position base + row.
fn row_uniform(row: u32) -> f32 {
    let pos = rng_add64(vec2<u32>(p.base_lo, p.base_hi), row);
    let blk = vec2<u32>((pos.x >> 2u) | (pos.y << 30u), pos.y >> 2u);
    let key = vec2<u32>(ld_key(0u), ld_key(1u));
    let w = rng_block(key, vec2<u32>(p.seed_lo, p.seed_hi), blk);
    return rng_unit_f32(rng_word(w, pos.x & 3u));
}

// Steps 2–6 for one row.
fn sample_row(lid: u32, row: u32, base: u32) -> u32 {
    var r = Row(base, 0.0, 1.0, 1.0, false, 0u, NONE, 0u, NONE);
    let sg = segment(lid);
    var m = f32_inf(true);
    for (var i = sg.x; i < sg.y; i = i + 1u) {
        m = max(m, scaled_logit(r, i));
    }
    m = red_f(lid, m, 2u);
    if (m == f32_inf(true)) {
        return 0u;
    }
    r.m = m;
    if (m == f32_inf(false)) {
        var n = 0u;
        for (var i = sg.x; i < sg.y; i = i + 1u) {
            n = n + select(0u, 1u, scaled_logit(r, i) == m);
        }
        r.ninf = f32(red_u(lid, n, 0u));
        r.inf_mode = true;
    } else {
        var s = 0.0;
        for (var i = sg.x; i < sg.y; i = i + 1u) {
            s = s + exp_f32(scaled_logit(r, i) - m);
        }
        r.s = red_f(lid, s, 0u);
    }
    if (p.top_k > 0u && p.top_k < p.v) {
        let c = top_k_cut(lid, r);
        r.tk = c.x;
        r.ck = c.y;
    }
    if (p.top_p < 1.0) {
        let c = top_p_cut(lid, r);
        r.tp = c.x;
        r.cp = c.y;
    }
    return draw(lid, r, row_uniform(row));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let r = Row(row * p.v, 0.0, 1.0, 1.0, false, 0u, NONE, 0u, NONE);
    var idx = 0u;
    if (p.greedy != 0u) {
        idx = greedy(lid, r);
    } else {
        idx = sample_row(lid, row, row * p.v);
    }
    if (lid == 0u) {
        st_out(row, {{INDEX}});
    }
}
