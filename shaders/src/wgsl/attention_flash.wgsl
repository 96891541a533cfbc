// Flash attention forward (§2.8.1) for any query length: online softmax over key blocks, the
// S_q x S_k logits never stored outside workgroup memory.
//
// One workgroup per (BQ query rows, DVC value columns, batch-head pair): x = q-block * dv_chunks
// + value chunk, (y, z) = the batch-head pair bh = y + z * bh_rows. 8 lanes share each group of
// 4 rows (lx = lid % 8, ly = lid / 8: rows ly + RG a for a < 4, RG = BQ / 4), each lane owning
// keys lx + 8 c of a block (c < KPT) and the value-column quads 4 (lx + 8 c) .. + 3 of the chunk
// (c < CQ). Workgroup memory is read as vec4s: Q and K chunks row-major with rows padded by one
// vec4 (conflict-free for the 8 keys and 4 rows a warp reads), P row-major, V row-major in
// column quads. Per key block of BK keys inside the structural mask's key range of the rows:
// 1. the logits: Q and K are staged in chunks of DC head-width elements (Q is re-read per block
//    from cache rather than held: the head width is unbounded);
// 2. scale, soft-cap, bias and masks (`logit`), the block's row maxima through workgroup
//    memory, the running max m and the rescaling factor alpha = e^(m_old - m_new);
// 3. p = e^(logit - m) into workgroup memory, V's block chunk staged over Q and K, and
//    o = o alpha + P V. Each lane keeps partial row sums of its own keys; they are added up once
//    at the end. A row whose max stays -inf (no allowed key) outputs 0 (§2.8.1 step 5).
// Every global read is guarded (rows < Sq, keys < the block's range end, widths < D or Dv) and
// stages 0 outside; barriers sit in workgroup-uniform control flow (loop bounds come from the
// workgroup id and the params only).
//
// Trusted (`shaders::attention::flash::flash_module`): global reads happen only under the
// guards above, at b q_sb + h q_sh + i q_si + d (and the K, V, mask and bias forms) for in-range
// coordinates, which the lowering checks lie inside each operand (every operand below 2^31
// elements, Sq, Sk and the window below 2^30, so no index or loop counter wraps); the output is
// written only for i < Sq and columns < Dv. Workgroup indices: stage rows r < BQ (Q) or
// KOFF + r QS + c with r < BK, c < DC / 4 (K), or e < BK VS (V), all below STAGE (the renderer
// sizes it as the larger of (BQ + BK) QS and BK VS); ps rows below BQ and quads below BK / 4;
// red below 8 BQ. Function arrays are indexed by constant-bound loop counters. exp_f32, max_f32,
// tanh_f32 and the f32 bit tests have no arrays or loops.

const BQ: u32 = {{BQ}}u;
const BK: u32 = {{BK}}u;
const DC: u32 = {{DC}}u;
const DVC: u32 = {{DVC}}u;
const NT: u32 = BQ * 2u;
const RG: u32 = BQ / 4u;
const KPT: u32 = BK / 8u;
const CQ: u32 = DVC / 32u;
// Row strides in vec4s (padded by one for the Q and K chunks).
const QS: u32 = DC / 4u + 1u;
const KOFF: u32 = BQ * QS;
const VS: u32 = DVC / 4u;
const PS: u32 = BK / 4u + 1u;
const STAGE: u32 = {{STAGE}}u;

var<workgroup> stage: array<vec4<f32>, STAGE>;
var<workgroup> ps: array<vec4<f32>, BQ * PS>;
var<workgroup> red: array<f32, BQ * 8u>;

fn q4(base: u32, i: u32, d: u32) -> vec4<f32> {
    var x = vec4<f32>(0.0);
    if (i < p.sq) {
        let at = base + i * p.q_si + d;
        for (var t = 0u; t < 4u; t++) {
            if (d + t < p.d) {
                x[t] = ld_q(at + t);
            }
        }
    }
    return x;
}

fn k4(base: u32, ok: bool, d: u32) -> vec4<f32> {
    var x = vec4<f32>(0.0);
    if (ok) {
        for (var t = 0u; t < 4u; t++) {
            if (d + t < p.d) {
                x[t] = ld_k(base + d + t);
            }
        }
    }
    return x;
}

