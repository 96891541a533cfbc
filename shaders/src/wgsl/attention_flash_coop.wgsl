// Flash attention forward (§2.8.1) on tensor cores for F16 q, k, v: the online softmax of
// `attention_flash.wgsl` with both products (S = Q Kᵀ and O += P V) as 16 x 16 f16 cooperative
// matrices with f32 accumulators.
//
// One workgroup per (BQ = 64 query rows, batch-head pair): x = query block (the last block first:
// under a causal mask it has the most keys), (y, z) = the batch-head pair bh = y + z * bh_rows.
// NSG = 4 subgroups of SG invocations; subgroup s owns rows 16 s .. 16 s + 15 of the block. Its
// Q fragments (D / 16 A matrices) are loaded once from the staged Q block and kept; its output
// lives in DV / 16 accumulator fragments. Per key block of BK keys inside the structural mask's
// key range of the block's rows:
// 1. K's block is staged as f16 (rows padded to SW halves, 16-byte aligned) from the registers
//    it was loaded into during the previous block's softmax (the first block's before the
//    loop); V's block is loaded into registers meanwhile. Each subgroup computes its 16 x BK
//    scores fragment by fragment (Kᵀ read column-major) and stores them as f32 into its own
//    area of `ss`;
// 2. V's block is staged over K's and the next K block is loaded into registers, while LPR =
//    SG / 16 lanes per row apply `logit` (scale, soft-cap, bias, masks; only the scale for a
//    block inside every row's key range in the PLAIN variant without soft-cap) to their keys
//    and update the row's reference max m: it moves only
//    when the block's max exceeds it by more than TAU (or m is -inf or NaN), so p = e^(x - m)
//    stays below e^TAU (f16 holds it) and the output rows rarely need rescaling; m is only a
//    reference, the result O / l is the same for any m. p is rounded to f16 into `sp` and the
//    row sum l adds the rounded p, so numerator and denominator use the same weights;
// 3. when any row of the workgroup moved its reference (a workgroup-uniform flag), every
//    subgroup rescales its output rows by alpha = e^(m_old - m_new) through `ss`;
// 4. O += P V from `sp` and the staged V.
// At the end each row is divided by l (rows whose max stayed -inf output 0, §2.8.1 step 5) and
// written as whole f16 words. NaN logits propagate through m, alpha and p as in the scalar kernel.
//
// Trusted (`shaders::attention::coop::coop_module`): the lowering selects this kernel only for
// F16 q, k, v with D and DV (the rendered head widths, equal to the params') multiples of 16, every
// stride a multiple of 16 and windows of whole 16-byte vectors, so a group of 8 halves along the
// head width is one aligned vec4<u32> inside its operand for in-range coordinates (every operand
// below 2^31 elements, Sq, Sk and the window below 2^30); out-of-range rows read vector 0 (every
// bound operand has one) and stage zeros. The output is written only for rows i < Sq, as whole
// words (DV, o_sb, o_sh, o_si even). Workgroup indices: st rows below BQ (BK <= BQ) and columns
// below max(D, DV) + 8 = SW; fragment loads of Q at rows 16 s .. +15, of K at keys below BK and
// widths below D, of V at keys below BK and columns below DV, all inside st; ss and sp at
// subgroup areas s < NSG (the subgroup id is clamped), rows below 16, columns below BK; sr below
// 16 NSG. Function arrays are indexed by constant-bound loop counters. Barriers and collective
// operations sit in workgroup-uniform control flow (loop bounds from the workgroup id and the
// params; the rescale branch on a value of workgroupUniformLoad).

const SG: u32 = {{SG}}u;
const NSG: u32 = 4u;
const NT: u32 = NSG * SG;
const BQ: u32 = 64u;
const BK: u32 = {{BK}}u;
const D: u32 = {{D}}u;
const DV: u32 = {{DV}}u;
// Row stride (halves) of the staged blocks: rows 16-byte aligned, consecutive rows in other banks.
const SW: u32 = {{SW}}u;
// Row strides of the f32 scores and f16 probabilities of a subgroup.
const SS: u32 = BK + 4u;
const PS: u32 = BK + 8u;
// Lanes per row for the softmax and keys each lane handles.
const LPR: u32 = SG / 16u;
const KPL: u32 = BK / LPR;
// How far a block's max may exceed the reference max before the reference moves (e^8 < 65504).
const TAU: f32 = 8.0;
// No keep-mask and no bias in this variant.
const PLAIN: bool = {{PLAIN}};

alias FragA = coop_mat16x16<f16, A>;
alias FragB = coop_mat16x16<f16, B>;
alias FragC = coop_mat16x16<f32, C>;

@group(0) @binding(1) var<storage, read_write> q: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> k: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> v: array<vec4<u32>>;

