// Merges the splits of `attention_decode.wgsl` (§2.8.1): for each query row, with the splits'
// maxima m_s, sums l_s and unnormalised outputs o_s, M = max_s m_s, L = sum_s l_s e^(m_s - M) and
// O = sum_s o_s e^(m_s - M) / L; a row with M = -inf (no allowed key) outputs 0, a NaN anywhere
// propagates. One workgroup per (value-column chunk x, row (y, z)); invocation t owns column
// x NT + t. Row n = (bg, r) of the scratch is query i = r / grp of head h = g grp + r % grp.

const NT: u32 = 128u;

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let rows = p.grp * p.sq;
    let n = wid.y + wid.z * p.bh_rows;
    let hkv = p.hq / p.grp;
    if (n >= (p.bh / p.grp) * rows) {
        return;
    }
    let e = wid.x * NT + t;
    if (e >= p.dv) {
        return;
    }
    let bg = n / rows;
    let r = n % rows;
    let b = bg / hkv;
    let h = (bg % hkv) * p.grp + r % p.grp;
    let i = r / p.grp;
    var mx = f32_inf(true);
    for (var s = 0u; s < p.splits; s++) {
        mx = max_f32(mx, ld_pm(2u * ((bg * p.splits + s) * rows + r)));
    }
    var val = 0.0;
    if (!(f32_is_inf(mx) && mx < 0.0)) {
        var l = 0.0;
        var acc = 0.0;
        for (var s = 0u; s < p.splits; s++) {
            let row = (bg * p.splits + s) * rows + r;
            let w = exp_f32(ld_pm(2u * row) - mx);
            l = fma(ld_pm(2u * row + 1u), w, l);
            acc = fma(ld_po(row * p.dv + e), w, acc);
        }
        val = acc / l;
    }
    st_o(b * p.o_sb + h * p.o_sh + i * p.o_si + e, val);
}
