// Quantised GEMM: staging of the x tile element by element (any K; see
// `linalg_quant_gemm_common.wgsl`).

// Stages x[row0 .. row0 + TM, k0 .. k0 + BK] (zeros outside x): invocation li takes every NT-th
// element, consecutive invocations consecutive k.
fn stage_x(row0: u32, k0: u32, li: u32) {
    for (var r = 0u; r < TM * BK / NT; r = r + 1u) {
        let idx = li + r * NT;
        let row = row0 + idx / BK;
        let k = k0 + idx % BK;
        var v = 0.0;
        if (row < p.m && k < p.k) {
            v = ld_x(row * p.k + k);
        }
        put_x(idx / BK, idx % BK, v);
    }
}