var<workgroup> st: array<f16, BQ * SW>;
var<workgroup> ss: array<f32, NSG * 16u * SS>;
var<workgroup> sp: array<f16, NSG * 16u * PS>;
// Per-row factor: alpha while streaming, 1 / l for the output.
var<workgroup> sr: array<f32, NSG * 16u>;
// Whether subgroup s has a row whose output needs rescaling.
var<workgroup> flags: array<u32, NSG>;

// Writes the 8 halves of w at st[at ..].
fn put8(at: u32, w: vec4<u32>) {
    for (var t = 0u; t < 4u; t++) {
        // f16 -> f32 -> f16 is exact.
        let pair = unpack2x16float(w[t]);
        st[at + 2u * t] = f16(pair.x);
        st[at + 2u * t + 1u] = f16(pair.y);
    }
}

// Groups of 8 halves each invocation stages per K and per V block.
const KG: u32 = (BK * (D / 8u) + NT - 1u) / NT;
const VG: u32 = (BK * (DV / 8u) + NT - 1u) / NT;

// Loads (into registers) this invocation's groups of K rows j0 .. j0 + BK (zeros from j_hi on).
fn load_k(lid: u32, base: u32, j0: i32, j_hi: i32) -> array<vec4<u32>, KG> {
    var w: array<vec4<u32>, KG>;
    for (var u = 0u; u < KG; u++) {
        let e = lid + u * NT;
        let j = j0 + i32(e / (D / 8u));
        let ok = e < BK * (D / 8u) && j < j_hi;
        let c = 8u * (e % (D / 8u));
        w[u] = select(vec4<u32>(0u), k[select(0u, (base + u32(max(j, 0)) * p.k_sj + c) / 8u, ok)], ok);
    }
    return w;
}

// Loads this invocation's groups of V rows j0 .. j0 + BK (zeros from j_hi on).
fn load_v(lid: u32, base: u32, j0: i32, j_hi: i32) -> array<vec4<u32>, VG> {
    var w: array<vec4<u32>, VG>;
    for (var u = 0u; u < VG; u++) {
        let e = lid + u * NT;
        let j = j0 + i32(e / (DV / 8u));
        let ok = e < BK * (DV / 8u) && j < j_hi;
        let c = 8u * (e % (DV / 8u));
        w[u] = select(vec4<u32>(0u), v[select(0u, (base + u32(max(j, 0)) * p.v_sj + c) / 8u, ok)], ok);
    }
    return w;
}

// Stages groups loaded by `load_k` (rows of D halves).
fn put_k(lid: u32, w: array<vec4<u32>, KG>) {
    for (var u = 0u; u < KG; u++) {
        let e = lid + u * NT;
        if (e < BK * (D / 8u)) {
            put8((e / (D / 8u)) * SW + 8u * (e % (D / 8u)), w[u]);
        }
    }
}

// Stages groups loaded by `load_v` (rows of DV halves).
fn put_v(lid: u32, w: array<vec4<u32>, VG>) {
    for (var u = 0u; u < VG; u++) {
        let e = lid + u * NT;
        if (e < BK * (DV / 8u)) {
            put8((e / (DV / 8u)) * SW + 8u * (e % (DV / 8u)), w[u]);
        }
    }
}

// Multiplies rows of the first `cols` columns of subgroup s's `ss` area by their `sr` factor.
fn scale_rows(s: u32, lane: u32, cols: u32) {
    for (var e = lane; e < 16u * cols; e += SG) {
        let r = e / cols;
        let at = s * 16u * SS + r * SS + e % cols;
        ss[at] = ss[at] * sr[s * 16u + r];
    }
}

