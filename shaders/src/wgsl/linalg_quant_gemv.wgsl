// Quantised matmul (QuantMatMul, §2.6.5) with the weight kept quantised in memory: each
// workgroup of 64 invocations computes ROWS rows x one column n of the output. Its invocations
// stride over K in chunks of CH consecutive elements (one 32-element GGML block per chunk), decode
// each element W[n, k] of the chunk with `wq` (the format's formula of §2.6.7, in f32 and in the
// spec's product order) and multiply it into the ROWS rows of x. Partial sums are f32 and added
// by a tree in workgroup memory; invocation r < ROWS stores row r. Rows past M re-read row M - 1
// and are never stored. Loops bounded (`LOOPS_BOUNDED_HEADER`), not trusted: the chunk loop steps
// by QWG from below ceil(K / CH) and the lowering keeps K + CH within 32 bits, the k loop runs
// at most CH times, the others a constant number; indices rely on the runtime bounds checks.
//
// QuantGroupedMatMul (§2.6.6) runs the same kernel over rows sorted by expert into tiles of ROWS
// rows (`linalg_grouped_*.wgsl`): EXPERT then gives the expert e of the workgroup's tile, and
// W[n, k] of expert e is row e · N + n of the weight inputs, laid out [E, N, ...]. For
// QuantMatMul EXPERT is 0.

struct QuantParams {
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
    // Workgroups that do work: N x ceil(M / ROWS).
    groups: u32,
    pad0: u32,
}

const QWG: u32 = 64u;
const ROWS: u32 = 4u;
const CH: u32 = 32u;

@group(0) @binding(0) var<uniform> p: QuantParams;
{{TENSORS}}
var<workgroup> red: array<f32, 256>;

// W[n, k] of expert e, decoded (n counts rows over every expert: e · N + column).
fn wq(n: u32, k: u32, e: u32) -> f32 {
    return {{DECODE}};
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // Ids past `groups` fill the last row of a grid folded into 2-D.
    let g = wg.x + wg.y * nwg.x;
    if (g >= p.groups) {
        return;
    }
    let n = g % p.n;
    let row0 = (g / p.n) * ROWS;
    // The lowering keeps E · N within 32 bits.
    let e = {{EXPERT}};
    let wn = e * p.n + n;
    var acc = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
    // The lowering keeps K + CH within 32 bits.
    let chunks = (p.k + CH - 1u) / CH;
    for (var c = lid; c < chunks; c = c + QWG) {
        let k0 = c * CH;
        let k1 = min(p.k, k0 + CH);
        for (var k = k0; k < k1; k = k + 1u) {
            let w = wq(wn, k, e);
            for (var r = 0u; r < ROWS; r = r + 1u) {
                let row = min(row0 + r, p.m - 1u);
                acc[r] = acc[r] + ld_x(row * p.k + k) * w;
            }
        }
    }
    for (var r = 0u; r < ROWS; r = r + 1u) {
        red[r * QWG + lid] = acc[r];
    }
    workgroupBarrier();
    for (var s = QWG / 2u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            for (var r = 0u; r < ROWS; r = r + 1u) {
                red[r * QWG + lid] = red[r * QWG + lid] + red[r * QWG + lid + s];
            }
        }
        workgroupBarrier();
    }
    if (lid < ROWS && row0 + lid < p.m) {
        st_out((row0 + lid) * p.n + n, red[lid * QWG]);
    }
}
