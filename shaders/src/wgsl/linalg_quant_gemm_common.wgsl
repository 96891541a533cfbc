// Quantised GEMM (QuantMatMul, §2.6.5, for more rows of x than the decode GEMV takes): the part
// shared by the scalar kernel (`linalg_quant_gemm.wgsl`) and the tensor-core kernel
// (`linalg_quant_gemm_coop.wgsl`). Each workgroup computes a TM x TN tile of the output; per
// K-step of BK = 32 elements it stages the x tile (`stage_x`) and the decoded W tile
// (`stage_w`) in workgroup memory through the kernel's `put_x` / `put_w` (x by
// `linalg_quant_gemm_x.wgsl`, or `linalg_quant_gemm_xvec.wgsl` with 16-byte loads), so each weight is
// decoded once per workgroup and used by TM rows, and W stays quantised in device memory.
//
// W is decoded by the item functions of the decode GEMV (`linalg_quant_vec_ggml.wgsl`,
// `linalg_quant_vec_scale.wgsl`: whole words, scales decoded once per item, the exact f32
// weights of §2.6.7). K-step s touches IPS consecutive items of each row, from item
// (s / R) · IPS: R is 1 where an item's elements lie within 32 consecutive k (every format but
// the K-quants whose items span 64 (Q4_K, Q5_K: R = 2) or 128 elements (Q2_K, Q3_K, Q6_K:
// R = 4), of which a step keeps the groups of 4 elements inside it). Items past the whole units
// (a ragged K of the scale-tensor formats) are decoded element by element (`wq`), zero past K.
// Rows past M stage zeros and are never stored; columns past N decode row N - 1 and are never
// stored. Loops bounded (`LOOPS_BOUNDED_HEADER`), not trusted: every loop has a constant trip
// count or steps a counter by one to `p.steps` (the lowering keeps K + BK within 32 bits);
// indices rely on the runtime bounds checks.

struct QuantGemmParams {
    // Rows of x (the product of its leading dims).
    m: u32,
    // Output columns (rows of W).
    n: u32,
    // Contraction length.
    k: u32,
    // Bytes per row of the weight input w.
    wrow: u32,
    // Elements per row of the scale input (0: one scale for the whole tensor).
    srow: u32,
    // Block size B of the scale-tensor formats (elements per scale).
    qb: u32,
    // Items per row of W in whole units.
    items: u32,
    // Row tiles: ceil(M / TM).
    mtiles: u32,
    // Workgroups that do work: row tiles x column tiles.
    groups: u32,
    // K-steps: ceil(K / BK).
    steps: u32,
    pad0: u32,
    pad1: u32,
}

const BK: u32 = 32u;
const NT: u32 = {{NT}}u;
// Items per unit; items of a row one K-step touches; K-steps per run of IPS items.
const G: u32 = {{G}}u;
const IPS: u32 = {{IPS}}u;
const R: u32 = {{R}}u;

@group(0) @binding(0) var<uniform> p: QuantGemmParams;
{{TENSORS}}

// W[n, k] of expert e (0 here: one weight), decoded element by element.
fn wq(n: u32, k: u32, e: u32) -> f32 {
    return {{DECODE}};
}

// W[n, k] decoded, or 0 past K.
fn wq0(n: u32, k: u32) -> f32 {
    if (k < p.k) {
        return wq(n, k, 0u);
    }
    return 0.0;
}

// Stages the decoded W[col0 .. col0 + TN, k0 .. k0 + BK] of K-step s (k0 = s · BK) as groups of
// 4 elements `put_w(kk, c, v)` (elements k0 + kk .. k0 + kk + 3 of column col0 + c):
// invocation li takes every NT-th (column, item) pair, consecutive invocations consecutive
// items of a row.
fn stage_w(col0: u32, s: u32, li: u32) {
    let k0 = s * BK;
    for (var r = 0u; r < TN * IPS / NT; r = r + 1u) {
        let idx = li + r * NT;
        let c = idx / IPS;
        let n = min(col0 + c, p.n - 1u);
        let it = (s / R) * IPS + idx % IPS;
        let u = it / G;
        let i = it % G;
        if (it < p.items) {
            let v = {{ITEM}}(n, n * p.wrow, u, i);
{{WHOLE}}
        } else {
{{RAGGED}}
        }
    }
}
