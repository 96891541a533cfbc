// Wide skinny product (GEMV, batch-1 layers) for an N-contiguous, vector-aligned weight operand B:
// each workgroup of 256 invocations computes ROWS output rows x CT * CW columns over one K range
// (the whole K unless the lowering splits it). CT column invocations each own CW consecutive
// columns, read as one 16-byte vector per k (`vec4<f32>`, or `vec4<u32>` = 8 halves for
// F16/BF16); L = 256 / CT lanes split K, U independent vector loads in flight per lane and
// iteration (the lowering's unroll). The lane sums are added either by a tree in workgroup memory
// (log2 L barriers) or, where the device has subgroups, by shuffles within each subgroup and one
// pass through workgroup memory across subgroups; lane 0 stores the finished columns through the
// common epilogue. Consecutive invocations read
// consecutive vectors of one row, so a subgroup reads whole 32-byte sectors or more.
//
// In bounds by construction (with the argument of `linalg_common.wgsl`): the lowering selects
// this kernel only when B's column stride is 1 and N, B's row stride and every batch stride of
// B are multiples of CW, and B's window is a whole number of vectors. The vector index
// (off_b + k * b_rs + j) / CW for k < K and a column j < N (a multiple of CW) is therefore an
// exact vector of B; columns at or past N read column 0 of the row instead and are never stored.
// `red` is indexed by g * 256 + (an invocation index below 256) with g < G, the tree's partner
// index li + s * CT < 256 because lane < s <= L / 2.
//
// With subgroups, `li` is the invocation's place in its subgroup order (subgroup_id *
// subgroup_size + subgroup_invocation_id) when the subgroups tile the 256 invocations exactly,
// else local_invocation_index with no shuffles (w = 1): either is a permutation of 0..255, and a
// shuffle partner li ^ o (o < w, a power of two) lies in the same subgroup and K lane set (o is
// a multiple of CT). After the shuffles an invocation with li % q < CT (q = max(w, CT)) holds the
// sum of its subgroup's lanes of column c, stored at slot (li / q) * CT + c <= li < 256; lane 0
// adds the 256 / q slots of its column in slot order.

const CT: u32 = {{CT}}u;
const L: u32 = 256u / CT;
const ROWS: u32 = {{ROWS}}u;
const CW: u32 = {{CW}}u;
// k per lane and iteration of the main loop (independent vector loads in flight).
const U: u32 = {{U}}u;

@group(0) @binding(2) var<storage, read_write> b: array<{{BVEC}}>;

var<workgroup> red: array<R4, {{RED}}>;

// Raw storage access of A: `RAW`, `raw_a(i)` and `cvt(x, i) -> R`.
{{RAW}}

// Element (row, k) of A; rows past M re-read row M - 1 (their sums are never stored).
fn a_at(base: u32, row: u32, k: u32) -> R {
    let i = base + k * p.a_cs + min(row, p.m - 1u) * p.a_rs;
    return cvt(raw_a(i), i);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32{{IDS}}) {
{{LI}}
    let c = li % CT;
    let lane = li / CT;
    let j = ((p.tile_n0 + wg.x) * CT + c) * CW;
    let row0 = (p.tile_m0 + wg.y) * ROWS;
    let z = p.batch0 + wg.z;
    let off = batch_offsets(z % p.nbatch);
    let kbeg = (z / p.nbatch) * p.kc;
    let kend = max(kbeg, min(p.k, kbeg + p.kc));
    let bj = (off.y + select(0u, j, j < p.n)) / CW;
    let brs = p.b_rs / CW;
{{DECLS}}
    var k = kbeg + lane;
    // All vector loads of an iteration are issued before any of them is converted or used.
    for (; k + (U - 1u) * L < kend; k = k + U * L) {
{{BODYU}}
    }
    for (; k < kend; k = k + L) {
{{BODY1}}
    }
    let obase = z * p.m * p.n;
{{REDUCE}}
}
