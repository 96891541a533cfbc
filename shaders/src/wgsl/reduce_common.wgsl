// Reduce family, shared part: params, the op (identity, combine, finish) and index decoding.
//
// The lowering merges adjacent axes of the same kind, so the input is seen as "kept" axes (one
// output row per kept position) and "reduced" axes (the row's elements), each with its strides
// in the input. Reduced axes need not be trailing or contiguous.

struct ReduceParams {
    // output rows of this pass
    rows: u32,
    // reduced elements per row in this pass
    red: u32,
    // workgroups per row (rows kernel); 1 when one workgroup covers a whole row
    chunks: u32,
    // reduced elements per workgroup (rows kernel)
    chunk_len: u32,
    // the original reduced count, for Mean
    count: u32,
    // number of kept / reduced axes after merging
    nk: u32,
    nr: u32,
    pad0: u32,
    kdims: array<vec4<u32>, 2>,
    kstr: array<vec4<u32>, 2>,
    rdims: array<vec4<u32>, 2>,
    rstr: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: ReduceParams;
{{TENSORS}}

// The accumulator type (the register type of the input dtype: f32 for F16/BF16, i32 for I8, ...):
// integer sums and products wrap in it and are truncated to the dtype's width on store.
alias ACC = {{ACC}};

fn identity() -> ACC {
    return {{IDENTITY}};
}

fn combine(a: ACC, b: ACC) -> ACC {
    return {{COMBINE}};
}

fn finish(a: ACC) -> ACC {
    return {{FINISH}};
}

// Input offset of the first element of output row `row`.
fn kept_offset(row: u32) -> u32 {
    var rem = row;
    var off = 0u;
    for (var k = i32(p.nk) - 1; k >= 0; k = k - 1) {
        let q = u32(k) >> 2u;
        let r = u32(k) & 3u;
        let d = p.kdims[q][r];
        off = off + (rem % d) * p.kstr[q][r];
        rem = rem / d;
    }
    return off;
}

// Input offset (relative to the row's) of reduced element `e`.
fn red_offset(e: u32) -> u32 {
    if (p.nr == 1u) {
        return e * p.rstr[0][0];
    }
    var rem = e;
    var off = 0u;
    for (var k = i32(p.nr) - 1; k >= 0; k = k - 1) {
        let q = u32(k) >> 2u;
        let r = u32(k) & 3u;
        let d = p.rdims[q][r];
        off = off + (rem % d) * p.rstr[q][r];
        rem = rem / d;
    }
    return off;
}
