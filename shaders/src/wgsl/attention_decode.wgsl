// Split attention for few query rows per key/value head (flash-decoding, §2.8.1): the rows that
// share a key/value head g (R = (Hq / Hkv) Sq rows, at most RMAX) are computed together, so K
// and V are read once for all of them, and the keys of the rows' range are split over
// workgroups so that a single query row still fills the device.
//
// One workgroup per (split s, value-column chunk, batch-key/value-head pair): x = s * dv_chunks
// + chunk, (y, z) = bg = b Hkv + g = y + z * bh_rows. Row r is query i = r / grp of head
// h = g grp + r % grp. The split covers keys [lo + s chunk, lo + (s + 1) chunk) of the union
// [lo, hi) of the rows' key ranges, in blocks of NT keys (one per invocation):
// 1. invocation t forms the raw dot products of key jb + t with every row from Q and the K block
//    staged in chunks of DK head-width elements (K transposed, read with whole transactions),
//    then the logits (`logit`: scale, soft-cap, bias, masks);
// 2. each row's block maximum, through workgroup memory (NT / RMAX invocations per row), the
//    running max and the rescaling factor;
// 3. p = e^(logit - m) into workgroup memory, and o[r] = o[r] alpha + P V for value column
//    e0 + t (V rows read along consecutive columns).
// The split's partial output rows (unnormalised), maxima and sums go to scratch; the combine
// kernel (`attention_combine.wgsl`) merges the splits. Every global read is guarded; barriers
// sit in workgroup-uniform control flow.
//
// Trusted (`shaders::attention::flash::decode_module`): Q is read for rows r < grp Sq and widths
// < D, K for keys j < c1 <= Sk and widths d0 + dd < D, V for keys below c1 and columns e < Dv, at
// indices the lowering checks lie inside each operand (all below 2^31 elements, Sq and Sk below
// 2^30); the scratch rows (bg splits + s) rows + r are below pairs * splits * rows (s < splits
// because the grid has splits * dv_chunks columns), which the lowering allocates with Dv columns
// (po) and 2 (pm). Workgroup indices: qs below RMAX DK, ks (x % DK) KS + x / DK with x < NT DK, sc r NT + t with r < RMAX and t < NT,
// red r RL + lane with r = t / RL < RMAX. Function arrays are indexed by constant-bound loops.

const NT: u32 = 128u;
const RMAX: u32 = {{RMAX}}u;
// Head-width elements per staged chunk of Q and K (8, 16 or 32: what workgroup memory allows).
const DK: u32 = {{DK}}u;
// Row stride of the transposed K chunk: one more than the keys, so the writes of consecutive
// widths fall in different banks.
const KS: u32 = NT + 1u;
// Invocations per row in the block reductions.
const RL: u32 = NT / RMAX;