// Writes the first `cols` columns of subgroup s's `ss` area, times the rows' `sr`, to output
// columns e0 .. e0 + cols of rows i0 + 16 s + r < Sq, as f16 pairs.
fn store_rows(s: u32, lane: u32, cols: u32, o_base: u32, i0: u32, e0: u32) {
    for (var e = lane; e < 8u * cols; e += SG) {
        let r = e / (cols / 2u);
        let c = 2u * (e % (cols / 2u));
        let i = i0 + s * 16u + r;
        if (i < p.sq) {
            let at = s * 16u * SS + r * SS + c;
            let f = sr[s * 16u + r];
            let bits = f32_to_f16_bits(ss[at] * f) | (f32_to_f16_bits(ss[at + 1u] * f) << 16u);
            atomicStore(&o[(o_base + i * p.o_si + e0 + c) / 2u], bits);
        }
    }
}

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, @builtin(subgroup_id) sgid: u32,
        @builtin(subgroup_invocation_id) lane_id: u32) {
    let bh = wid.y + wid.z * p.bh_rows;
    if (bh >= p.bh) {
        return;
    }
    let s = min(sgid, NSG - 1u);
    let lane = min(lane_id, SG - 1u);
    let b = bh / p.hq;
    let h = bh % p.hq;
    let g = h / p.grp;
    let i0 = (nwg.x - 1u - wid.x) * BQ;
    let q_base = b * p.q_sb + h * p.q_sh;
    let k_base = b * p.k_sb + g * p.k_sg;
    let v_base = b * p.v_sb + g * p.v_sg;
    // The union of the rows' key ranges (uniform: from the workgroup id and params).
    let i_last = min(i0 + BQ, p.sq) - 1u;
    let j_lo = key_lo(i0);
    let j_hi = key_hi(i_last);

    for (var e = lid; e < BQ * (D / 8u); e += NT) {
        let r = e / (D / 8u);
        let c = 8u * (e % (D / 8u));
        let ok = i0 + r < p.sq;
        let w = q[select(0u, (q_base + (i0 + r) * p.q_si + c) / 8u, ok)];
        put8(r * SW + c, select(vec4<u32>(0u), w, ok));
    }
    workgroupBarrier();
{{QLOAD}}
{{ODECL}}
    // This lane's row of the subgroup and its share of the keys.
    let r = lane / LPR;
    let part = lane % LPR;
    let i = i0 + s * 16u + r;
    var m = f32_inf(true);
    var l = 0.0;
    // Global loads run one phase ahead of their use: V's block loads during the scores, the next
    // K block during the softmax and P V (software pipelining through registers).
    var rk = load_k(lid, k_base, j_lo, j_hi);
    for (var j0 = j_lo; j0 < j_hi; j0 += i32(BK)) {
        workgroupBarrier();
        put_k(lid, rk);
        workgroupBarrier();
        let rv = load_v(lid, v_base, j0, j_hi);
{{SCORES}}
        workgroupBarrier();
        put_v(lid, rv);
        rk = load_k(lid, k_base, j0 + i32(BK), j_hi);
        // Keys of this block inside every row's range and no soft-cap, bias or keep-mask: the
        // logit is the scaled score.
        let inside = PLAIN && p.softcap == 0.0 && j0 >= key_lo(i_last) && j0 + i32(BK) <= key_hi(i0);
        // The logits overwrite this lane's own scores in `ss` (no register array of KPL values:
        // it would cost registers the fragments need).
        var mx = f32_inf(true);
        for (var c = 0u; c < KPL; c++) {
            let key = c * LPR + part;
            let j = j0 + i32(key);
            let at = s * 16u * SS + r * SS + key;
            var y = f32_inf(true);
            if (inside) {
                y = select(f32_inf(true), ss[at] * p.scale, i < p.sq);
            } else if (i < p.sq && j < j_hi) {
                y = logit(ss[at], b, h, i, u32(j));
            }
            ss[at] = y;
            mx = max_f32(mx, y);
        }
        for (var t = 1u; t < LPR; t *= 2u) {
            mx = max_f32(mx, subgroupShuffleXor(mx, t));
        }
        let was_none = f32_is_inf(m) && m < 0.0;
        let cand = max_f32(m, mx);
        let moved = !(cand <= m + TAU);
        let mn = select(m, cand, moved);
        let none = f32_is_inf(mn) && mn < 0.0;
        let alpha = select(1.0, exp_f32(m - mn), moved);
        m = mn;
        // This lane's share of the row sum is in the old reference's units too.
        l *= alpha;
        for (var c = 0u; c < KPL; c++) {
            // x - mn <= TAU or -inf or NaN: the plain exp is right for all three.
            let ph = f16(select(exp(ss[s * 16u * SS + r * SS + c * LPR + part] - mn), 0.0, none));
            l += f32(ph);
            sp[s * 16u * PS + r * PS + c * LPR + part] = ph;
        }
        if (part == 0u) {
            sr[s * 16u + r] = alpha;
        }
        let any_moved = subgroupAny(moved && !was_none);
        if (lane == 0u) {
            flags[s] = select(0u, 1u, any_moved);
        }
        let fl = workgroupUniformLoad(&flags);
        if ((fl[0] | fl[1] | fl[2] | fl[3]) != 0u) {
{{RESCALE}}
        }
{{PV}}
    }
    for (var t = 1u; t < LPR; t *= 2u) {
        l += subgroupShuffleXor(l, t);
    }
    workgroupBarrier();
    if (part == 0u) {
        sr[s * 16u + r] = select(1.0 / l, 0.0, f32_is_inf(m) && m < 0.0);
    }
    let o_base = b * p.o_sb + h * p.o_sh;
{{STORE}}
}
