// Merges the splits of `attention_decode.wgsl` (§2.8.1): for each query row, with the splits'
// maxima m_s, sums l_s and unnormalised outputs o_s, M = max_s m_s, L = sum_s l_s e^(m_s - M) and
// O = sum_s o_s e^(m_s - M) / L; a row with M = -inf (no allowed key) outputs 0, a NaN anywhere
// propagates. One workgroup per (value-column chunk x, row (y, z)); invocation t owns the CPI
// columns from (x NT + t) CPI: CPI = 2 writes an F16/BF16 output as whole words (no zeroing pass
// before the kernel), CPI = 1 one element through `st_o`. Row n = (bg, r) of the scratch is query i = r / grp of head h = g grp + r % grp.
// The splits' maxima and weights go through workgroup memory (tree reductions), so the loop over
// the splits reads only independent partial outputs.
//
// Trusted (`shaders::attention::flash::combine_module`): the lowering keeps splits <= NT, so
// workgroup indices (t, t + k below NT, s below splits) are in range; rows past the grid's count
// return before any access (a workgroup-uniform exit, before the barriers); scratch reads use
// row indices below pairs * splits * rows with columns e < Dv, and pm indices below twice that,
// which the lowering sizes; the output index is that of an element of the output. With CPI = 2
// the lowering guarantees Dv and the output strides even and a 4-byte aligned window, so e is
// even, e + 1 < Dv and the pair is one whole word of the output.

const CPI: u32 = {{CPI}}u;

const NT: u32 = 128u;

var<workgroup> wm: array<f32, NT>;
var<workgroup> wl: array<f32, NT>;

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let rows = p.grp * p.sq;
    let n = wid.y + wid.z * p.bh_rows;
    let hkv = p.hq / p.grp;
    if (n >= (p.bh / p.grp) * rows) {
        return;
    }
    let bg = n / rows;
    let r = n % rows;
    let row_t = (bg * p.splits + t) * rows + r;
    var mt = f32_inf(true);
    var lt = 0.0;
    if (t < p.splits) {
        mt = ld_pm(2u * row_t);
        lt = ld_pm(2u * row_t + 1u);
    }
    wm[t] = mt;
    workgroupBarrier();
    for (var k = NT / 2u; k > 0u; k = k / 2u) {
        if (t < k) {
            wm[t] = max_f32(wm[t], wm[t + k]);
        }
        workgroupBarrier();
    }
    let mx = wm[0];
    workgroupBarrier();
    let none = f32_is_inf(mx) && mx < 0.0;
    var w = 0.0;
    if (t < p.splits && !none) {
        w = exp_f32(mt - mx);
    }
    wm[t] = w;
    wl[t] = lt * w;
    workgroupBarrier();
    for (var k = NT / 2u; k > 0u; k = k / 2u) {
        if (t < k) {
            wl[t] = wl[t] + wl[t + k];
        }
        workgroupBarrier();
    }
    let l = wl[0];
    let e = (wid.x * NT + t) * CPI;
    if (e >= p.dv) {
        return;
    }
    var val: array<f32, CPI>;
    for (var c = 0u; c < CPI; c++) {
        val[c] = 0.0;
        if (!none) {
            // Eight splits' partial outputs in flight at once (each load is independent).
            let at = (bg * p.splits * rows + r) * p.dv + e + c;
            let step = rows * p.dv;
            var acc = 0.0;
            var s = 0u;
            for (; s + 8u <= p.splits; s += 8u) {
                var w: array<f32, 8>;
                for (var u = 0u; u < 8u; u++) {
                    w[u] = ld_po(at + (s + u) * step);
                }
                for (var u = 0u; u < 8u; u++) {
                    acc = fma(w[u], wm[s + u], acc);
                }
            }
            for (; s < p.splits; s++) {
                acc = fma(ld_po(at + s * step), wm[s], acc);
            }
            val[c] = acc / l;
        }
    }
    let b = bg / hkv;
    let h = (bg % hkv) * p.grp + r % p.grp;
    let at = b * p.o_sb + h * p.o_sh + (r / p.grp) * p.o_si + e;
{{STORE}}
}
