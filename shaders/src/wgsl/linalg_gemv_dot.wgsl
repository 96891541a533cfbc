// Wide skinny product (GEMV) for a K-contiguous, vector-aligned weight operand B (x · Wᵀ with W
// stored [N, K], as LLM decode layers keep it): each workgroup of 256 invocations computes ROWS
// output rows x CT output columns over one K range (the whole K unless the lowering splits it).
// Column c of the workgroup is the dot product of a contiguous row of W with the rows of A: its
// L = 256 / CT consecutive invocations (lanes) read consecutive 16-byte vectors of that row
// (`vec4<f32>`, or `vec4<u32>` = 8 halves for F16/BF16), U independent vectors in flight per lane
// and iteration, so a subgroup reads whole 32-byte sectors or more. Each lane keeps one R4 sum per
// row; the lane sums are added by a tree in workgroup memory (log2 L barriers) or, where the
// device has subgroups, by shuffles within each subgroup and one pass through workgroup memory;
// lane 0 stores through the common epilogue. Accumulation is in f32 (R).
//
// In bounds by construction (with the argument of `linalg_common.wgsl`): the lowering selects
// this kernel only when B's row (k) stride is 1 and K, B's column stride, every batch stride of B
// and the K split are multiples of CW, and B's window is a whole number of vectors. The vector
// index (off_b + j * b_cs + k) / CW for a k < K that is a multiple of CW and a column j < N is
// therefore an exact vector of B; columns at or past N read column 0 instead and are never
// stored. `red` is indexed by r * 256 + (an index below 256) with r < ROWS; the tree's partner
// li + s < 256 because lane < s <= L / 2 and li = c * L + lane. With subgroups, `li` is a
// permutation of 0..255 as in `linalg_gemv.wgsl`, a shuffle partner li ^ o (o < min(w, L)) lies
// in the same subgroup and column, and the slot li / q (q = min(w, L)) is below 256. With
// CT >= 2, lane 0 of each even column c also reads column c + 1's sums: its slots (c + 1) * L
// (tree) or (c + 1) * (L / q) + i (subgroups) are below CT * L = 256. `a_pair` (F16/BF16, A
// K-contiguous with word-aligned rows) reads the word of elements k, k + 1 for an even k < K.

const CT: u32 = {{CT}}u;
const L: u32 = 256u / CT;
const ROWS: u32 = {{ROWS}}u;
const CW: u32 = {{CW}}u;
// Vectors per lane and iteration of the main loop (independent loads in flight).
const U: u32 = {{U}}u;

@group(0) @binding(2) var<storage, read_write> b: array<{{BVEC}}>;

var<workgroup> red: array<R, {{RED}}>;

// Raw storage access of A: `RAW`, `raw_a(i)` and `cvt(x, i) -> R`.
{{RAW}}

// Element (row, k) of A; rows past M re-read row M - 1 (their sums are never stored).
fn a_at(base: u32, row: u32, k: u32) -> R {
    let i = base + k * p.a_cs + min(row, p.m - 1u) * p.a_rs;
    return cvt(raw_a(i), i);
}

// Stores the finished dot product v of output (row gi, column gj), when it lies in the matrix.
fn store1(obase: u32, bbase: u32, gi: u32, gj: u32, v: R) {
    if (gi < p.m && gj < p.n) {
        st_out(obase + gi * p.n + gj, finish(bbase + gi * p.bias_rs + gj * p.bias_cs, v));
    }
}

// Stores the finished dot products x, y of output (row gi, columns gj, gj + 1) that lie in the
// matrix: as one whole word (`store_pair`) where both do and the pair starts on a word, so that
// packed outputs need no zeroing when N is even (see `GemvTile::whole_words`).
fn store2(obase: u32, bbase: u32, gi: u32, gj: u32, x: R, y: R) {
    if (gi >= p.m) {
        return;
    }
    let o = obase + gi * p.n + gj;
    let bi = bbase + gi * p.bias_rs + gj * p.bias_cs;
    if (gj + 1u < p.n && (o & 1u) == 0u) {
        store_pair(o, finish(bi, x), finish(bi + p.bias_cs, y));
        return;
    }
    if (gj < p.n) {
        st_out(o, finish(bi, x));
    }
    if (gj + 1u < p.n) {
        st_out(o + 1u, finish(bi + p.bias_cs, y));
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32{{IDS}}) {
{{LI}}
    let c = li / L;
    let lane = li % L;
    let j = (p.tile_n0 + wg.x) * CT + c;
    let row0 = (p.tile_m0 + wg.y) * ROWS;
    let z = p.batch0 + wg.z;
    let off = batch_offsets(z % p.nbatch);
    let kbeg = (z / p.nbatch) * p.kc;
    let kend = max(kbeg, min(p.k, kbeg + p.kc));
    // Vector index of element (k = 0, column j) of B, and the vector range of this split.
    let bj = (off.y + select(0u, j, j < p.n) * p.b_cs) / CW;
    let vend = kend / CW;
{{DECLS}}
    var kv = kbeg / CW + lane;
    // All vector loads of an iteration are issued before any of them is converted or used.
    for (; kv + (U - 1u) * L < vend; kv = kv + U * L) {
{{BODYU}}
    }
    for (; kv < vend; kv = kv + L) {
{{BODY1}}
    }
    let obase = z * p.m * p.n;
{{REDUCE}}
}
