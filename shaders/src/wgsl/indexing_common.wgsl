// Shared by the indexing kernels (Gather, ScatterAdd, GatherBackward): the params and the index
// rule of SPEC §1.6. Every kernel views the data as (outer, a, inner) around the indexed axis and
// the gathered side (output of Gather, updates of ScatterAdd, dy of GatherBackward) as
// (outer, nidx, inner). Index tensors are read as u32 words (an I64 index as two words), so no
// 64-bit shader feature is needed and no index value is ever converted through f32.

struct IndexingParams {
    // Invocations to run (elements of the walked tensor).
    n: u32,
    // Size of the indexed axis.
    a: u32,
    // Product of the dims after the axis.
    inner: u32,
    // Number of indices.
    nidx: u32,
}

@group(0) @binding(0) var<uniform> p: IndexingParams;

// Returned for an index outside [-a, a): never a valid row since a < 2^32.
const OUT_OF_RANGE: u32 = 0xffffffffu;

// Resolves an index given as sign, 32-bit magnitude m and whether the magnitude needs more than
// 32 bits: non-negative i is a row when i < a; negative i = -m is row a - m when m <= a.
fn resolve_parts(negative: bool, m: u32, big: bool, a: u32) -> u32 {
    if (big) {
        return OUT_OF_RANGE;
    }
    if (!negative) {
        return select(OUT_OF_RANGE, m, m < a);
    }
    return select(OUT_OF_RANGE, a - m, m <= a);
}
