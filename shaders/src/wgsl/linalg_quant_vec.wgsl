// Quantised GEMV for decode (QuantMatMul, §2.6.5, with M <= 8 rows of x): each workgroup of 256
// invocations computes all MR rows of x for CW = (256 / L) · C output columns, so every weight
// byte is read once. A lane group of L lanes (one subgroup where the device allows) owns C
// columns. A row of W is cut into units of UE elements (a block, or for the scale-tensor formats
// 8 elements) and each unit into G items of XG groups of 4 elements; lane `lane` takes items
// lane, lane + L, ... of the row, so consecutive lanes read consecutive quant words and
// neighbouring x vectors. For its item a lane loads the XG x vectors of every row once
// (registers), then for each of its C columns decodes the item (`item`: whole u32 words read
// with `ww`, a funnel shift of two neighbouring words where a block is not 4-byte aligned; the
// block's scales decoded for the item; 4 or 8 codes per word unpacked with shifts and masks into
// the exact f32 weights of §2.6.7 in the spec's product order) and adds its dot products with the
// MR rows to the accumulators. Elements past the last whole unit (a ragged K) go through `wq`,
// the per-element decode expression. The lane sums of a column are added by `col_sum` (subgroup
// operations where the lanes are one subgroup, else a tree in workgroup memory); lane 0 stores.
// Columns past N read row N - 1 and are never stored. Integer codes become floats through the
// exponent trick (`f4`) rather than integer conversions, which run at a fraction of the FMA rate
// on some GPUs. Loops bounded (`LOOPS_BOUNDED_HEADER`), not trusted: every loop either has a
// constant trip count or steps a counter by L from below its bound (items, K), and the lowering
// keeps K + 256 (items never exceed K) within 32 bits, so no counter wraps; indices rely on the
// runtime bounds checks.

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
    // Items per row of W (whole units x G).
    items: u32,
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
// Columns per lane group, and per workgroup.
const C: u32 = {{C}}u;
const CW: u32 = (256u / L) * C;
// Elements per unit, items per unit, groups of 4 elements per item.
const UE: u32 = {{UE}}u;
const G: u32 = {{G}}u;
const XG: u32 = {{XG}}u;

@group(0) @binding(0) var<uniform> p: QuantVecParams;
{{TENSORS}}
// x as 4-vectors of f32: `xv(i)` is x[i .. i + 4] for an i that is a multiple of 4 (or any i
// where x is read element by element), and `ld_x(i)` one element.
{{XV}}


// W[n, k] of expert e (0 here: one weight), decoded element by element.
fn wq(n: u32, k: u32, e: u32) -> f32 {
    return {{DECODE}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: ColIds) {
    // Ids past `groups` fill the last row of a grid folded into 2-D; they still take part in
    // the reduction (its barriers), reading column N - 1 and storing nothing.
    let g = min(wg.x + wg.y * nwg.x, p.groups);
    let cl = col_lane(ids, lid);
    let col0 = g * CW + cl.x * C;
    let lane = cl.y;
    // The MR x C dot products of this lane: row r, column c at r * C + c. The item loop's body is
    // rendered unrolled (`ITEMBODY`: x vectors as `let`s, constant indices), so that the compiler
    // keeps the accumulators and x in registers: written as loops over the rows and columns it
    // was left rolled at 8 rows, with the arrays in local memory (10x slower on an H200).
    var acc: array<f32, {{ACC}}>;
    for (var it = lane; it < p.items; it = it + L) {
        let u = it / G;
        let i = it % G;
{{ITEMBODY}}
    }
    for (var k = p.kfull + lane; k < p.k; k = k + L) {
{{TAILBODY}}
    }
{{STOREBODY}}
}
