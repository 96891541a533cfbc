// TopK of long rows (§2.5.4), shared part: a bitonic sort of (key, index) pairs held in temps,
// row r at [r·pow2, (r+1)·pow2). Keys are the order-preserving keys of reduce_topk.wgsl
// (complemented for `largest`); padding slots hold (KMAX, NONE) and sort last. Stages of width
// kk up to SORT_N, and the last log2(SORT_N) steps of wider stages, run in workgroup memory;
// the steps with a distance j >= SORT_N run as one global compare-exchange dispatch each.

struct TopkBigParams {
    rows: u32,
    len: u32,
    inner: u32,
    k: u32,
    pow2: u32,
    largest: u32,
    kk_lo: u32,
    kk_hi: u32,
    j: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: TopkBigParams;

alias R = {{R}};
alias K = {{K}};

const SORT_N: u32 = {{SORT_N}}u;
const KMAX: K = {{KMAX}};
const NONE: u32 = 0xffffffffu;

// Order-preserving unsigned key of v.
fn key(v: R) -> K {
    {{KEY}}
}

// Whether (ka, ia) sorts after (kb, ib): keys ascending, ties to the smaller index.
fn after(ka: K, ia: u32, kb: K, ib: u32) -> bool {
    return ka > kb || (ka == kb && ia > ib);
}
