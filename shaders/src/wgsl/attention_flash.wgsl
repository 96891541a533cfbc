// Flash attention forward (§2.8.1) for any query length: online softmax over key blocks, the
// S_q x S_k logits never stored outside workgroup memory.
//
// One workgroup per (BQ query rows, DVC value columns, batch-head pair): x = q-block * dv_chunks
// + value chunk, (y, z) = the batch-head pair bh = y + z * bh_rows. 8 lanes share each group of
// 4 rows (lx = lid % 8, ly = lid / 8: rows 4 ly .. 4 ly + 3), each lane owning keys lx + 8 c of a
// block (c < KPT) and value columns lx + 8 c of the chunk (c < CPT), so that workgroup-memory
// reads along keys and columns are consecutive across lanes. Per key block of BK keys inside the
// structural mask's key range of the rows:
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

const BQ: u32 = {{BQ}}u;
const BK: u32 = {{BK}}u;
const DC: u32 = {{DC}}u;
const DVC: u32 = {{DVC}}u;
const NT: u32 = BQ * 2u;
const KPT: u32 = BK / 8u;
const CPT: u32 = DVC / 8u;
// Padded row strides of the staged tiles (bank spread for the column reads).
const QS: u32 = DC + 1u;
const KS: u32 = DC + 1u;
const PS: u32 = BK + 1u;
const KOFF: u32 = BQ * QS;
const STAGE: u32 = {{STAGE}}u;

var<workgroup> stage: array<f32, STAGE>;
var<workgroup> ps: array<f32, BQ * PS>;
var<workgroup> red: array<f32, BQ * 8u>;

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
    var o: array<f32, 4u * CPT>;
    for (var a = 0u; a < 4u; a++) {
        m[a] = f32_inf(true);
        lp[a] = 0.0;
    }
    for (var t = 0u; t < 4u * CPT; t++) {
        o[t] = 0.0;
    }
    for (var j0 = j_lo; j0 < j_hi; j0 += i32(BK)) {
        var s: array<f32, 4u * KPT>;
        for (var t = 0u; t < 4u * KPT; t++) {
            s[t] = 0.0;
        }
        for (var d0 = 0u; d0 < p.d; d0 += DC) {
            workgroupBarrier();
            for (var e = lid; e < BQ * DC; e += NT) {
                let i = i0 + e / DC;
                let dd = d0 + e % DC;
                var x = 0.0;
                if (i < p.sq && dd < p.d) {
                    x = ld_q(q_base + i * p.q_si + dd);
                }
                stage[(e / DC) * QS + e % DC] = x;
            }
            for (var e = lid; e < BK * DC; e += NT) {
                let j = j0 + i32(e / DC);
                let dd = d0 + e % DC;
                var x = 0.0;
                if (j < j_hi && dd < p.d) {
                    x = ld_k(k_base + u32(j) * p.k_sj + dd);
                }
                stage[KOFF + (e / DC) * KS + e % DC] = x;
            }
            workgroupBarrier();
            for (var dd = 0u; dd < DC; dd++) {
                var qv: array<f32, 4>;
                for (var a = 0u; a < 4u; a++) {
                    qv[a] = stage[(4u * ly + a) * QS + dd];
                }
                for (var c = 0u; c < KPT; c++) {
                    let kv = stage[KOFF + (lx + 8u * c) * KS + dd];
                    for (var a = 0u; a < 4u; a++) {
                        s[a * KPT + c] = fma(qv[a], kv, s[a * KPT + c]);
                    }
                }
            }
        }
        for (var a = 0u; a < 4u; a++) {
            let i = i0 + 4u * ly + a;
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
            red[(4u * ly + a) * 8u + lx] = mx;
        }
        workgroupBarrier();
        for (var a = 0u; a < 4u; a++) {
            var mb = red[(4u * ly + a) * 8u];
            for (var t = 1u; t < 8u; t++) {
                mb = max_f32(mb, red[(4u * ly + a) * 8u + t]);
            }
            let mn = max_f32(m[a], mb);
            let none = f32_is_inf(mn) && mn < 0.0;
            let alpha = select(exp_f32(m[a] - mn), 1.0, none);
            m[a] = mn;
            var sum = lp[a] * alpha;
            for (var c = 0u; c < KPT; c++) {
                let pv = select(exp_f32(s[a * KPT + c] - mn), 0.0, none);
                sum += pv;
                ps[(4u * ly + a) * PS + lx + 8u * c] = pv;
            }
            lp[a] = sum;
            for (var c = 0u; c < CPT; c++) {
                o[a * CPT + c] *= alpha;
            }
        }
        for (var e = lid; e < BK * DVC; e += NT) {
            let j = j0 + i32(e / DVC);
            let col = e0 + e % DVC;
            var x = 0.0;
            if (j < j_hi && col < p.dv) {
                x = ld_v(v_base + u32(j) * p.v_sj + col);
            }
            stage[e] = x;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            var pa: array<f32, 4>;
            for (var a = 0u; a < 4u; a++) {
                pa[a] = ps[(4u * ly + a) * PS + kk];
            }
            for (var c = 0u; c < CPT; c++) {
                let vv = stage[kk * DVC + lx + 8u * c];
                for (var a = 0u; a < 4u; a++) {
                    o[a * CPT + c] = fma(pa[a], vv, o[a * CPT + c]);
                }
            }
        }
    }
    workgroupBarrier();
    for (var a = 0u; a < 4u; a++) {
        red[(4u * ly + a) * 8u + lx] = lp[a];
    }
    workgroupBarrier();
    let o_base = b * p.o_sb + h * p.o_sh;
    for (var a = 0u; a < 4u; a++) {
        let i = i0 + 4u * ly + a;
        var l = 0.0;
        for (var t = 0u; t < 8u; t++) {
            l += red[(4u * ly + a) * 8u + t];
        }
        let none = f32_is_inf(m[a]) && m[a] < 0.0;
        if (i < p.sq) {
            for (var c = 0u; c < CPT; c++) {
                let col = e0 + lx + 8u * c;
                if (col < p.dv) {
                    st_o(o_base + i * p.o_si + col, select(o[a * CPT + c] / l, 0.0, none));
                }
            }
        }
    }
}
