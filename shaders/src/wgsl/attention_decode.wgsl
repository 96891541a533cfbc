// Split attention for few query rows per key/value head (flash-decoding, §2.8.1): the rows that
// share a key/value head g (R = (Hq / Hkv) Sq rows, at most RMAX) are computed together, so K
// and V are read once for all of them, and the keys of the rows' range are split over
// workgroups so that a single query row still fills the device.
//
// One workgroup per (split s, value-column chunk, batch-key/value-head pair): x = s * dv_chunks
// + chunk, (y, z) = bg = b Hkv + g = y + z * bh_rows. Row r is query i = r / grp of head
// h = g grp + r % grp. The split covers keys [lo + s chunk, lo + (s + 1) chunk) of the union
// [lo, hi) of the rows' key ranges, in blocks of NT keys (one per invocation):
// 1. invocation t forms the raw dot products of key jb + t with every row (Q staged in chunks of
//    DQ head-width elements), then the logits (`logit`: scale, soft-cap, bias, masks);
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
// (po) and 2 (pm). Bound as vectors of 4 elements (the lowering checks that D, K's strides and
// window allow it), K is read at vector (kb + d0 + 4 u) / 4, a group of 4 widths below D of one
// key row: inside K. Workgroup indices: qs (vectors of 4) below RMAX DQ / 4, sc r NT + t with
// r < RMAX and t < NT, red r RL + lane with r = t / RL < RMAX. Function arrays are indexed by
// constant-bound loops.

const NT: u32 = 128u;
const RMAX: u32 = {{RMAX}}u;
const DQ: u32 = 64u;
// Invocations per row in the block reductions.
const RL: u32 = NT / RMAX;

// Q's chunk as vectors of 4 widths (DQ is a multiple of 4).
var<workgroup> qs: array<vec4<f32>, RMAX * DQ / 4u>;
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
        for (var d0 = 0u; d0 < p.d; d0 += DQ) {
            workgroupBarrier();
            for (var x = t; x < RMAX * DQ; x += NT) {
                let r = x / DQ;
                let dd = d0 + x % DQ;
                var v = 0.0;
                if (r < rows && dd < p.d) {
                    let h = g * p.grp + r % p.grp;
                    v = ld_q(b * p.q_sb + h * p.q_sh + (r / p.grp) * p.q_si + dd);
                }
                qs[x / 4u][x % 4u] = v;
            }
            workgroupBarrier();
            if (j < c1) {
                let kb = k_base + u32(j) * p.k_sj;
                let n = min(DQ, p.d - d0);
                if (n == DQ) {
                    // Four widths per load (`kv_k4`: one 16- or 8-byte load where the lowering
                    // bound K as vectors, four element loads otherwise): each invocation reads
                    // its own key row, so every load is a separate memory transaction and
                    // fewer, wider ones are what counts; eight of them go out together.
                    for (var w = 0u; w < DQ / 32u; w++) {
                        var kv: array<vec4<f32>, 8>;
                        for (var u = 0u; u < 8u; u++) {
                            kv[u] = kv_k4(kb + d0 + 32u * w + 4u * u);
                        }
                        for (var u = 0u; u < 8u; u++) {
                            for (var r = 0u; r < RMAX; r++) {
                                acc[r] += dot(qs[(r * DQ + 32u * w + 4u * u) / 4u], kv[u]);
                            }
                        }
                    }
                } else {
                    for (var dd = 0u; dd < n; dd++) {
                        let kv = kv_k(kb + d0 + dd);
                        for (var r = 0u; r < RMAX; r++) {
                            acc[r] = fma(qs[(r * DQ + dd) / 4u][dd % 4u], kv, acc[r]);
                        }
                    }
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
            // Sixteen value rows in flight at once, for the same reason.
            var k = 0u;
            for (; k + 16u <= n; k += 16u) {
                var vv: array<f32, 16>;
                for (var u = 0u; u < 16u; u++) {
                    vv[u] = kv_v(v_base + u32(jb + i32(k + u)) * p.v_sj + e);
                }
                for (var u = 0u; u < 16u; u++) {
                    for (var r = 0u; r < RMAX; r++) {
                        o[r] = fma(sc[r * NT + k + u], vv[u], o[r]);
                    }
                }
            }
            for (; k < n; k++) {
                let vv = kv_v(v_base + u32(jb + i32(k)) * p.v_sj + e);
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