fn v4(base: u32, ok: bool, col: u32) -> vec4<f32> {
    var x = vec4<f32>(0.0);
    if (ok) {
        for (var t = 0u; t < 4u; t++) {
            if (col + t < p.dv) {
                x[t] = ld_v(base + col + t);
            }
        }
    }
    return x;
}

// Vec4s of a Q chunk, a K chunk and a V block each invocation loads.
const QG: u32 = (BQ * (DC / 4u) + NT - 1u) / NT;
const KG: u32 = (BK * (DC / 4u) + NT - 1u) / NT;
const VG: u32 = (BK * VS + NT - 1u) / NT;

// One invocation's share of a Q chunk and a K chunk, held in registers until staged.
struct Chunk {
    q: array<vec4<f32>, QG>,
    k: array<vec4<f32>, KG>,
}

// Loads this invocation's share of the widths d0 .. d0 + DC of Q rows i0 .. i0 + BQ and of K
// rows j0 .. j0 + BK (zeros outside the rows, keys below j_hi and widths below D).
fn load_chunk(lid: u32, q_base: u32, k_base: u32, i0: u32, j0: i32, j_hi: i32, d0: u32) -> Chunk {
    var w: Chunk;
    for (var u = 0u; u < QG; u++) {
        let e = lid + u * NT;
        w.q[u] = vec4<f32>(0.0);
        if (e < BQ * (DC / 4u)) {
            w.q[u] = q4(q_base, i0 + e / (DC / 4u), d0 + 4u * (e % (DC / 4u)));
        }
    }
    for (var u = 0u; u < KG; u++) {
        let e = lid + u * NT;
        w.k[u] = vec4<f32>(0.0);
        if (e < BK * (DC / 4u)) {
            let j = j0 + i32(e / (DC / 4u));
            w.k[u] = k4(k_base + u32(max(j, 0)) * p.k_sj, j < j_hi, d0 + 4u * (e % (DC / 4u)));
        }
    }
    return w;
}

