// Quantised GEMM: staging of the x tile from whole 16-byte vectors of XV elements (see
// `linalg_quant_gemm_common.wgsl`), for K a multiple of 8 and x's window whole vectors: a vector
// then lies entirely inside K or entirely past it, and one load replaces XV.

const XV: u32 = {{XV}}u;

@group(0) @binding(1) var<storage, read_write> x: array<vec4<u32>>;

// Puts the XV elements of vector w at (row, kk .. kk + XV) of the x tile.
fn put_xv(row: u32, kk: u32, w: vec4<u32>) {
{{PUT_XV}}
}

// Stages x[row0 .. row0 + TM, k0 .. k0 + BK] (zeros outside x): invocation li takes every NT-th
// vector, consecutive invocations consecutive vectors of a row.
fn stage_x(row0: u32, k0: u32, li: u32) {
    for (var r = 0u; r < TM * BK / (XV * NT); r = r + 1u) {
        let idx = li + r * NT;
        let row = row0 + idx / (BK / XV);
        let kk = XV * (idx % (BK / XV));
        var w = vec4<u32>();
        if (row < p.m && k0 + kk < p.k) {
            w = x[(row * p.k + k0 + kk) / XV];
        }
        put_xv(idx / (BK / XV), kk, w);
    }
}
