// Quantised GEMV for decode (QuantMatMul, §2.6.5, with M <= 8 rows of x): each workgroup of 256
// invocations computes all MR rows of x for CW = 256 / L output columns, L lanes per column, so
// every weight byte is read once. A row of W is cut into units (a block or part of a block of the
// format, `unit`): lane `lane` takes units lane, lane + L, ..., so consecutive lanes read
// consecutive bytes of the row. A unit reads its quantised bytes as whole u32 words (`ww`: two
// neighbouring words and a funnel shift where the row or block start is not 4-byte aligned),
// decodes its scales once, unpacks 4 or 8 codes per word with shifts and masks into the exact f32
// weights of §2.6.7 (the spec's product order) and multiplies them, four at a time, into the MR
// rows of x held in registers (`acc4`). Elements a unit cannot take (the tail of a K that is not
// a multiple of the unit, a unit whose elements have different scales) go through `wq`, the
// per-element decode expression. The lane sums of a column are added by `col_sum` (subgroup
// shuffles where the lanes of a column are one subgroup, else a tree in workgroup memory); lane 0
// stores row r of column n. Columns past N read row N - 1 and are never stored. Not trusted:
// indices rely on the runtime bounds checks.

struct QuantVecParams {
    // Rows of x (MR; the kernel is rendered for it).
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
    // Whole units per row of W.
    units: u32,
    // Elements of K covered by the whole units (units x elements per unit).
    kfull: u32,
    // Workgroups that do work: ceil(N / CW).
    groups: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

const MR: u32 = {{MR}}u;
const L: u32 = {{L}}u;
const CW: u32 = 256u / L;

@group(0) @binding(0) var<uniform> p: QuantVecParams;
{{TENSORS}}
// x as 4-vectors of f32: `xv(i)` is x[i .. i + 4] for an i that is a multiple of 4 (or any i
// where x is read element by element), and `ld_x(i)` one element.
{{XV}}

// The MR dot products of this lane.
var<private> acc: array<f32, MR>;

// Adds the four weights wv of elements k .. k + 3 times x into every row.
fn acc4(k: u32, wv: vec4<f32>) {
    for (var r = 0u; r < MR; r = r + 1u) {
        acc[r] = acc[r] + dot(wv, xv(r * p.k + k));
    }
}

// The u32 at byte o of w, any alignment: a funnel shift of the two words it straddles.
fn ww(o: u32) -> u32 {
    let i = o >> 2u;
    let sh = (o & 3u) * 8u;
    if (sh == 0u) {
        return w[i];
    }
    return (w[i] >> sh) | (w[i + 1u] << (32u - sh));
}

// The f16 at an even byte o of w, converted exactly.
fn wh(o: u32) -> f32 {
    return f16_bits_to_f32(w[o >> 2u] >> ((o & 2u) * 8u));
}

// The four bytes of word v, as a vector (byte 0 first).
fn bytes4(v: u32) -> vec4<u32> {
    return (vec4<u32>(v) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u);
}

// The four bytes of word v read as I8, as f32.
fn sbytes4(v: u32) -> vec4<f32> {
    return vec4<f32>(vec4<i32>(vec4<u32>(v) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u));
}

// W[n, k] of expert e (0 here: one weight), decoded element by element.
fn wq(n: u32, k: u32, e: u32) -> f32 {
    return {{DECODE}};
}

// Elements k0 .. k0 + cnt - 1 of row n (all below K), one at a time.
fn slow(n: u32, k0: u32, cnt: u32) {
    for (var k = k0; k < k0 + cnt; k = k + 1u) {
        let v = wq(n, k, 0u);
        for (var r = 0u; r < MR; r = r + 1u) {
            acc[r] = acc[r] + ld_x(r * p.k + k) * v;
        }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: ColIds) {
    // Ids past `groups` fill the last row of a grid folded into 2-D; they still take part in
    // the reduction (its barriers), reading column N - 1 and storing nothing.
    let g = min(wg.x + wg.y * nwg.x, p.groups);
    let cl = col_lane(ids, lid);
    let col = g * CW + cl.x;
    let lane = cl.y;
    let n = min(col, p.n - 1u);
    let rb = n * p.wrow;
    for (var r = 0u; r < MR; r = r + 1u) {
        acc[r] = 0.0;
    }
    for (var u = lane; u < p.units; u = u + L) {
        {{UNIT}}(n, rb, u);
    }
    for (var k = p.kfull + lane; k < p.k; k = k + L) {
        slow(n, k, 1u);
    }
    for (var r = 0u; r < MR; r = r + 1u) {
        let s = col_sum(ids, cl, acc[r]);
        if (lane == 0u && col < p.n && g < p.groups) {
            st_out(r * p.n + col, s);
        }
    }
}