// Stages a chunk loaded by `load_chunk`.
fn put_chunk(lid: u32, w: Chunk) {
    for (var u = 0u; u < QG; u++) {
        let e = lid + u * NT;
        if (e < BQ * (DC / 4u)) {
            stage[(e / (DC / 4u)) * QS + e % (DC / 4u)] = w.q[u];
        }
    }
    for (var u = 0u; u < KG; u++) {
        let e = lid + u * NT;
        if (e < BK * (DC / 4u)) {
            stage[KOFF + (e / (DC / 4u)) * QS + e % (DC / 4u)] = w.k[u];
        }
    }
}

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let bh = wid.y + wid.z * p.bh_rows;
    if (bh >= p.bh) {
        return;
    }
    let b = bh / p.hq;
    let h = bh % p.hq;
    let g = h / p.grp;
    let i0 = (wid.x / p.dv_chunks) * BQ;
    let e0 = (wid.x % p.dv_chunks) * DVC;
    let lx = lid % 8u;
    let ly = lid / 8u;
    let q_base = b * p.q_sb + h * p.q_sh;
    let k_base = b * p.k_sb + g * p.k_sg;
    let v_base = b * p.v_sb + g * p.v_sg;
    // The union of the rows' key ranges (uniform: from the workgroup id and params).
    let i_last = min(i0 + BQ, p.sq) - 1u;
    let j_lo = key_lo(i0);
    let j_hi = key_hi(i_last);

    var m: array<f32, 4>;
    var lp: array<f32, 4>;
    var o: array<vec4<f32>, 4u * CQ>;
    for (var a = 0u; a < 4u; a++) {
        m[a] = f32_inf(true);
        lp[a] = 0.0;
    }
    for (var t = 0u; t < 4u * CQ; t++) {
        o[t] = vec4<f32>(0.0);
    }
    // Global loads run one phase ahead of their use (software pipelining through registers):
    // the next Q/K chunk (or the next block's first) loads while a chunk is multiplied, V's
    // block while the logits and the softmax run, so no load latency sits between two barriers.
    var w = load_chunk(lid, q_base, k_base, i0, j_lo, j_hi, 0u);
    for (var j0 = j_lo; j0 < j_hi; j0 += i32(BK)) {
        var s: array<f32, 4u * KPT>;
        for (var t = 0u; t < 4u * KPT; t++) {
            s[t] = 0.0;
        }
        for (var d0 = 0u; d0 < p.d; d0 += DC) {
            workgroupBarrier();
            put_chunk(lid, w);
            workgroupBarrier();
            let last = d0 + DC >= p.d;
            w = load_chunk(lid, q_base, k_base, i0, select(j0, j0 + i32(BK), last), j_hi, select(d0 + DC, 0u, last));
            for (var dd = 0u; dd < DC / 4u; dd++) {
                var qv: array<vec4<f32>, 4>;
                for (var a = 0u; a < 4u; a++) {
                    qv[a] = stage[(ly + RG * a) * QS + dd];
                }
                for (var c = 0u; c < KPT; c++) {
                    let kv = stage[KOFF + (lx + 8u * c) * QS + dd];
                    for (var a = 0u; a < 4u; a++) {
                        s[a * KPT + c] += dot(qv[a], kv);
                    }
                }
            }
        }
        var vw: array<vec4<f32>, VG>;
        for (var u = 0u; u < VG; u++) {
            let e = lid + u * NT;
            vw[u] = vec4<f32>(0.0);
            if (e < BK * VS) {
                let j = j0 + i32(e / VS);
                vw[u] = v4(v_base + u32(max(j, 0)) * p.v_sj, j < j_hi, e0 + 4u * (e % VS));
            }
        }
        for (var a = 0u; a < 4u; a++) {
            let i = i0 + ly + RG * a;
            var mx = f32_inf(true);
            for (var c = 0u; c < KPT; c++) {
                let j = j0 + i32(lx + 8u * c);
                var x = f32_inf(true);
                if (i < p.sq && j < j_hi) {
                    x = logit(s[a * KPT + c], b, h, i, u32(j));
                }
                s[a * KPT + c] = x;
                mx = max_f32(mx, x);
            }
            red[(ly + RG * a) * 8u + lx] = mx;
        }
        workgroupBarrier();
        for (var a = 0u; a < 4u; a++) {
            let r = ly + RG * a;
            var mb = red[r * 8u];
            for (var t = 1u; t < 8u; t++) {
                mb = max_f32(mb, red[r * 8u + t]);
            }
            let mn = max_f32(m[a], mb);
            let none = f32_is_inf(mn) && mn < 0.0;
            let alpha = select(exp_f32(m[a] - mn), 1.0, none);
            m[a] = mn;
            var sum = lp[a] * alpha;
            for (var c = 0u; c < KPT; c++) {
                let pv = select(exp_f32(s[a * KPT + c] - mn), 0.0, none);
                sum += pv;
                let k = lx + 8u * c;
                ps[r * PS + k / 4u][k % 4u] = pv;
            }
            lp[a] = sum;
            for (var c = 0u; c < CQ; c++) {
                o[a * CQ + c] *= alpha;
            }
        }
        for (var u = 0u; u < VG; u++) {
            let e = lid + u * NT;
            if (e < BK * VS) {
                stage[e] = vw[u];
            }
        }
        workgroupBarrier();
        for (var kq = 0u; kq < BK / 4u; kq++) {
            var pa: array<vec4<f32>, 4>;
            for (var a = 0u; a < 4u; a++) {
                pa[a] = ps[(ly + RG * a) * PS + kq];
            }
            for (var t = 0u; t < 4u; t++) {
                for (var c = 0u; c < CQ; c++) {
                    let vv = stage[(4u * kq + t) * VS + lx + 8u * c];
                    for (var a = 0u; a < 4u; a++) {
                        o[a * CQ + c] = fma(vec4<f32>(pa[a][t]), vv, o[a * CQ + c]);
                    }
                }
            }
        }
    }
    workgroupBarrier();
    for (var a = 0u; a < 4u; a++) {
        red[(ly + RG * a) * 8u + lx] = lp[a];
    }
    workgroupBarrier();
    let o_base = b * p.o_sb + h * p.o_sh;
    for (var a = 0u; a < 4u; a++) {
        let r = ly + RG * a;
        let i = i0 + r;
        var l = 0.0;
        for (var t = 0u; t < 8u; t++) {
            l += red[r * 8u + t];
        }
        let none = f32_is_inf(m[a]) && m[a] < 0.0;
        if (i < p.sq) {
            for (var c = 0u; c < CQ; c++) {
                let col = e0 + 4u * (lx + 8u * c);
                let val = select(o[a * CQ + c] / l, vec4<f32>(0.0), none);
                for (var t = 0u; t < 4u; t++) {
                    if (col + t < p.dv) {
                        st_o(o_base + i * p.o_si + col + t, val[t]);
                    }
                }
            }
        }
    }
}
