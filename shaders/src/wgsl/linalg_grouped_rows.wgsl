// GroupedMatMul row moves of whole words: out row r = row idx[r] of x, or zeros where idx[r] is
// not a row (NONE), one invocation per output word. Sorts x's rows into the padded layout and
// brings the products back to row order when rows are whole words (4- and 8-byte dtypes, or
// 2-byte ones with an even row length): no zeroing pass and no atomics, unlike an element Gather.

struct GroupRowsParams {
    // Words of the output.
    words: u32,
    // Words per row.
    row_words: u32,
    // Rows of x.
    src_rows: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: GroupRowsParams;
@group(0) @binding(1) var<storage, read_write> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = linear_id(gid, nwg);
    if (w >= p.words) {
        return;
    }
    let s = idx[w / p.row_words];
    // Row 0 stands in for a missing row, whose word is discarded.
    let at = min(s, p.src_rows - 1u) * p.row_words + w % p.row_words;
    out[w] = select(0u, x[at], s < p.src_rows);
}