var<workgroup> qs: array<f32, RMAX * DK>;
var<workgroup> ks: array<f32, DK * KS>;
var<workgroup> sc: array<f32, RMAX * NT>;
var<workgroup> red: array<f32, RMAX * RL>;

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let bg = wid.y + wid.z * p.bh_rows;
    let hkv = p.hq / p.grp;
    if (bg >= p.bh / p.grp) {
        return;
    }
    let b = bg / hkv;
    let g = bg % hkv;
    let s = wid.x / p.dv_chunks;
    let e = (wid.x % p.dv_chunks) * NT + t;
    let rows = p.grp * p.sq;
    let lo = key_lo(0u);
    let hi = key_hi(p.sq - 1u);
    let c0 = lo + i32(s * p.chunk);
    let c1 = min(c0 + i32(p.chunk), hi);
    let k_base = b * p.k_sb + g * p.k_sg;
    let v_base = b * p.v_sb + g * p.v_sg;

    var m: array<f32, RMAX>;
    var lp: array<f32, RMAX>;
    var o: array<f32, RMAX>;
    for (var r = 0u; r < RMAX; r++) {
        m[r] = f32_inf(true);
        lp[r] = 0.0;
        o[r] = 0.0;
    }
    for (var jb = c0; jb < c1; jb += i32(NT)) {
        let j = jb + i32(t);
        var acc: array<f32, RMAX>;
        for (var r = 0u; r < RMAX; r++) {
            acc[r] = 0.0;
        }
        for (var d0 = 0u; d0 < p.d; d0 += DK) {
            workgroupBarrier();
            for (var x = t; x < RMAX * DK; x += NT) {
                let r = x / DK;
                let dd = d0 + x % DK;
                var v = 0.0;
                if (r < rows && dd < p.d) {
                    let h = g * p.grp + r % p.grp;
                    v = ld_q(b * p.q_sb + h * p.q_sh + (r / p.grp) * p.q_si + dd);
                }
                qs[x] = v;
            }
            workgroupBarrier();
            // The block's K chunk, staged transposed (ks[dd KS + key]): consecutive invocations
            // read consecutive widths of one key row (whole memory transactions), eight loads in
            // flight each; keys from c1 on and widths from D on stage zeros.
            for (var x0 = t; x0 < NT * DK; x0 += 8u * NT) {
                var w: array<f32, 8>;
                for (var u = 0u; u < 8u; u++) {
                    let x = x0 + u * NT;
                    let jj = jb + i32(x / DK);
                    let dd = d0 + x % DK;
                    w[u] = 0.0;
                    if (jj < c1 && dd < p.d) {
                        w[u] = ld_k(k_base + u32(jj) * p.k_sj + dd);
                    }
                }
                for (var u = 0u; u < 8u; u++) {
                    let x = x0 + u * NT;
                    ks[(x % DK) * KS + x / DK] = w[u];
                }
            }
            workgroupBarrier();
            let n = min(DK, p.d - d0);
            for (var dd = 0u; dd < n; dd++) {
                let kv = ks[dd * KS + t];
                for (var r = 0u; r < RMAX; r++) {
                    acc[r] = fma(qs[r * DK + dd], kv, acc[r]);
                }
            }
        }
        for (var r = 0u; r < RMAX; r++) {
            var x = f32_inf(true);
            if (r < rows && j < c1) {
                x = logit(acc[r], b, g * p.grp + r % p.grp, r / p.grp, u32(j));
            }
            sc[r * NT + t] = x;
        }
        workgroupBarrier();
        {
            let r = t / RL;
            let lane = t % RL;
            var mx = f32_inf(true);
            for (var k = lane; k < NT; k += RL) {
                mx = max_f32(mx, sc[r * NT + k]);
            }
            red[r * RL + lane] = mx;
        }
        workgroupBarrier();
        var alpha: array<f32, RMAX>;
        for (var r = 0u; r < RMAX; r++) {
            var mb = red[r * RL];
            for (var k = 1u; k < RL; k++) {
                mb = max_f32(mb, red[r * RL + k]);
            }
            let mn = max_f32(m[r], mb);
            let none = f32_is_inf(mn) && mn < 0.0;
            alpha[r] = select(exp_f32(m[r] - mn), 1.0, none);
            m[r] = mn;
            let pv = select(exp_f32(sc[r * NT + t] - mn), 0.0, none);
            lp[r] = lp[r] * alpha[r] + pv;
            o[r] *= alpha[r];
        }
        workgroupBarrier();
        for (var r = 0u; r < RMAX; r++) {
            let mn = m[r];
            let none = f32_is_inf(mn) && mn < 0.0;
            sc[r * NT + t] = select(exp_f32(sc[r * NT + t] - mn), 0.0, none);
        }
        workgroupBarrier();
        if (e < p.dv) {
            let n = u32(min(i32(NT), c1 - jb));
            // Eight value rows in flight at once, as for K.
            var k = 0u;
            for (; k + 8u <= n; k += 8u) {
                let at = v_base + u32(jb + i32(k)) * p.v_sj + e;
                let s1 = p.v_sj;
                let vv = array<f32, 8>(ld_v(at), ld_v(at + s1), ld_v(at + 2u * s1), ld_v(at + 3u * s1),
                                       ld_v(at + 4u * s1), ld_v(at + 5u * s1), ld_v(at + 6u * s1),
                                       ld_v(at + 7u * s1));
                for (var u = 0u; u < 8u; u++) {
                    for (var r = 0u; r < RMAX; r++) {
                        o[r] = fma(sc[r * NT + k + u], vv[u], o[r]);
                    }
                }
            }
            for (; k < n; k++) {
                let vv = ld_v(v_base + u32(jb + i32(k)) * p.v_sj + e);
                for (var r = 0u; r < RMAX; r++) {
                    o[r] = fma(sc[r * NT + k], vv, o[r]);
                }
            }
        }
    }
    workgroupBarrier();
    for (var r = 0u; r < RMAX; r++) {
        sc[r * NT + t] = lp[r];
    }
    workgroupBarrier();
    // Scratch row of (pair bg, split s, row r).
    let row0 = (bg * p.splits + s) * rows;
    for (var r = 0u; r < RMAX; r++) {
        if (r < rows) {
            if (e < p.dv) {
                st_po((row0 + r) * p.dv + e, o[r]);
            }
            if (t == 0u) {
                var l = 0.0;
                for (var k = 0u; k < NT; k++) {
                    l += sc[r * NT + k];
                }
                st_pm(2u * (row0 + r), m[r]);
                st_pm(2u * (row0 + r) + 1u, l);
            }
        }
    }
}
