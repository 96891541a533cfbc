// Shared by the grouping kernels of GroupedMatMul (count, scan, tiles, place): the params and the
// expert index rule. Rows are sorted by expert into a padded layout: expert e owns the row tiles
// tstart[e] .. tstart[e + 1] (ceil(count_e / P) tiles of P rows each, in expert order), so that
// every tile of the grouped GEMM holds rows of one expert; rows past an expert's count in its
// last tile, and every tile past tstart[E], are padding (zero rows, never read back).
//
// Every index a kernel forms is below the length of the array it addresses whatever the expert
// ids hold: resolved experts are below E, slots below count_e, padded positions are checked
// against the padded row count before they are stored or used, and the binary search of
// `linalg_grouped_tiles.wgsl` only returns experts below E.

struct GroupParams {
    // Rows of x (M).
    m: u32,
    // Experts (E).
    e: u32,
    // Rows per tile (P).
    rows_per_tile: u32,
    // Tiles of the padded layout (T, a static upper bound of the tiles in use).
    tiles: u32,
    // Unit of the tile table: elements of one expert's weight matrix (K · N) for the weight
    // offsets of GroupedMatMul, 1 for the expert ids of QuantGroupedMatMul.
    expert_elems: u32,
    // Rows of the padded layout (T · P).
    padded_rows: u32,
    // Threads of a per-expert walk in the scan (ceil(E / 256)).
    chunk: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: GroupParams;

// A position or row that does not exist (never below the sizes, which are below 2^32 - 1).
const NONE: u32 = 0xffffffffu;
// Returned for an expert outside [-E, E).
const OUT_OF_RANGE: u32 = 0xffffffffu;

// The index rule of §1.6 on sign, 32-bit magnitude m and whether the magnitude needs more than
// 32 bits (the same rule as `indexing_common.wgsl`): non-negative i is expert i when i < a;
// negative i = -m is expert a - m when m <= a.
fn resolve_parts(negative: bool, m: u32, big: bool, a: u32) -> u32 {
    if (big) {
        return OUT_OF_RANGE;
    }
    if (!negative) {
        return select(OUT_OF_RANGE, m, m < a);
    }
    return select(OUT_OF_RANGE, a - m, m <= a);
}
