// GroupedMatMul grouping, step 2: one workgroup turns the per-expert row counts into the first
// tile of each expert, tstart[e] = Σ_{e' < e} ceil(count_e' / P), and tstart[E] = the tiles in
// use. Invocation i walks the experts i·chunk .. (i + 1)·chunk (chunk = ceil(E / 256)): it sums
// its tiles, the workgroup scans the 256 sums (Hillis-Steele in workgroup memory), and the walk
// is repeated to write each expert's start.

@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> tstart: array<u32>;

var<workgroup> sums: array<u32, 256>;

// ceil(count_e / P), without the wrap of count_e + P - 1 near 2^32.
fn tiles_of(e: u32) -> u32 {
    let c = counts[e];
    return c / p.rows_per_tile + select(0u, 1u, c % p.rows_per_tile != 0u);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) i: u32) {
    let first = min(i * p.chunk, p.e);
    let last = min(first + p.chunk, p.e);
    var own = 0u;
    for (var e = first; e < last; e = e + 1u) {
        own = own + tiles_of(e);
    }
    sums[i] = own;
    workgroupBarrier();
    for (var d = 1u; d < 256u; d = d * 2u) {
        let add = select(0u, sums[i - min(d, i)], i >= d);
        workgroupBarrier();
        sums[i] = sums[i] + add;
        workgroupBarrier();
    }
    // Exclusive start of this invocation's experts.
    var at = sums[i] - own;
    for (var e = first; e < last; e = e + 1u) {
        tstart[e] = at;
        at = at + tiles_of(e);
    }
    if (i == 255u) {
        tstart[p.e] = sums[255];
    }
}
