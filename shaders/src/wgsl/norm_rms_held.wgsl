// RmsNorm of one row per workgroup, single pass: the row (K elements per invocation, element
// lid + k WG in register v<k>, straight-line code generated per k) is read once from memory; then
// as norm_rms.wgsl, rho = 1 / sqrt(sum(x^2) / H + eps) (+inf when that is 0) and
// y = x * rho * gamma + beta.
//
// Trusted (f32-family dtypes; see `shaders::norm::module_held`): w < p.rows is checked first, and
// the lowering guarantees rows * len * inner = n < 2^31 (`MAX_ELEMENTS`), so row_base(w) and
// every element index base + i inner with i < p.len are at most n - 1 without wrapping; each
// element is read or written only under `i < p.len` (i = lid + k WG < 2^13); the lowering checks
// that x and out hold n elements and gamma and beta len (they are indexed by i < len).
// The four-wide form (`module_held4`: F32, inner = 1, len mod 4 = 0) indexes vectors instead:
// base4 + i with i < len4 = len / 4 and base4 = w len4, at most n / 4 - 1, in arrays of n / 4
// vectors (gamma and beta: len4).
// Workgroup arrays are indexed by lid < 256, by constants, or by clamped subgroup ids; the
// reduction loops have constant or clamped bounds; the helpers (max_f32, exp_f32, log,
// f32_is_nan, f32_is_inf) have no arrays or loops.

fn row_beta(i: u32) -> {{BT}} {
    return {{BETA}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: RowIds) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var s = F(0);
    {{LOAD}}
    let den = sqrt(row_sum(ids, lid, s) / F(p.len) + F(p.eps));
    let rho = select(F(1) / den, finf(), den == F(0));
    {{STORE}}
}
